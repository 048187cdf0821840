// Usage roll-ups (issue 27 item 2): the workspace's model usage summed per
// dimension (agent, variation, tenant, model) in UTC buckets of an hour, a
// day and 8 days, by the objective's creation time: every model call of an
// objective (its own, never a sub-objective's: that one is counted by its own
// turns, under its own agent), whenever it happens, adds to the buckets of
// the objective's `createdAt`, and the turn that creates the objective adds 1
// to objectiveCount there. A range's sums and objectiveCount are so about the
// same objectives: those created in it. Each turn with usage adds to one row
// of each bucket size per dimension. A range of whole hours reads whole
// 8-day buckets, then days, then hours at its edges, an edge taken as a
// bucket minus its rest when that reads fewer rows (rangeTerms), so a 30-day
// range reads about 20 rows per key whatever the traffic. Pure: the rows'
// storage is persistence/repositories/usage.store.ts.

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
  /**
   * The objective's `createdAt` (ISO 8601): every usage of an objective, whenever
   * its model calls happen, is summed in the buckets of its creation, so a
   * range's sums and its objectiveCount are about the same objectives.
   */
  createdAt: string;
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

/**
 * The bucket sizes, in hours: an hour, a UTC day, and 8 days (aligned on the
 * Unix epoch, like the days). Each usage is in one bucket of each size.
 */
export const BUCKET_HOURS = [1, 24, 192] as const;
export type BucketHours = (typeof BUCKET_HOURS)[number];

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

const keyIdentity = (row: Pick<UsageKeyRow, 'workspaceId' | 'dimension' | 'key'>) => `${row.workspaceId}\u0000${row.dimension}\u0000${row.key}`;
/** A map's values in the order of its keys (the rows' identities, each built once). */
const valuesByKey = <T>(map: Map<string, T>): T[] =>
  [...map].sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)).map(([, value]) => value);

/** The hour's start and its bucket starts of each size (ISO 8601), for an hour (ms since the epoch). */
interface HourBuckets {
  hour: string;
  buckets: ReadonlyArray<readonly [BucketHours, string]>;
}

/**
 * The bucket starts of the hours seen lately: a batch's deltas are mostly of
 * objectives created in the same few hours, and formatting four dates per
 * delta was a good part of this per-turn path's cost. Bounded; cleared when full.
 */
const hourBucketsCache = new Map<number, HourBuckets>();
const HOUR_BUCKETS_CACHED = 256;

function hourBucketsOf(hourStart: number): HourBuckets {
  let cached = hourBucketsCache.get(hourStart);
  if (!cached) {
    if (hourBucketsCache.size >= HOUR_BUCKETS_CACHED) hourBucketsCache.clear();
    cached = {
      hour: new Date(hourStart).toISOString(),
      buckets: BUCKET_HOURS.map((bucketHours) => [bucketHours, new Date(Math.floor(hourStart / (bucketHours * HOUR_MS)) * bucketHours * HOUR_MS).toISOString()] as const),
    };
    hourBucketsCache.set(hourStart, cached);
  }
  return cached;
}

/**
 * The rows a batch of deltas adds to: one row of each bucket size per dimension
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
    const { hour, buckets } = hourBucketsOf(floorToHour(Date.parse(delta.createdAt)));
    for (const dimension of USAGE_DIMENSIONS) {
      const key = keyOf(delta, dimension);
      const keyRow: UsageKeyRow = { workspaceId, dimension, key, firstHour: hour, lastHour: hour };
      const identity = keyIdentity(keyRow);
      const known = keys.get(identity);
      if (!known) keys.set(identity, keyRow);
      else {
        if (hour < known.firstHour) known.firstHour = hour;
        if (hour > known.lastHour) known.lastHour = hour;
      }
      for (const [bucketHours, bucketStart] of buckets) {
        const rowIdentity = `${identity}\u0000${bucketHours}\u0000${bucketStart}`;
        let sums = rows.get(rowIdentity);
        if (!sums) {
          sums = { workspaceId, dimension, key, bucketHours, bucketStart, promptTokens: 0, completionTokens: 0, costCents: 0, objectiveCount: 0 };
          rows.set(rowIdentity, sums);
        }
        sums.promptTokens += delta.promptTokens;
        sums.completionTokens += delta.completionTokens;
        sums.costCents += delta.costCents;
        sums.objectiveCount += delta.objectives;
      }
    }
  }
  return { rows: valuesByKey(rows), keys: valuesByKey(keys) };
}

/** A range of whole hours, [from, to). */
export interface UsageRange {
  from: Date;
  to: Date;
}

