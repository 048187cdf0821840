// The storage port of tenants and subjects. persistence/repositories/tenant.store.ts
// implements it; upserts are single INSERT ... ON CONFLICT statements, so
// concurrent assertions of one externalId converge on one row.
import type { ListFilter } from './foundation-store';
import type { PageRequest } from '../resource/pagination';
import type { AssertedFields, SubjectRecord, TenantRecord } from '../tenants/records';

export interface TenantListFilter extends ListFilter {
  externalId?: string;
}

export interface TenantStore {
  /**
   * Runs `work` in one database transaction (joins the current one when there is one).
   * A deadlock or serialization failure runs the outermost transaction again
   * whole (persistence/transaction-runner.ts): `work` must have no effect
   * outside the database.
   * @throws AbortedError when that happened on every run (the client may retry)
   */
  transaction<T>(work: (store: TenantStore) => Promise<T>): Promise<T>;

  tenants: {
    /**
     * Inserts `record`, or, when the workspace already has a tenant with its
     * externalId, updates the `given` fields of that row (updatedAt moves only
     * when a value changed). Returns the stored row.
     */
    upsert(record: TenantRecord, given: AssertedFields): Promise<TenantRecord>;
    findById(id: string): Promise<TenantRecord | null>;
    /** Rows of `limit + 1` in page order (see toPage). */
    list(workspaceId: string, page: PageRequest, filter: TenantListFilter): Promise<TenantRecord[]>;
    /** Deletes the tenant; its subjects go with it. */
    delete(id: string): Promise<void>;
  };
  subjects: {
    /** Like tenants.upsert; the identity is (workspace, tenant or none, externalId). */
    upsert(record: SubjectRecord, given: AssertedFields): Promise<SubjectRecord>;
    findById(id: string): Promise<SubjectRecord | null>;
    listByTenant(tenantId: string, page: PageRequest, filter: TenantListFilter): Promise<SubjectRecord[]>;
    /** Ids of every subject of the tenant. */
    idsByTenant(tenantId: string): Promise<string[]>;
    countByTenant(tenantIds: string[]): Promise<Map<string, number>>;
    delete(id: string): Promise<void>;
  };
}
