// Record → wire mappings of the agents area, written once and reused by every
// service (and by bundles and objectives) that returns these shapes.
import { toProfile } from '../accounts/mappers';
import type { MetadataRecord, ProfileRecord } from '../accounts/records';
import { toResourceMetadata } from '../resource/metadata';
import { DEFAULT_MAX_MODEL_TURNS } from '../objectives/objective-budgets';
import type { Agent, AgentVariation, Feedback, MemoryLayerAssignment, VariationAssignment } from '../schemas/agents.schema';
import type { AgentRecord, AssignmentRecord, FeedbackRecord, FeedbackTally, MemoryLayerAssignmentRecord, VariationRecord } from './records';

/** Present-only helper: `{key: value}` when value is not null. */
function optional<K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

export interface AgentInfo {
  createdBy?: ProfileRecord | null;
  variationCount?: number;
}

export function toAgent(record: AgentRecord, info?: AgentInfo): Agent {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      status: record.status,
      variationSelectionMode: record.variationSelectionMode,
      ...optional('description', record.description),
      ...optional('inputDataSchema', record.inputDataSchema),
      ...optional('outputDefinition', record.outputDefinition),
      ...optional('webhookEventsUrl', record.webhookEventsUrl),
    },
    ...(info
      ? { info: { ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}), ...optional('variationCount', info.variationCount) } }
      : {}),
  };
}

/** Beta(1 + positive, 1 + negative) posterior mean: 0.5 with no feedback. */
export function feedbackScore(tally: FeedbackTally): number {
  return (1 + tally.positive) / (2 + tally.positive + tally.negative);
}

/** Names of the records an assignment or memory layer assignment points at, by id. */
export type NameIndex = Map<string, { id: string; name: string }>;

export function toAssignment(record: AssignmentRecord, names: NameIndex): VariationAssignment {
  const bare = (id: string) => ({ id, ...optional('name', names.get(id)?.name) });
  return {
    id: record.id,
    ...(record.agentId ? { agent: bare(record.agentId) } : {}),
    ...(record.toolId ? { tool: bare(record.toolId) } : {}),
    ...(record.toolSetId ? { toolSet: bare(record.toolSetId) } : {}),
    ...optional('requiresApproval', record.requiresApproval),
  };
}

export function toMemoryLayerAssignment(record: MemoryLayerAssignmentRecord, names: NameIndex): MemoryLayerAssignment {
  return {
    id: record.id,
    variationId: record.variationId,
    memoryLayerId: record.memoryLayerId,
    memoryLayer: { id: record.memoryLayerId, ...optional('name', names.get(record.memoryLayerId)?.name) },
    position: record.position,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

export interface VariationInfo {
  agent: { id: string; name: string };
  assignments: AssignmentRecord[];
  memoryLayerAssignments: MemoryLayerAssignmentRecord[];
  names: NameIndex;
  createdBy: ProfileRecord | null;
  tally: FeedbackTally;
  model: (MetadataRecord & { workspaceId: string; bundleKey?: string | null }) | null;
}

export function toVariation(record: VariationRecord, info?: VariationInfo): AgentVariation {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      ...optional('description', record.description),
      ...optional('prompt', record.prompt),
      modelConfig: { ...optional('modelId', record.modelId), ...optional('temperature', record.temperature) },
      constraints: {
        maxSubObjectives: record.maxSubObjectives ?? 0,
        maxToolCalls: record.maxToolCalls ?? 0,
        maxModelTurns: record.maxModelTurns ?? DEFAULT_MAX_MODEL_TURNS,
        maxCostCents: record.maxCostCents ?? 0,
        ...optional('maxTokens', record.maxTokens),
        ...optional('modelRetryBudgetSeconds', record.modelRetryBudgetSeconds),
      },
      compactionConfig: {
        triggerThreshold: record.triggerThreshold,
        summarization: { ...optional('instructions', record.summarizationInstructions) },
        toolResultClearing: { preserveRecentResults: record.preserveRecentResults },
      },
      enableEpisodicMemory: record.enableEpisodicMemory,
      ...optional('episodicMemoryTtl', record.episodicMemoryTtl),
      ...optional('toolSelection', record.toolSelection),
      ...optional('progressiveDiscovery', record.progressiveDiscovery),
      weight: record.weight,
    },
    ...(info ? { info: variationInfo(info) } : {}),
  };
}

function variationInfo(info: VariationInfo): NonNullable<AgentVariation['info']> {
  const count = (key: 'agentId' | 'toolId' | 'toolSetId') => info.assignments.filter((assignment) => assignment[key] !== null).length;
  return {
    agent: info.agent,
    assignments: info.assignments.map((assignment) => toAssignment(assignment, info.names)),
    memoryLayerAssignments: info.memoryLayerAssignments.map((assignment) => toMemoryLayerAssignment(assignment, info.names)),
    ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}),
    feedbackCount: info.tally.positive + info.tally.negative,
    ...(info.model ? { model: toResourceMetadata(info.model, info.model.workspaceId) } : {}),
    score: feedbackScore(info.tally),
    subAgentCount: count('agentId'),
    toolCount: count('toolId'),
    toolSetCount: count('toolSetId'),
  };
}

export function toFeedback(record: FeedbackRecord): Feedback {
  return {
    metadata: {
      id: record.id,
      accountId: record.accountId,
      workspaceId: record.workspaceId,
      createdAt: record.createdAt.toISOString(),
      profileId: record.profileId ?? '',
    },
    spec: {
      agentId: record.agentId,
      variationId: record.variationId,
      ...optional('objectiveId', record.objectiveId),
      rating: record.rating,
      ...optional('comment', record.comment),
    },
  };
}
