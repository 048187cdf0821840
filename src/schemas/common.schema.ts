// Shared wire shapes (spec 2.1-2.2, api-decisions.md), declared once as JSON
// Schema with typebox: the same declaration validates requests, types the code
// and feeds the OpenAPI document.
import { Type, type TSchema, type TProperties, type Static } from '@sinclair/typebox';
import { IdPrefix, idPattern, type IdKind } from '../ids';

/** An object that rejects unknown fields (mass-assignment guard). */
export function Strict<T extends TProperties>(properties: T, options: { description?: string; title?: string } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** The largest value of a Postgres integer column (positions, sequences, counts). */
export const INT32_MAX = 2_147_483_647;
export const NAME_MAX = 256;
export const EXTERNAL_ID_MAX = 256;
export const DESCRIPTION_MAX = 4096;

export const DateTime = Type.String({ format: 'date-time' });
export const Labels = Type.Record(Type.String(), Type.String(), {
  description: 'Label map; keys and values follow the label rules of spec section 2.2',
});
export const Name = Type.String({ minLength: 1, maxLength: NAME_MAX });
export const ExternalId = Type.String({ maxLength: EXTERNAL_ID_MAX });
export const Description = Type.String({ maxLength: DESCRIPTION_MAX });

export const ResourceMetadata = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  createdAt: DateTime,
  name: Type.String(),
  profileId: Type.String(),
  workspaceId: Type.String(),
  bundleKey: Type.Optional(Type.String()),
  externalId: Type.Optional(Type.String()),
  labels: Type.Optional(Labels),
  updatedAt: Type.Optional(DateTime),
});
export type ResourceMetadata = Static<typeof ResourceMetadata>;

export const AccountResourceMetadata = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  name: Type.String(),
  profileId: Type.String(),
  externalId: Type.Optional(Type.String()),
  labels: Type.Optional(Labels),
  createdAt: DateTime,
  updatedAt: Type.Optional(DateTime),
});
export type AccountResourceMetadata = Static<typeof AccountResourceMetadata>;

export const OperationMetadata = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  createdAt: DateTime,
  profileId: Type.String(),
  workspaceId: Type.String(),
  externalId: Type.Optional(Type.String()),
  labels: Type.Optional(Labels),
});
export type OperationMetadata = Static<typeof OperationMetadata>;

export const BareMetadata = Type.Object({ id: Type.Optional(Type.String()), name: Type.Optional(Type.String()) });
export type BareMetadata = Static<typeof BareMetadata>;

export const CreateMetadata = Strict({ name: Name, externalId: Type.Optional(ExternalId), labels: Type.Optional(Labels) });
export type CreateMetadata = Static<typeof CreateMetadata>;
export const UpdateMetadata = Strict({
  name: Type.Optional(Name),
  externalId: Type.Optional(ExternalId),
  labels: Type.Optional(Labels),
});
export type UpdateMetadata = Static<typeof UpdateMetadata>;
/**
 * The PATCH body of a `{metadata, spec, info}` resource (api-decisions.md):
 * optional metadata and spec, and the `updateMask` naming what applies.
 */
export function UpdateBody<T extends TSchema>(spec: T) {
  return Strict({ metadata: Type.Optional(UpdateMetadata), spec: Type.Optional(spec), updateMask: Type.Optional(UpdateMask) });
}

export const CreateOperationMetadata = Strict({ externalId: Type.Optional(ExternalId), labels: Type.Optional(Labels) });

export const UpdateMask = Type.String({ description: 'Comma-separated field paths relative to the body' });

/** Standard list query parameters of section 4. */
export const listParamProperties = {
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 50; values above 1000 are clamped' })),
  prefix: Type.Optional(Type.String({ description: 'Id or name prefix' })),
  sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  includeInfo: Type.Optional(Type.Boolean()),
  labels: Type.Optional(Type.String({ description: 'k=v,k2=v2; every pair must match' })),
};
export const ListParams = Strict(listParamProperties);
export type ListParams = Static<typeof ListParams>;

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    pagination: Type.Object({ nextCursor: Type.String(), total: Type.Optional(Type.Integer()) }),
  });
}

export const Empty = Type.Object({}, { additionalProperties: false });
export type Empty = Static<typeof Empty>;
export const EmptyBody = Type.Object({}, { additionalProperties: false });

export const StatusBody = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  details: Type.Array(Type.Object({ '@type': Type.String() }, { additionalProperties: true })),
});

export const ProfileType = Type.Union([
  Type.Literal('PROFILE_TYPE_UNSPECIFIED'),
  Type.Literal('PROFILE_TYPE_USER'),
  Type.Literal('PROFILE_TYPE_API_KEY'),
  Type.Literal('PROFILE_TYPE_SYSTEM'),
]);

export const Profile = Type.Object({
  metadata: AccountResourceMetadata,
  spec: Type.Object({ type: ProfileType, email: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }),
  info: Type.Optional(Type.Object({ admin: Type.Optional(Type.Boolean()) })),
});
export type Profile = Static<typeof Profile>;

/** Path parameter of one id. */
export function IdParam(name = 'id') {
  return Strict({ [name]: Type.String({ minLength: 1, maxLength: 64 }) });
}

/**
 * Path parameters that are prefixed ids, e.g. `PathIds({ workspaceId: 'workspace', id: 'apiKey' })`;
 * a malformed id is INVALID_ARGUMENT naming the parameter.
 */
export function PathIds<T extends Record<string, IdKind>>(kinds: T) {
  const properties = Object.fromEntries(
    Object.entries(kinds).map(([name, kind]) => [name, Type.String({ pattern: idPattern(kind), description: `${IdPrefix[kind]}_ id` })]),
  ) as { [K in keyof T]: ReturnType<typeof Type.String> };
  return Strict(properties);
}
