// Wire shapes of agents, variations, assignments and feedback (spec 2.13, 2.14,
// api-decisions.md). Ranges of section 8 are declared here, once: the edge
// validates them, and bundle documents embed these same spec schemas.
import { Type, type Static } from '@sinclair/typebox';
import {
  BareMetadata,
  CreateMetadata,
  Description,
  INT32_MAX,
  OperationMetadata,
  Profile,
  ResourceMetadata,
  Strict,
  UpdateBody,
} from './common.schema';

const PROMPT_MAX = 256 * 1024;
const URL_MAX = 2048;
const HINTS = Type.Array(Type.String({ maxLength: 256 }), { maxItems: 32 });

export const AgentStatusSchema = Type.Union([
  Type.Literal('AGENT_STATUS_UNSPECIFIED'),
  Type.Literal('AGENT_STATUS_DRAFT'),
  Type.Literal('AGENT_STATUS_PUBLISHED'),
  Type.Literal('AGENT_STATUS_ARCHIVED'),
]);
export const VariationSelectionModeSchema = Type.Union([
  Type.Literal('VARIATION_SELECTION_MODE_UNSPECIFIED'),
  Type.Literal('VARIATION_SELECTION_MODE_RANDOM'),
  Type.Literal('VARIATION_SELECTION_MODE_WEIGHTED'),
  Type.Literal('VARIATION_SELECTION_MODE_THOMPSON_SAMPLING'),
]);
const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** Agent spec as clients send it (every field optional on create and update). */
export const AgentSpecInput = Strict({
  status: Type.Optional(AgentStatusSchema),
  variationSelectionMode: Type.Optional(VariationSelectionModeSchema),
  description: Type.Optional(Description),
  inputDataSchema: Type.Optional(JsonObject),
  outputDefinition: Type.Optional(JsonObject),
  webhookEventsUrl: Type.Optional(Type.String({ maxLength: URL_MAX })),
});
export type AgentSpecInput = Static<typeof AgentSpecInput>;

export const Agent = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    status: AgentStatusSchema,
    variationSelectionMode: VariationSelectionModeSchema,
    description: Type.Optional(Type.String()),
    inputDataSchema: Type.Optional(JsonObject),
    outputDefinition: Type.Optional(JsonObject),
    webhookEventsUrl: Type.Optional(Type.String()),
  }),
  info: Type.Optional(Type.Object({ createdBy: Type.Optional(Profile), variationCount: Type.Optional(Type.Integer()) })),
});
export type Agent = Static<typeof Agent>;

export const CreateAgentBody = Strict({ metadata: CreateMetadata, spec: Type.Optional(AgentSpecInput) });
export type CreateAgentBody = Static<typeof CreateAgentBody>;
export const UpdateAgentBody = UpdateBody(AgentSpecInput);
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

/** Variation spec (spec 2.14) with the ranges of section 8. */
export const VariationSpecInput = Strict({
  description: Type.Optional(Description),
  prompt: Type.Optional(Type.String({ maxLength: PROMPT_MAX })),
  modelConfig: Type.Optional(Strict({
    modelId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  })),
  constraints: Type.Optional(Strict({
    maxSubObjectives: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description: '0 means no limit' })),
    maxToolCalls: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description: '0 means no limit' })),
    // Extensions (api-decisions.md "Extensions"; docs/api.md "Objective budgets").
    maxModelTurns: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description: 'Model turns per objective run; 0 means no limit; default 50' })),
    maxTokens: Type.Optional(Type.Integer({
      minimum: 0, maximum: INT32_MAX, description: 'Prompt + completion tokens over the objective and its sub-objectives; 0 means no limit; default AGENTRT_OBJECTIVE_MAX_TOKENS',
    })),
    maxCostCents: Type.Optional(Type.Number({ minimum: 0, maximum: INT32_MAX, description: 'Cents over the objective and its sub-objectives; 0 means no limit' })),
    modelRetryBudgetSeconds: Type.Optional(Type.Integer({
      minimum: 0, maximum: INT32_MAX, description: 'How long consecutive retryable model call failures are retried; 0 retries none; default AGENTRT_MODEL_RETRY_BUDGET_MS',
    })),
  })),
  compactionConfig: Type.Optional(Strict({
    triggerThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.75 })),
    summarization: Type.Optional(Strict({ instructions: Type.Optional(Type.String({ maxLength: PROMPT_MAX })) })),
    toolResultClearing: Type.Optional(Strict({ preserveRecentResults: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, default: 2 })) })),
  })),
  enableEpisodicMemory: Type.Optional(Type.Boolean()),
  episodicMemoryTtl: Type.Optional(Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'Seconds; unset keeps episodic memory indefinitely' })),
  toolSelection: Type.Optional(Strict({
    assignedTools: Type.Optional(Strict({ allowDiscovery: Type.Optional(Type.Boolean()) })),
    autoDiscovery: Type.Optional(Strict({ hints: Type.Optional(HINTS), maxTools: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })) })),
  })),
  progressiveDiscovery: Type.Optional(Strict({
    hints: Type.Optional(HINTS),
    maxTools: Type.Optional(Type.Integer({ minimum: 1, maximum: 128, description: 'Per search' })),
    rerankThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Minimum relevance score (the search score, in [0, 1)) a discovered tool must reach; 0 keeps every match' })),
  })),
  weight: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX })),
});
export type VariationSpecInput = Static<typeof VariationSpecInput>;

