// Storage port of the models area: the per-workspace copies of the catalog.
// persistence/repositories/models.store.ts implements it over TypeORM.
import type { ModelRecord, ModelStatus } from '../models/records';
import type { PageRequest } from '../resource/pagination';
import type { ListFilter } from './foundation-store';

/** A workspace lacking some catalog models (found by the start-up reconcile). */
export interface WorkspaceGap {
  workspaceId: string;
  accountId: string;
  /** Catalog ids the workspace has no row for. */
  missing: string[];
}

export interface ModelsStore {
  findById(id: string): Promise<ModelRecord | null>;
  /** The workspace's model with this full id (`metadata.name`). */
  findByName(workspaceId: string, name: string): Promise<ModelRecord | null>;
  update(id: string, changes: Partial<ModelRecord>): Promise<ModelRecord | null>;
  /** Rows of `limit + 1` in page order; `prefix` matches the name (or id). */
  list(workspaceId: string, page: PageRequest, filter: ListFilter & { status?: ModelStatus }): Promise<ModelRecord[]>;
  /** Model counts of a workspace for one `spec.provider`, by status. */
  countByProvider(workspaceId: string, provider: string): Promise<{ enabled: number; disabled: number }>;
  /**
   * Inserts the rows a workspace does not have yet
   * (INSERT ... ON CONFLICT (workspace_id, name) DO NOTHING): idempotent.
   * @returns how many rows were inserted
   */
  insertMissing(rows: ModelRecord[]): Promise<number>;
  /** Every workspace lacking at least one of `catalogIds`. */
  findGaps(catalogIds: string[]): Promise<WorkspaceGap[]>;
}
