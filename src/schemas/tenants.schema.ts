// Wire shapes of tenants and subjects (api-decisions.md "Tenants, subjects,
// uploads") and the assertion shapes objective and widget-session bodies embed.
import { Type, type Static } from '@sinclair/typebox';
import { EXTERNAL_ID_MAX, Labels, Name, ResourceMetadata, Strict } from './common.schema';

export const EMAIL_MAX = 320;

/** `tenant` of an objective or widget-session body: upserted by externalId. */
export const TenantAssertion = Strict({
  externalId: Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX }),
  name: Type.Optional(Name),
  labels: Type.Optional(Labels),
});
export type TenantAssertion = Static<typeof TenantAssertion>;

/** `subject` of an objective or widget-session body: upserted by externalId within its tenant. */
export const SubjectAssertion = Strict({
  externalId: Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX }),
  name: Type.Optional(Name),
  email: Type.Optional(Type.String({ maxLength: EMAIL_MAX })),
  labels: Type.Optional(Labels),
});
export type SubjectAssertion = Static<typeof SubjectAssertion>;

export const Tenant = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({}),
  info: Type.Optional(Type.Object({ subjectCount: Type.Optional(Type.Integer()) })),
});
export type Tenant = Static<typeof Tenant>;

export const Subject = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    tenantId: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
  }),
});
export type Subject = Static<typeof Subject>;

/** A tenant or subject erasure job (DELETE's answer, and GET …/erasures/{id}). */
export const Erasure = Type.Object({
  metadata: Type.Object({
    id: Type.String(),
    accountId: Type.String(),
    workspaceId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  }),
  spec: Type.Object({
    tenantId: Type.Optional(Type.String()),
    subjectIds: Type.Array(Type.String()),
  }),
  info: Type.Object({
    status: Type.Union([Type.Literal('ERASURE_STATUS_RUNNING'), Type.Literal('ERASURE_STATUS_COMPLETED')]),
    attempts: Type.Integer(),
    /** How far the job is: it erases the objectives a batch at a time, each batch through three steps. */
    progress: Type.Object({
      batchesCompleted: Type.Integer(),
      objectivesErased: Type.Integer(),
      /** The current batch's step; absent once completed. */
      step: Type.Optional(Type.Union([Type.Literal('ERASURE_STEP_OBJECTIVES'), Type.Literal('ERASURE_STEP_EVENTS'), Type.Literal('ERASURE_STEP_WEBHOOKS')])),
    }),
    lastError: Type.Optional(Type.String()),
    nextAttemptAt: Type.Optional(Type.String({ format: 'date-time' })),
    objectiveCount: Type.Optional(Type.Integer()),
    completedAt: Type.Optional(Type.String({ format: 'date-time' })),
  }),
});
export type Erasure = Static<typeof Erasure>;
