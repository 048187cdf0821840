// Wire shapes of the account area: Account, Workspace, WorkspaceMember, APIKey
// (spec 2.4-2.7) and their request bodies.
import { Type, type Static } from '@sinclair/typebox';
import {
  AccountResourceMetadata,
  BareMetadata,
  CreateMetadata,
  Description,
  Profile,
  ResourceMetadata,
  Strict,
  UpdateBody,
} from './common.schema';

export const WorkspaceStatusSchema = Type.Union([
  Type.Literal('STATUS_ENABLED'),
  Type.Literal('STATUS_DISABLED'),
  Type.Literal('STATUS_ARCHIVED'),
]);

export const Workspace = Type.Object({
  metadata: AccountResourceMetadata,
  spec: Type.Object({ description: Type.Optional(Type.String()) }),
  status: Type.Optional(WorkspaceStatusSchema),
});
export type Workspace = Static<typeof Workspace>;

export const ApiKeyStateSchema = Type.Union([
  Type.Literal('STATE_UNSPECIFIED'),
  Type.Literal('STATE_ENABLED'),
  Type.Literal('STATE_DISABLED'),
]);

export const ApiKey = Type.Object({
  metadata: Type.Union([ResourceMetadata, AccountResourceMetadata]),
  spec: Type.Object({
    token: Type.Optional(Type.String({ description: 'Returned only on creation and rotation' })),
    description: Type.Optional(Type.String()),
    permissions: Type.Array(Type.String()),
    system: Type.Boolean(),
  }),
  info: Type.Optional(
    Type.Object({
      createdBy: Type.Optional(Profile),
      workspacesPreview: Type.Optional(Type.Array(BareMetadata)),
      workspacesTotal: Type.Optional(Type.Integer()),
    }),
  ),
  state: ApiKeyStateSchema,
});
export type ApiKey = Static<typeof ApiKey>;

export const Account = Type.Object({
  metadata: AccountResourceMetadata,
  spec: Type.Object({
    billingEmail: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    domain: Type.Optional(Type.String()),
    workspaces: Type.Optional(Type.Array(Workspace)),
  }),
  info: Type.Object({
    webhookEventsHmacSecret: Type.Optional(Type.String()),
    globalApiKey: Type.Optional(ApiKey),
  }),
});
export type Account = Static<typeof Account>;

export const WebhookSigningKey = Type.Object({ webhookEventsHmacSecret: Type.String() });

/** `GET /v1/profile`: the caller's Profile, with what its credential may do and where (never a token). */
export const CallerProfile = Type.Object({
  metadata: AccountResourceMetadata,
  spec: Profile.properties.spec,
  info: Type.Object({
    admin: Type.Boolean({ description: 'Whether the caller holds the admin role (the global key, USER profiles marked admin)' }),
    scopes: Type.Array(Type.String(), { description: 'The scopes granted (`*`: every scope)' }),
    workspaceIds: Type.Optional(Type.Array(Type.String(), {
      description: 'The workspaces the caller may act in: a workspace key its own, a user those it is an active member of. '
        + 'Absent when the caller spans every workspace of the account (the global key, admin users).',
    })),
    apiKey: Type.Optional(Type.Object({
      id: Type.String(),
      name: Type.String(),
      global: Type.Boolean({ description: "True for the account's global key" }),
    }, { description: 'The API key the caller authenticated with' })),
  }),
});
export type CallerProfile = Static<typeof CallerProfile>;

export const WorkspaceMember = Type.Object({
  actorId: Type.String(),
  profileId: Type.String(),
  addedAt: Type.Optional(Type.String({ format: 'date-time' })),
  email: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});
export type WorkspaceMember = Static<typeof WorkspaceMember>;

export const CreateWorkspaceBody = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(Strict({ description: Type.Optional(Description) })),
});
export type CreateWorkspaceBody = Static<typeof CreateWorkspaceBody>;

export const UpdateWorkspaceBody = UpdateBody(Strict({ description: Type.Optional(Description) }));
export type UpdateWorkspaceBody = Static<typeof UpdateWorkspaceBody>;

export const AddMemberBody = Strict({
  email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
  profileId: Type.Optional(Type.String({ maxLength: 64 })),
});
export type AddMemberBody = Static<typeof AddMemberBody>;

export const Permissions = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 });

export const CreateApiKeyBody = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(Strict({ description: Type.Optional(Description), permissions: Type.Optional(Permissions) })),
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const UpdateApiKeyBody = UpdateBody(Strict({ description: Type.Optional(Description), permissions: Type.Optional(Permissions) }));
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBody>;
