// Wire shapes of workspace secrets (spec 2.8, 4.4). `spec.value` is write-only:
// accepted on create and update, never present in a response.
import { Type, type Static } from '@sinclair/typebox';
import { CreateMetadata, DateTime, Profile, ResourceMetadata, Strict, UpdateBody } from './common.schema';

/** Longest secret value accepted, in characters. */
export const SECRET_VALUE_MAX = 65536;

const SecretValue = Type.String({ maxLength: SECRET_VALUE_MAX, description: 'Write-only; never returned' });

export const WorkspaceSecret = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({}, { description: '`value` is write-only and never returned' }),
  info: Type.Optional(Type.Object({ createdBy: Type.Optional(Profile), lastUsedAt: Type.Optional(DateTime) })),
});
export type WorkspaceSecret = Static<typeof WorkspaceSecret>;

export const CreateWorkspaceSecretBody = Strict({
  metadata: CreateMetadata,
  spec: Type.Optional(Strict({ value: Type.Optional(SecretValue) })),
});
export type CreateWorkspaceSecretBody = Static<typeof CreateWorkspaceSecretBody>;

export const UpdateWorkspaceSecretBody = UpdateBody(Strict({ value: Type.Optional(SecretValue) }));
export type UpdateWorkspaceSecretBody = Static<typeof UpdateWorkspaceSecretBody>;
