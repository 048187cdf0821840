// Storage port of the models area: the per-workspace copies of the catalog and
// the workspace's own models. persistence/repositories/models.store.ts
// implements it over TypeORM.
import type { ModelRecord, ModelSource, ModelStatus } from '../models/records';
import type { PageRequest } from '../resource/pagination';
import type { ListFilter } from './foundation-store';

/** A workspace lacking some catalog models (found by the start-up reconcile). */
export interface WorkspaceGap {
  workspaceId: string;
  accountId: string;
  /** Catalog ids the workspace has no row for. */
  missing: string[];
}

/** How many models of a workspace share a provider, a provider key (null: catalog models) and a status. */
export interface ModelCountRow {
  provider: string;
  aiProviderKeyId: string | null;
  status: ModelStatus;
  count: number;
}

/** A variation naming a model in its `modelConfig.modelId`. */
export interface VariationUsingModel {
  id: string;
  name: string;
  agentId: string;
}

export interface ModelsStore {
  findById(id: string): Promise<ModelRecord | null>;
  /** The workspace's model with this full id (`metadata.name`). */
  findByName(workspaceId: string, name: string): Promise<ModelRecord | null>;
  /** The workspace's model whose name is `name` ignoring case (names are unique that way). */
  findByNameIgnoringCase(workspaceId: string, name: string): Promise<ModelRecord | null>;
  /** @throws AlreadyExistsError when the workspace has a model of that name, ignoring case */
  insert(record: ModelRecord): Promise<ModelRecord>;
  /** @throws AlreadyExistsError when a rename takes the name of another model of the workspace */
  update(id: string, changes: Partial<ModelRecord>): Promise<ModelRecord | null>;
  delete(id: string): Promise<void>;
  /** Rows of `limit + 1` in page order; `prefix` matches the name (or id). */
  list(workspaceId: string, page: PageRequest, filter: ListFilter & { status?: ModelStatus; source?: ModelSource }): Promise<ModelRecord[]>;
  /** Model counts of a workspace by provider, provider key and status (one query). */
  countModels(workspaceId: string): Promise<ModelCountRow[]>;
  /** The first `limit` workspace models served through a provider key, oldest first. */
  listByProviderKey(providerKeyId: string, limit: number): Promise<ModelRecord[]>;
  /** The provider keys of a workspace that some workspace model names. */
  providerKeysInUse(workspaceId: string): Promise<string[]>;
  /** The first `limit` variations of a workspace whose `modelConfig.modelId` is `name`, oldest first. */
  variationsUsing(workspaceId: string, name: string, limit: number): Promise<VariationUsingModel[]>;
  /**
   * Inserts the rows a workspace does not have yet, skipping a name the
   * workspace has in any case (INSERT ... ON CONFLICT DO NOTHING): idempotent.
   * @returns how many rows were inserted
   */
  insertMissing(rows: ModelRecord[]): Promise<number>;
  /** Every workspace lacking at least one of `catalogIds` (a name it has in another case counts as had). */
  findGaps(catalogIds: string[]): Promise<WorkspaceGap[]>;
}
