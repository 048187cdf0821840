// Usage roll-ups (issue 27 item 2): the workspace's model usage summed per
// dimension (agent, variation, tenant, model) in UTC hour and day buckets,
// maintained as the objectives' turns commit. Each turn that used the model
// adds its own calls' usage (never a sub-objective's: that one is counted by
// its own turns, under its own agent) to one hour row and one day row per
// dimension; the turn that creates an objective adds 1 to objectiveCount the
// same way. A range of whole hours reads its whole UTC days from day rows and
// the hours at its edges from hour rows, so a 30-day range reads about 30
// rows per key whatever the traffic. Pure: the rows' storage is
// persistence/repositories/usage.store.ts.

export const USAGE_DIMENSIONS = ['agent', 'variation', 'tenant', 'model'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/** The tenant key of objectives without a tenant (the API shows it as `key: null`). */
export const NO_TENANT_KEY = '';
/** The tenant key an erased tenant's sums are moved to (tenant erasure), so no erased tenant id stays. */
export const ERASED_TENANT_KEY = '[erased]';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** What one objective turn adds to the roll-ups (the `objective_usage` change). */
export interface UsageDelta {
  /** When it happened: the turn's time (ISO 8601). */
  at: string;
  agentId: string;
  variationId: string;
  tenantId: string | null;
  /** The model the objective's variation runs (`family/model`). */
  modelId: string;
  promptTokens: number;
  completionTokens: number;
  costCents: number;
  /** 1 in the turn that created the objective, else 0. */
  objectives: 0 | 1;
}

/** The sums of one key over a range, as the API shows them. */
export interface UsageSums {
  promptTokens: number;
  completionTokens: number;
  costCents: number;
  objectiveCount: number;
}

/** Buckets are an hour or a UTC day long. */
export type BucketHours = 1 | 24;

/** One roll-up row's increment. */
export interface UsageRollupRow extends UsageSums {
  workspaceId: string;
  dimension: UsageDimension;
  key: string;
  bucketHours: BucketHours;
  /** The bucket's start (ISO 8601, UTC). */
  bucketStart: string;
}

/** The first and last hour a key had a row in: a range outside them has nothing of it. */
export interface UsageKeyRow {
  workspaceId: string;
  dimension: UsageDimension;
  key: string;
  firstHour: string;
  lastHour: string;
}

export function floorToHour(time: number): number {
  return Math.floor(time / HOUR_MS) * HOUR_MS;
}

export function ceilToHour(time: number): number {
  return Math.ceil(time / HOUR_MS) * HOUR_MS;
}

/** The key of `delta` under `dimension`. */
export function keyOf(delta: UsageDelta, dimension: UsageDimension): string {
  switch (dimension) {
    case 'agent':
      return delta.agentId;
    case 'variation':
      return delta.variationId;
    case 'tenant':
      return delta.tenantId ?? NO_TENANT_KEY;
    case 'model':
      return delta.modelId;
  }
}

/** Whether a delta adds anything (a model call reporting no usage adds nothing). */
export function addsToRollups(delta: Pick<UsageDelta, 'promptTokens' | 'completionTokens' | 'costCents' | 'objectives'>): boolean {
  return delta.promptTokens !== 0 || delta.completionTokens !== 0 || delta.costCents !== 0 || delta.objectives !== 0;
}

const rowIdentity = (row: Pick<UsageRollupRow, 'workspaceId' | 'dimension' | 'key' | 'bucketHours' | 'bucketStart'>) =>
  `${row.workspaceId}\u0000${row.dimension}\u0000${row.key}\u0000${row.bucketHours}\u0000${row.bucketStart}`;
const keyIdentity = (row: Pick<UsageKeyRow, 'workspaceId' | 'dimension' | 'key'>) => `${row.workspaceId}\u0000${row.dimension}\u0000${row.key}`;
const byIdentity = <T>(identity: (row: T) => string) => (a: T, b: T) => {
  const left = identity(a);
  const right = identity(b);
  return left < right ? -1 : left > right ? 1 : 0;
};

/**
 * The rows a batch of deltas adds to: one hour and one day row per dimension
 * and delta, summed per row (an upsert may touch a row once per statement),
 * and the keys' first and last hours. Both lists are sorted by key, so two
 * batches written at once lock their common rows in the same order (no
 * deadlock).
 */
export function rollupRowsOf(deltas: ReadonlyArray<{ workspaceId: string; delta: UsageDelta }>): { rows: UsageRollupRow[]; keys: UsageKeyRow[] } {
  const rows = new Map<string, UsageRollupRow>();
  const keys = new Map<string, UsageKeyRow>();
  for (const { workspaceId, delta } of deltas) {
    if (!addsToRollups(delta)) continue;
    const at = Date.parse(delta.at);
    const hour = new Date(floorToHour(at)).toISOString();
    const day = new Date(Math.floor(at / DAY_MS) * DAY_MS).toISOString();
    for (const dimension of USAGE_DIMENSIONS) {
      const key = keyOf(delta, dimension);
      for (const [bucketHours, bucketStart] of [[1, hour], [24, day]] as const) {
        const row: UsageRollupRow = { workspaceId, dimension, key, bucketHours, bucketStart, promptTokens: 0, completionTokens: 0, costCents: 0, objectiveCount: 0 };
        const identity = rowIdentity(row);
        const sums = rows.get(identity) ?? row;
        sums.promptTokens += delta.promptTokens;
        sums.completionTokens += delta.completionTokens;
        sums.costCents += delta.costCents;
        sums.objectiveCount += delta.objectives;
        rows.set(identity, sums);
      }
      const keyRow: UsageKeyRow = { workspaceId, dimension, key, firstHour: hour, lastHour: hour };
      const known = keys.get(keyIdentity(keyRow));
      if (!known) keys.set(keyIdentity(keyRow), keyRow);
      else {
        if (hour < known.firstHour) known.firstHour = hour;
        if (hour > known.lastHour) known.lastHour = hour;
      }
    }
  }
  return { rows: [...rows.values()].sort(byIdentity(rowIdentity)), keys: [...keys.values()].sort(byIdentity(keyIdentity)) };
}

/** A range of whole hours, [from, to). */
export interface UsageRange {
  from: Date;
  to: Date;
}

/** Where a range's sums are read: its whole UTC days from day rows, the hours around them from hour rows. */
export interface RangeParts {
  /** [start, end) of the whole days, or null when the range holds none. */
  days: { from: Date; to: Date } | null;
  /** The hours before the first whole day and after the last ([from, to) each; empty when from = to). */
  hours: Array<{ from: Date; to: Date }>;
}

export function rangeParts(range: UsageRange): RangeParts {
  const from = range.from.getTime();
  const to = range.to.getTime();
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to / DAY_MS) * DAY_MS;
  if (firstDay >= lastDay) return { days: null, hours: [{ from: range.from, to: range.to }] };
  return {
    days: { from: new Date(firstDay), to: new Date(lastDay) },
    hours: [{ from: range.from, to: new Date(firstDay) }, { from: new Date(lastDay), to: range.to }],
  };
}
