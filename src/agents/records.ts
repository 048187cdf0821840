// Stored records of the agents area (agents, variations, assignments, memory
// layer assignments, feedback), as the domain sees them. persistence/ maps its
// entity schemas onto these shapes.
import type { MetadataRecord } from '../accounts/records';

/** Metadata of a workspace resource that a configuration bundle may own. */
export interface WorkspaceResourceRecord extends MetadataRecord {
  workspaceId: string;
  /** The bundle that owns the resource (api-decisions.md "Search and bundles"). */
  bundleKey: string | null;
}

export const AgentStatus = {
  UNSPECIFIED: 'AGENT_STATUS_UNSPECIFIED',
  DRAFT: 'AGENT_STATUS_DRAFT',
  PUBLISHED: 'AGENT_STATUS_PUBLISHED',
  ARCHIVED: 'AGENT_STATUS_ARCHIVED',
} as const;
export type AgentStatus = (typeof AgentStatus)[keyof typeof AgentStatus];

export const VariationSelectionMode = {
  UNSPECIFIED: 'VARIATION_SELECTION_MODE_UNSPECIFIED',
  RANDOM: 'VARIATION_SELECTION_MODE_RANDOM',
  WEIGHTED: 'VARIATION_SELECTION_MODE_WEIGHTED',
  /** Extension (issue 27): Thompson sampling over each variation's feedback. */
  THOMPSON_SAMPLING: 'VARIATION_SELECTION_MODE_THOMPSON_SAMPLING',
} as const;
export type VariationSelectionMode = (typeof VariationSelectionMode)[keyof typeof VariationSelectionMode];

export interface AgentRecord extends WorkspaceResourceRecord {
  status: AgentStatus;
  variationSelectionMode: VariationSelectionMode;
  description: string | null;
  inputDataSchema: Record<string, unknown> | null;
  outputDefinition: Record<string, unknown> | null;
  webhookEventsUrl: string | null;
}

export interface ToolSelectionConfig {
  assignedTools?: { allowDiscovery?: boolean };
  autoDiscovery?: { hints?: string[]; maxTools?: number };
}

export interface ProgressiveDiscoveryConfig {
  hints?: string[];
  maxTools?: number;
  rerankThreshold?: number;
}

export const DEFAULT_TRIGGER_THRESHOLD = 0.75;
export const DEFAULT_PRESERVE_RECENT_RESULTS = 2;

export interface VariationRecord extends WorkspaceResourceRecord {
  agentId: string;
  description: string | null;
  prompt: string | null;
  /** `family/model`: the model's metadata.name. */
  modelId: string | null;
  temperature: number | null;
  maxSubObjectives: number | null;
  maxToolCalls: number | null;
  /** Null: DEFAULT_MAX_MODEL_TURNS. */
  maxModelTurns: number | null;
  /** Null: the node's AGENTRT_OBJECTIVE_MAX_TOKENS; 0: no limit. */
  maxTokens: number | null;
  maxCostCents: number | null;
  /** Null: the node's AGENTRT_MODEL_RETRY_BUDGET_MS. */
  modelRetryBudgetSeconds: number | null;
  triggerThreshold: number;
  summarizationInstructions: string | null;
  preserveRecentResults: number;
  enableEpisodicMemory: boolean;
  /** Seconds; null keeps episodic memory indefinitely. */
  episodicMemoryTtl: number | null;
  toolSelection: ToolSelectionConfig | null;
  progressiveDiscovery: ProgressiveDiscoveryConfig | null;
  weight: number;
}

/** A tool, tool set or sub-agent assigned to a variation: exactly one target is set. */
export interface AssignmentRecord {
  id: string;
  accountId: string;
  workspaceId: string;
  variationId: string;
  agentId: string | null;
  toolId: string | null;
  toolSetId: string | null;
  /** Overrides the tool's own requiresApproval when set. */
  requiresApproval: boolean | null;
  profileId: string | null;
  createdAt: Date;
}

/** A memory layer in a variation's stack; a higher position is nearer the top. */
export interface MemoryLayerAssignmentRecord {
  id: string;
  accountId: string;
  workspaceId: string;
  variationId: string;
  memoryLayerId: string;
  position: number;
  profileId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const FeedbackRating = {
  POSITIVE: 'FEEDBACK_RATING_POSITIVE',
  NEGATIVE: 'FEEDBACK_RATING_NEGATIVE',
} as const;
export type FeedbackRating = (typeof FeedbackRating)[keyof typeof FeedbackRating];

export interface FeedbackRecord {
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  variationId: string;
  objectiveId: string | null;
  rating: FeedbackRating;
  comment: string | null;
  profileId: string | null;
  createdAt: Date;
}

/** Positive and negative feedback counts of one variation. */
export interface FeedbackTally {
  positive: number;
  negative: number;
}
