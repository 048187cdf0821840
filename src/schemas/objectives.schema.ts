// Wire shapes of objectives and their events (api-decisions.md "Objectives",
// interface-spec 4.10 and 6.3): the create body, the Objective, the follow-up,
// cancel, approve, deny and feedback bodies, and one objective event as the
// events list and the SSE stream show it (the webhook's `objectiveEvent`).
import { Type, type Static } from '@sinclair/typebox';
import { COMMENT_MAX, FeedbackRatingSchema } from './agents.schema';
import { CreateOperationMetadata, DateTime, ExternalId, OperationMetadata, Strict } from './common.schema';
import { SubjectAssertion, TenantAssertion } from './tenants.schema';

/** Longest user message (initial or follow-up), in characters. */
export const MESSAGE_MAX = 100_000;
export const MEMO_MAX = 4096;
export const EPISODIC_KEY_MAX = 256;

export const ObjectiveStatusSchema = Type.Union([
  Type.Literal('OBJECTIVE_STATUS_PENDING'),
  Type.Literal('OBJECTIVE_STATUS_RUNNING'),
  Type.Literal('OBJECTIVE_STATUS_AWAITING_APPROVAL'),
  Type.Literal('OBJECTIVE_STATUS_COMPLETED'),
  Type.Literal('OBJECTIVE_STATUS_FAILED'),
  Type.Literal('OBJECTIVE_STATUS_CANCELLED'),
]);

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const CreateObjectiveBody = Strict({
  agentId: Id,
  data: Type.Optional(Type.Unknown({ description: 'Input data; must satisfy the agent\'s inputDataSchema when it has one' })),
  initialMessage: Type.Optional(Type.String({ minLength: 1, maxLength: MESSAGE_MAX, description: 'The first user message; default: data rendered as JSON' })),
  variationId: Type.Optional(Id),
  variation_id: Type.Optional(Id),
  episodicKey: Type.Optional(Type.String({ minLength: 1, maxLength: EPISODIC_KEY_MAX })),
  memoryLayerIds: Type.Optional(Type.Array(Id, { maxItems: 64 })),
  tenant: Type.Optional(TenantAssertion),
  subject: Type.Optional(SubjectAssertion),
  metadata: Type.Optional(CreateOperationMetadata),
});
export type CreateObjectiveBody = Static<typeof CreateObjectiveBody>;

export const Usage = Type.Object({
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  costCents: Type.Number(),
});

export const Objective = Type.Object({
  metadata: OperationMetadata,
  spec: Type.Object({
    agentId: Type.String(),
    variationId: Type.String(),
    data: Type.Optional(Type.Unknown()),
    initialMessage: Type.Optional(Type.String()),
    episodicKey: Type.Optional(Type.String()),
    memoryLayerIds: Type.Array(Type.String()),
    tenantId: Type.Optional(Type.String()),
    subjectId: Type.Optional(Type.String()),
    parentObjectiveId: Type.Optional(Type.String()),
    scheduleId: Type.Optional(Type.String()),
    scheduleFireTime: Type.Optional(DateTime),
  }),
  info: Type.Object({
    status: ObjectiveStatusSchema,
    createdAt: DateTime,
    startedAt: Type.Optional(DateTime),
    finishedAt: Type.Optional(DateTime),
    output: Type.Optional(Type.Unknown()),
    lastMessage: Type.Optional(Type.String()),
    error: Type.Optional(Type.Object({ message: Type.String(), type: Type.String() })),
    usage: Usage,
    toolCallCount: Type.Integer(),
    subObjectiveCount: Type.Integer(),
    pendingToolCallIds: Type.Array(Type.String()),
  }),
});
export type Objective = Static<typeof Objective>;

export const FollowUpMessageBody = Strict({ content: Type.String({ minLength: 1, maxLength: MESSAGE_MAX }) });
export type FollowUpMessageBody = Static<typeof FollowUpMessageBody>;
export const CancelObjectiveBody = Strict({ reason: Type.Optional(Type.String({ maxLength: MEMO_MAX })) });
export type CancelObjectiveBody = Static<typeof CancelObjectiveBody>;
export const ApproveToolCallBody = Strict({});
export const DenyToolCallBody = Strict({ memo: Type.Optional(Type.String({ maxLength: MEMO_MAX })) });
export type DenyToolCallBody = Static<typeof DenyToolCallBody>;
export const ObjectiveFeedbackBody = Strict({
  rating: FeedbackRatingSchema,
  comment: Type.Optional(Type.String({ maxLength: COMMENT_MAX })),
});
export type ObjectiveFeedbackBody = Static<typeof ObjectiveFeedbackBody>;

/** One objective event: metadata, top-level sequence, `data` {type, <kind key>}, info. */
export const ObjectiveEventView = Type.Object({
  metadata: OperationMetadata,
  sequence: Type.Integer({ minimum: 1 }),
  data: Type.Object({ type: Type.String() }, { additionalProperties: true }),
  /** The context window the event belongs to (`ctxwin_…`); absent on events of objectives started before windows existed. */
  contextWindowId: Type.Optional(Type.String()),
  /** The objective's trace id (32 hex digits, W3C Trace Context); absent when the objective was created with tracing off. */
  traceId: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$' })),
  info: Type.Optional(Type.Object({ objective: OperationMetadata })),
});
export type ObjectiveEventView = Static<typeof ObjectiveEventView>;

export const ObjectiveListFilters = {
  agentId: Type.Optional(Id),
  status: Type.Optional(ObjectiveStatusSchema),
  tenantId: Type.Optional(Id),
  subjectId: Type.Optional(Id),
  scheduleId: Type.Optional(Id),
  parentObjectiveId: Type.Optional(Id),
  externalId: Type.Optional(ExternalId),
};
