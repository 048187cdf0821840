// The storage port of configuration bundles (api-decisions.md "Search and
// bundles"). One apply is one transaction spanning the agents/tools and memory
// stores; persistence/repositories/bundle.store.ts implements it.
import type { AgentRecord, VariationRecord } from '../agents/records';
import type { MemoryEntryRecord, MemoryLayerRecord } from '../memory/records';
import type { ToolRecord, ToolSetRecord } from '../tools/records';
import type { AgentsStore } from './agents-store';
import type { MemoryStore } from './memory-store';

/** Which rows an apply must see: the bundle's own, and any others with a name it uses. */
export interface BundleScope {
  workspaceId: string;
  bundleKey: string;
  names: readonly string[];
}

export interface BundleTransaction {
  agents: AgentsStore;
  memory: MemoryStore;
  /**
   * Runs `work` under a savepoint and keeps its writes only when it answers
   * `keep: true` (an update that changed nothing is undone, updatedAt included).
   */
  tentatively<T>(work: () => Promise<{ value: T; keep: boolean }>): Promise<T>;
  /** Tools owned by the bundle or named in scope.names (tools an MCP sync created are left out: their set owns them). */
  findTools(scope: BundleScope): Promise<ToolRecord[]>;
  findToolSets(scope: BundleScope): Promise<ToolSetRecord[]>;
  findMemoryLayers(scope: BundleScope): Promise<MemoryLayerRecord[]>;
  findAgents(scope: BundleScope): Promise<AgentRecord[]>;
  /** Every variation of the agents, in creation order. */
  variationsOf(agentIds: readonly string[]): Promise<VariationRecord[]>;
  /** Every entry (with content) of the layers, in creation order. */
  entriesOf(layerIds: readonly string[]): Promise<MemoryEntryRecord[]>;
}

export interface BundleStore {
  /** Runs `work` in one database transaction (run again whole after a deadlock; see `serialised`). */
  transaction<T>(work: (tx: BundleTransaction) => Promise<T>): Promise<T>;
  /**
   * Runs `work` in one database transaction, then `afterCommit` with its value
   * once it has committed (not when it threw). The transactions of applies
   * and deletes of one bundle are serialised (a transaction-scoped lock: a
   * lock held past the commit would need a connection of its own, which
   * deadlocks on the embedded database); their after-commit changes
   * (schedules, through their actors) are not, and each schedule actor
   * applies the changes it gets in turn.
   * The find* reads lock the rows they return until the commit (in id order),
   * so applies and deletes of different bundles that share rows, reading them
   * before writing and in one order of kinds, wait for each other instead of
   * deadlocking. The work runs again whole when the database still aborts it
   * for a deadlock or a serialization failure: it must have no other effects;
   * those belong in `afterCommit`.
   * @throws AbortedError when it was aborted that way on every run
   */
  serialised<T, R>(workspaceId: string, bundleKey: string, work: (tx: BundleTransaction) => Promise<T>, afterCommit: (value: T) => Promise<R>): Promise<R>;
}
