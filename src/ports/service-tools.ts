// The service-provided tools of the objective loop (api-decisions.md "Tools
// and tool sets": `load_skill`, `memory_read`, `memory_write`,
// `search_tools`): what the objective resolves at creation (its memory stack
// and discovery settings), what one call of such a tool asks of the
// `service_tool.call` effect, and what comes back. The objective decides when
// they are offered and records their events (src/objectives/
// objective-service-tools.ts); the memory area (MemoryTools) and the search
// area (ToolDiscovery) do the reading and writing.
import type { ObjectiveTool } from '../objectives/objective-state';

/** The effect that runs one service-provided tool call. */
export const SERVICE_TOOL_EFFECT = 'service_tool.call';

export const ServiceToolName = {
  LOAD_SKILL: 'load_skill',
  MEMORY_READ: 'memory_read',
  MEMORY_WRITE: 'memory_write',
  SEARCH_TOOLS: 'search_tools',
} as const;
export type ServiceToolName = (typeof ServiceToolName)[keyof typeof ServiceToolName];

/** An objective's episodic memory: the variation enables it, the objective names its key. */
export interface EpisodicMemorySettings {
  key: string;
  /** `episodicMemoryTtl` in seconds; null keeps the layer until it is deleted. */
  ttlSeconds: number | null;
}

/** The memory an objective runs with, resolved when it is created. */
export interface ObjectiveMemory {
  /**
   * The stack from bottom to top: the variation's layers by `position`, then
   * the objective's `memoryLayerIds` in the order given. The episodic layer,
   * on top of all, is found by its key when used (a sweeper may have removed
   * it meanwhile; the next use creates it again).
   */
  layerIds: string[];
  /** The SKILLS layers of the stack, bottom to top: `load_skill` resolves over these. */
  skillsLayerIds: string[];
  /** What the system prompt carries after the variation's prompt: the skills manifest, or null without skills entries. */
  skillsManifest: string | null;
  /** Null unless the variation enables episodic memory and the objective has an `episodicKey`. */
  episodic: EpisodicMemorySettings | null;
}

/** Tool discovery as the variation sets it (`toolSelection` or `progressiveDiscovery`). */
export interface ObjectiveDiscovery {
  hints: string[];
  /** Most tools one `search_tools` call returns. */
  maxTools: number;
  /** Minimum relevance in [0, 1]; 0 keeps every match. */
  rerankThreshold: number;
}

/** Who calls, and what the objective holds, for one service tool call. */
export interface ServiceToolContext {
  accountId: string;
  workspaceId: string;
  objectiveId: string;
  /** The stack and episodic settings (the manifest stays in the objective: the effect input is journaled with every call). */
  memory: Omit<ObjectiveMemory, 'skillsManifest'> | null;
  discovery: ObjectiveDiscovery | null;
}

/** The `service_tool.call` effect's input (journaled with the effect). */
export interface ServiceToolCallInput {
  toolCallId: string;
  name: ServiceToolName;
  /** The arguments as the model wrote them (a JSON string, possibly invalid). */
  arguments: string;
  context: ServiceToolContext;
}

/** The fields of a MEMORY_READ event (api-decisions.md "Objectives"). */
export interface MemoryReadFields {
  key: string;
  memoryLayerId: string;
  memoryEntryId: string;
}

/**
 * What a service tool call gives back. `ok: false` is a TOOL_ERROR whose
 * `content` the model reads (a key not found, bad arguments); the objective
 * goes on either way.
 */
export interface ServiceToolOutcome {
  ok: boolean;
  /** The tool result the model gets (for `search_tools` the objective writes it from `discoveredTools`). */
  content: string;
  /** A TOOL_ERROR's `type`. */
  errorType?: string;
  /** A key resolved: one MEMORY_READ event before the result. */
  memoryRead?: MemoryReadFields;
  /** `search_tools`: the tools found, best first, ready to run (offered from the next model call). */
  discoveredTools?: ObjectiveTool[];
}

/** The memory side: resolving keys over the stack and the episodic layer. */
export interface MemoryTools {
  /** Resolves `key` over the stack's SKILLS layers, top down. */
  loadSkill(context: ServiceToolContext, key: string): Promise<ServiceToolOutcome>;
  /** Resolves `key` over the episodic layer, then the stack, top down. */
  read(context: ServiceToolContext, key: string): Promise<ServiceToolOutcome>;
  /** Writes `content` under `key` in the episodic layer (created or refreshed); the last write wins. */
  write(context: ServiceToolContext, key: string, content: string): Promise<ServiceToolOutcome>;
}

/** The discovery side: the workspace's tools matching a query. */
export interface ToolDiscovery {
  searchTools(context: ServiceToolContext, query: string): Promise<ServiceToolOutcome>;
}
