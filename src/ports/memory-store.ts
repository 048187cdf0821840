// The storage port of the memory area (layers and entries). Services depend
// on this interface; persistence/repositories/memory.store.ts implements it.
import type { MemoryEntryRecord, MemoryEntrySummaryRecord, MemoryLayerRecord, MemoryLayerType } from '../memory/records';
import type { PageRequest } from '../resource/pagination';
import type { ListFilter, RecordTable } from './foundation-store';
import type { UploadStore } from './upload-store';

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
  };
  entries: Omit<RecordTable<MemoryEntryRecord>, 'findById'> & {
    /** The entry with its body, or null. */
    findById(id: string): Promise<MemoryEntryRecord | null>;
    /** Summaries (no body) of a layer's entries, `limit + 1` in page order; `keyPrefix` is case-sensitive. */
    list(layerId: string, page: PageRequest, filter: { keyPrefix?: string; labels?: Record<string, string> }): Promise<MemoryEntrySummaryRecord[]>;
    /** Entries of the given layers holding exactly `key` (for stack resolution). */
    findByKey(layerIds: readonly string[], key: string): Promise<MemoryEntryRecord[]>;
  };
  /** Uploads, bound to the same transaction (entries consume them). */
  uploads: UploadStore;
}
