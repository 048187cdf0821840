// The storage port of agents, variations, assignments, feedback, tools and tool
// sets. One port for both areas so a single transaction spans them (bundles
// apply everything at once); persistence/repositories/agents.store.ts
// implements it over TypeORM.
import type {
  AgentRecord,
  AssignmentRecord,
  FeedbackRecord,
  FeedbackTally,
  MemoryLayerAssignmentRecord,
  VariationRecord,
  WorkspaceResourceRecord,
} from '../agents/records';
import type { ProfileRecord } from '../accounts/records';
import type { MemoryLayerType } from '../memory/records';
import type { ModelRecord } from '../models/records';
import type { PageRequest } from '../resource/pagination';
import type { ToolRecord, ToolSetRecord } from '../tools/records';
import type { ListFilter, RecordTable } from './foundation-store';

/** A memory layer as variations see it (the memory area owns the table). */
export interface MemoryLayerRef {
  record: WorkspaceResourceRecord;
  systemManaged: boolean;
}

/** A sub-agent edge: a variation of `agentId` assigns `subAgentId`. */
export interface SubAgentEdge {
  agentId: string;
  subAgentId: string;
}

/** A memory layer in a variation's stack, with the layer's type (objective creation). */
export interface VariationStackLayer {
  variationId: string;
  memoryLayerId: string;
  /** Higher is nearer the top. */
  position: number;
  type: MemoryLayerType;
}

/** Everything an objective of an agent runs on, read at once (objective creation). */
export interface AgentRunConfiguration {
  agent: AgentRecord;
  /** Every variation of the agent, in creation order. */
  variations: VariationRecord[];
  /** The models of the agent's workspace that its variations name. */
  models: ModelRecord[];
  /** The assignments of every variation, in creation order. */
  assignments: AssignmentRecord[];
  /** The tools assigned directly. */
  tools: ToolRecord[];
  /** The tools of each assigned tool set, in the order they were added. */
  toolSetTools: Map<string, ToolRecord[]>;
  /** The agents assigned as sub-agents. */
  subAgents: AgentRecord[];
  /** The memory layers of every variation, by variation, then position ascending (bottom of the stack first). */
  memoryLayers: VariationStackLayer[];
}

export interface AgentsStore {
  /**
   * Runs `work` in one database transaction with a store bound to it (joins an open one).
   * A deadlock or serialization failure runs the outermost transaction again
   * whole (persistence/transaction-runner.ts): `work` must have no effect
   * outside the database.
   * @throws AbortedError when that happened on every run (the client may retry)
   */
  transaction<T>(work: (store: AgentsStore) => Promise<T>): Promise<T>;

  agents: RecordTable<AgentRecord> & {
    list(workspaceId: string, page: PageRequest, filter: ListFilter): Promise<AgentRecord[]>;
    findByIds(ids: string[]): Promise<AgentRecord[]>;
    /** The agent with what its `info` shows (creator, variation count), in one read; null when absent. */
    findWithInfo(id: string): Promise<{ record: AgentRecord; createdBy: ProfileRecord | null; variationCount: number } | null>;
    /** What an objective of the agent runs on, in one read; null when the agent is absent. */
    runConfiguration(agentId: string): Promise<AgentRunConfiguration | null>;
  };
  variations: RecordTable<VariationRecord> & {
    list(agentId: string, page: PageRequest, filter: ListFilter): Promise<VariationRecord[]>;
    /** Every variation of the agent, in creation order (variation selection). */
    listByAgent(agentId: string): Promise<VariationRecord[]>;
    countByAgents(agentIds: string[]): Promise<Map<string, number>>;
  };
  assignments: RecordTable<AssignmentRecord> & {
    listByVariations(variationIds: string[]): Promise<AssignmentRecord[]>;
    /** Every sub-agent edge of the workspace (cycle check). */
    subAgentEdges(workspaceId: string): Promise<SubAgentEdge[]>;
    /** Serialises changes to the workspace's sub-agent graph until the transaction ends. */
    lockSubAgentGraph(workspaceId: string): Promise<void>;
  };
  memoryLayerAssignments: RecordTable<MemoryLayerAssignmentRecord> & {
    listByVariations(variationIds: string[]): Promise<MemoryLayerAssignmentRecord[]>;
    countByMemoryLayer(memoryLayerId: string): Promise<number>;
    maxPosition(variationId: string): Promise<number | null>;
  };
  feedback: {
    insert(record: FeedbackRecord): Promise<FeedbackRecord>;
    /** `prefix` matches the start of the id. */
    list(agentId: string, page: PageRequest, filter: { variationId?: string; rating?: string; prefix?: string }): Promise<FeedbackRecord[]>;
    tallies(variationIds: string[]): Promise<Map<string, FeedbackTally>>;
    /** The counts of every variation of the agent (zeros without feedback), in one read. */
    talliesOfAgent(agentId: string): Promise<Map<string, FeedbackTally>>;
  };
  tools: RecordTable<ToolRecord> & {
    list(workspaceId: string, page: PageRequest, filter: ListFilter): Promise<ToolRecord[]>;
    findByIds(ids: string[]): Promise<ToolRecord[]>;
    /** Tools a mirroring set's sync created. */
    listBySourceSet(toolSetId: string): Promise<ToolRecord[]>;
    /** True when the tool is in at least one managed tool set. */
    inManagedSet(toolId: string): Promise<boolean>;
  };
  toolSets: RecordTable<ToolSetRecord> & {
    list(workspaceId: string, page: PageRequest, filter: ListFilter): Promise<ToolSetRecord[]>;
    findByIds(ids: string[]): Promise<ToolSetRecord[]>;
  };
  toolSetTools: {
    /** Adds the tool; false when it was already in the set. */
    add(toolSetId: string, toolId: string): Promise<boolean>;
    /** Removes the tool; false when it was not in the set. */
    remove(toolSetId: string, toolId: string): Promise<boolean>;
    /** The tools of each set, in the order they were added. */
    toolsOf(toolSetIds: string[]): Promise<Map<string, ToolRecord[]>>;
    /** The ids of the sets containing each tool. */
    setsOf(toolIds: string[]): Promise<Map<string, ToolSetRecord[]>>;
  };
  /** Memory layers of the workspace (the memory area owns the table). */
  memoryLayers: {
    findById(id: string): Promise<MemoryLayerRef | null>;
    findByIds(ids: string[]): Promise<MemoryLayerRef[]>;
  };
  objectives: {
    /**
     * Objectives of the agent that are not in a terminal state (status other
     * than COMPLETED, FAILED or CANCELLED in the objectives read model).
     */
    countRunningObjectives(agentId: string): Promise<number>;
  };
}