export const VariationAssignment = Type.Object({
  id: Type.Optional(Type.String()),
  agent: Type.Optional(BareMetadata),
  tool: Type.Optional(BareMetadata),
  toolSet: Type.Optional(BareMetadata),
  requiresApproval: Type.Optional(Type.Boolean()),
});
export type VariationAssignment = Static<typeof VariationAssignment>;

export const MemoryLayerAssignment = Type.Object({
  id: Type.String(),
  variationId: Type.String(),
  memoryLayerId: Type.String(),
  memoryLayer: Type.Optional(BareMetadata),
  position: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type MemoryLayerAssignment = Static<typeof MemoryLayerAssignment>;

export const AgentVariation = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    description: Type.Optional(Type.String()),
    prompt: Type.Optional(Type.String()),
    modelConfig: Type.Object({ modelId: Type.Optional(Type.String()), temperature: Type.Optional(Type.Number()) }),
    constraints: Type.Object({
      maxSubObjectives: Type.Integer(), maxToolCalls: Type.Integer(), maxModelTurns: Type.Integer(), maxCostCents: Type.Number(),
      // Only when set: unset, the node's default applies, which the variation does not know.
      maxTokens: Type.Optional(Type.Integer()), modelRetryBudgetSeconds: Type.Optional(Type.Integer()),
    }),
    compactionConfig: Type.Object({
      triggerThreshold: Type.Number(),
      summarization: Type.Object({ instructions: Type.Optional(Type.String()) }),
      toolResultClearing: Type.Object({ preserveRecentResults: Type.Integer() }),
    }),
    enableEpisodicMemory: Type.Boolean(),
    episodicMemoryTtl: Type.Optional(Type.Integer()),
    toolSelection: Type.Optional(Type.Unknown()),
    progressiveDiscovery: Type.Optional(Type.Unknown()),
    weight: Type.Integer(),
  }),
  info: Type.Optional(Type.Object({
    agent: BareMetadata,
    assignments: Type.Array(VariationAssignment),
    memoryLayerAssignments: Type.Array(MemoryLayerAssignment),
    createdBy: Type.Optional(Profile),
    feedbackCount: Type.Integer(),
    model: Type.Optional(ResourceMetadata),
    score: Type.Number({ minimum: 0, maximum: 1 }),
    subAgentCount: Type.Integer(),
    toolCount: Type.Integer(),
    toolSetCount: Type.Integer(),
  })),
});
export type AgentVariation = Static<typeof AgentVariation>;

export const CreateVariationBody = Strict({ metadata: CreateMetadata, spec: Type.Optional(VariationSpecInput) });
export type CreateVariationBody = Static<typeof CreateVariationBody>;
export const UpdateVariationBody = UpdateBody(VariationSpecInput);
export type UpdateVariationBody = Static<typeof UpdateVariationBody>;

const ShortId = Type.String({ minLength: 1, maxLength: 64 });
export const CreateAssignmentBody = Strict({
  agentId: Type.Optional(ShortId),
  toolId: Type.Optional(ShortId),
  toolSetId: Type.Optional(ShortId),
  requiresApproval: Type.Optional(Type.Boolean({ description: "Overrides the tool's own requiresApproval" })),
});
export type CreateAssignmentBody = Static<typeof CreateAssignmentBody>;

export const MemoryLayerPosition = Type.Integer({ minimum: 0, maximum: INT32_MAX, description: 'Higher is nearer the top of the stack; default: top' });
export const CreateMemoryLayerAssignmentBody = Strict({ memoryLayerId: ShortId, position: Type.Optional(MemoryLayerPosition) });
export type CreateMemoryLayerAssignmentBody = Static<typeof CreateMemoryLayerAssignmentBody>;
export const UpdateMemoryLayerAssignmentBody = Strict({ position: MemoryLayerPosition });
export type UpdateMemoryLayerAssignmentBody = Static<typeof UpdateMemoryLayerAssignmentBody>;

export const FeedbackRatingSchema = Type.Union([Type.Literal('FEEDBACK_RATING_POSITIVE'), Type.Literal('FEEDBACK_RATING_NEGATIVE')]);
export const COMMENT_MAX = 4096;

export const Feedback = Type.Object({
  metadata: OperationMetadata,
  spec: Type.Object({
    agentId: Type.String(),
    variationId: Type.String(),
    objectiveId: Type.Optional(Type.String()),
    rating: FeedbackRatingSchema,
    comment: Type.Optional(Type.String()),
  }),
});
export type Feedback = Static<typeof Feedback>;
