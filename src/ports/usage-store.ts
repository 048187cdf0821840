// The storage port of the usage roll-ups (src/usage/usage-rollup.ts): the
// rows the objective kind's projector adds to in its turns (through the
// objectives store's one statement), and the reads of the API.
// persistence/repositories/usage.store.ts implements it.
import type { UsageDimension, UsageRange, UsageSums } from '../usage/usage-rollup';

export interface UsagePageRequest {
  workspaceId: string;
  dimension: UsageDimension;
  range: UsageRange;
  /** The page starts after this key (key order); undefined for the first page. */
  after?: string;
  /** How many keys the page looks at. */
  limit: number;
}

export interface UsagePage {
  /** The keys of the page that had usage or objectives in the range, in key order. */
  items: Array<{ key: string } & UsageSums>;
  /** The last key the page looked at when more keys follow, else null. */
  next: string | null;
}

export interface UsageStore {
  /**
   * Sums over the range of the next `limit` keys of the dimension (in key
   * order) whose first and last hours overlap it; a key with nothing in the
   * range is looked at but not an item, so a page may hold fewer items.
   */
  page(request: UsagePageRequest): Promise<UsagePage>;
  /** Moves the tenant's sums to ERASED_TENANT_KEY (tenant erasure); idempotent. */
  eraseTenant(workspaceId: string, tenantId: string): Promise<void>;
}
