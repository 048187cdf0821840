// The storage port of the memory area (layers, entries, and the stack reads
// objectives make). Services depend on this interface;
// persistence/repositories/memory.store.ts implements it.
import type { MemoryEntryRecord, MemoryEntrySummaryRecord, MemoryLayerRecord, MemoryLayerType } from '../memory/records';
import type { SkillSummary } from '../memory/skills-manifest';
import type { PageRequest } from '../resource/pagination';
import type { ListFilter, RecordTable } from './foundation-store';
import type { UploadStore } from './upload-store';

/** What an objective's creation reads of its memory stack, in one statement. */
export interface StackReadRequest {
  workspaceId: string;
  /** The stack, bottom to top. */
  layerIds: readonly string[];
  /** Layers to check (the objective's `memoryLayerIds`): returned whatever their workspace, absent when unknown. */
  checkIds: readonly string[];
  /** Most skills to list. */
  skillsLimit: number;
}

export interface StackRead {
  /** The layers of `checkIds` that exist. */
  checked: MemoryLayerRecord[];
  /** Distinct keys over the stack's SKILLS layers of the workspace (system-managed ones left out). */
  skillCount: number;
  /** The first `skillsLimit` of those keys in byte order, each with the topmost layer's title and description. */
  skills: SkillSummary[];
}

/** How a resolved key marks its layer used (`info.lastUsedAt`). */
export interface MarkUsedOptions {
  /** A layer whose lastUsedAt is within this many milliseconds of now is left alone: one write per layer per interval, however many reads. */
  slackMs: number;
}

export interface MemoryStore {
  /**
   * Runs `work` in one database transaction with a store bound to it (joins an open one).
   * A deadlock or serialization failure runs the outermost transaction again
   * whole (persistence/transaction-runner.ts): `work` must have no effect
   * outside the database.
   * @throws AbortedError when that happened on every run (the client may retry)
   */
  transaction<T>(work: (store: MemoryStore) => Promise<T>): Promise<T>;

  layers: RecordTable<MemoryLayerRecord> & {
    /** Rows of `limit + 1` in page order (see toPage). */
    list(workspaceId: string, page: PageRequest, filter: ListFilter & { type?: MemoryLayerType }): Promise<MemoryLayerRecord[]>;
    /** Entry counts by layer id (layers without entries are absent). */
    countEntries(layerIds: readonly string[]): Promise<Map<string, number>>;
    /**
     * How many variations the layer is assigned to (0 while the agents area's
     * assignment table does not exist yet).
     */
    countAssignments(layerId: string): Promise<number>;
    /** Sets `lastUsedAt` of the layers to `at` (never moves it backwards). */
    markUsed(layerIds: readonly string[], at: Date): Promise<void>;
    /**
     * The episodic layer of (`layer.workspaceId`, `layer.episodicKey`): `layer`
     * inserted when there is none, else the existing one with its `expiresAt`
     * moved. Either way `expiresAt` is the database's now + `ttlSeconds`
     * (null: no expiry). One statement on the unique (workspace, episodic key)
     * index: callers racing with one key all get the same row, and in a
     * transaction the row stays locked against the sweeper until it commits.
     */
    upsertEpisodic(layer: MemoryLayerRecord, ttlSeconds: number | null): Promise<MemoryLayerRecord>;
    /** Moves the `expiresAt` of the episodic layer of (workspace, key) as upsertEpisodic does; null when there is none. */
    refreshEpisodic(workspaceId: string, episodicKey: string, ttlSeconds: number | null): Promise<MemoryLayerRecord | null>;
    /**
     * Deletes, with their entries, at most `limit` episodic layers whose
     * `expiresAt` has passed by the database's clock, checked again in the
     * deleting statement (a layer refreshed meanwhile stays). `busy` when
     * another node is deleting now (its transaction holds the sweep's lock).
     */
    deleteExpiredEpisodic(limit: number): Promise<{ deleted: number; busy: boolean }>;
  };
  entries: Omit<RecordTable<MemoryEntryRecord>, 'findById'> & {
    /** The entry with its body, or null. */
    findById(id: string): Promise<MemoryEntryRecord | null>;
    /** Summaries (no body) of a layer's entries, `limit + 1` in page order; `keyPrefix` is case-sensitive. */
    list(layerId: string, page: PageRequest, filter: { keyPrefix?: string; labels?: Record<string, string> }): Promise<MemoryEntrySummaryRecord[]>;
    /** Entries of the given layers holding exactly `key` (for stack resolution). */
    findByKey(layerIds: readonly string[], key: string): Promise<MemoryEntryRecord[]>;
    /**
     * Inserts `entry`, or, when its layer already holds its key, replaces
     * that entry's content and `updatedAt` (one statement on the unique
     * (layer, key) index: concurrent writers never conflict, the last to
     * commit wins). Returns the stored entry.
     */
    upsertContent(entry: MemoryEntryRecord): Promise<MemoryEntryRecord>;
  };
  /** Memory stacks: what objectives resolve against. */
  stacks: {
    /** The stack read of an objective's creation (checked layers and the skills manifest's entries), one statement. */
    read(request: StackReadRequest): Promise<StackRead>;
    /**
     * The entry under `key` in the topmost of `layerIds` (bottom to top) holding it, or null; in the
     * same statement the winning layer's lastUsedAt moves to the database's now (never backwards).
     */
    resolveKey(layerIds: readonly string[], key: string, markUsed: MarkUsedOptions): Promise<MemoryEntryRecord | null>;
  };
  /** Uploads, bound to the same transaction (entries consume them). */
  uploads: UploadStore;
}