/**
 * One index range a report reads of each key: the rows of one bucket size
 * starting in [from, to), added (sign 1) or taken away (sign -1).
 */
export interface RangeTerm {
  bucketHours: BucketHours;
  from: Date;
  to: Date;
  sign: 1 | -1;
}

interface HourTerm {
  level: number;
  from: number;
  to: number;
  sign: 1 | -1;
}

/** How many buckets (rows, at most) the terms read. */
const rowsOf = (terms: HourTerm[]) => terms.reduce((rows, term) => rows + (term.to - term.from) / BUCKET_HOURS[term.level], 0);
const negated = (terms: HourTerm[]) => terms.map((term) => ({ ...term, sign: -term.sign as 1 | -1 }));

/**
 * [from, to) in hours, both multiples of the level's bucket, with the fewest
 * rows: whole buckets of the level, and each piece at an edge (inside one
 * bucket) either from smaller buckets, or as that bucket minus the smaller
 * buckets of the rest of it, whichever reads fewer rows.
 */
function termsOf(from: number, to: number, level: number): HourTerm[] {
  if (from >= to) return [];
  if (level === 0) return [{ level, from, to, sign: 1 }];
  const size = BUCKET_HOURS[level];
  const edge = (pieceFrom: number, pieceTo: number): HourTerm[] => {
    const bucketFrom = Math.floor(pieceFrom / size) * size;
    const bucketTo = bucketFrom + size;
    const plain = termsOf(pieceFrom, pieceTo, level - 1);
    const complement: HourTerm[] = [
      { level, from: bucketFrom, to: bucketTo, sign: 1 },
      ...negated(termsOf(bucketFrom, pieceFrom, level - 1)),
      ...negated(termsOf(pieceTo, bucketTo, level - 1)),
    ];
    return rowsOf(complement) < rowsOf(plain) ? complement : plain;
  };
  const firstWhole = Math.ceil(from / size) * size;
  const lastWhole = Math.floor(to / size) * size;
  if (firstWhole > lastWhole) return edge(from, to); // inside one bucket
  return [
    ...edge(from, firstWhole),
    ...(firstWhole < lastWhole ? [{ level, from: firstWhole, to: lastWhole, sign: 1 as const }] : []),
    ...edge(lastWhole, to),
  ];
}

/**
 * Where a range's sums are read: for each bucket size, the index ranges to add
 * and to take away, adjacent ones of the same size and sign merged. A 30-day
 * range reads about 20 rows per key (four 8-day buckets, a few days and a few
 * hours at each edge) in at most 6 index ranges.
 */
export function rangeTerms(range: UsageRange): RangeTerm[] {
  const terms = termsOf(range.from.getTime() / HOUR_MS, range.to.getTime() / HOUR_MS, BUCKET_HOURS.length - 1)
    .sort((a, b) => a.level - b.level || a.sign - b.sign || a.from - b.from);
  const merged: HourTerm[] = [];
  for (const term of terms) {
    const last = merged[merged.length - 1];
    if (last && last.level === term.level && last.sign === term.sign && last.to === term.from) last.to = term.to;
    else merged.push({ ...term });
  }
  return merged.map((term) => ({ bucketHours: BUCKET_HOURS[term.level], from: new Date(term.from * HOUR_MS), to: new Date(term.to * HOUR_MS), sign: term.sign }));
}
