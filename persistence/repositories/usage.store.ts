// UsageStore over Postgres: the usage roll-ups (migrations UsageRollups,
// UsageRollupSlots). The objective kind's projector adds to them in its
// turns, with the statements below as two more CTEs of the objectives
// store's one statement (no round trip of their own): one upsert of the
// hour, day and 8-day rows, summed per row in the batch, and one of the keys'
// first and last hours. A batch writes the rows of one slot of each key,
// picked at random: every turn of a busy agent adds to the same hour, and
// batches written at once (the writer's lanes, other nodes) would otherwise
// wait for each other's commit on those rows. The API's read is one prepared
// statement: the page's keys in key order (their slots grouped), each key's
// sums from a few index-only range scans of the primary key, which includes
// the sums (the range's terms: whole 8-day buckets, days and hours, some
// taken away), every slot of a bucket adjacent in it.
import type { DataSource } from 'typeorm';
import type { ObjectiveChange } from '../../src/objectives/objective-events';
import type { UsagePage, UsagePageRequest, UsageStore } from '../../src/ports/usage-store';
import { roundCents } from '../../src/models/model-usage';
import { ERASED_TENANT_KEY, rangeTerms, rollupRowsOf } from '../../src/usage/usage-rollup';
import { readRows, readStatement } from './record-table';

const SUMS = 'prompt_tokens, completion_tokens, cost_cents, objective_count';
const ADD_SUMS = `prompt_tokens = u.prompt_tokens + excluded.prompt_tokens, completion_tokens = u.completion_tokens + excluded.completion_tokens,
      cost_cents = u.cost_cents + excluded.cost_cents, objective_count = u.objective_count + excluded.objective_count`;
/** A key row takes an earlier first or a later last hour; otherwise (the common case) it stays as it is. */
const WIDEN_HOURS = `first_hour = least(k.first_hour, excluded.first_hour), last_hour = greatest(k.last_hour, excluded.last_hour)
      WHERE k.first_hour > excluded.first_hour OR k.last_hour < excluded.last_hour`;

/**
 * How many rows of each bucket a key's sums may be spread over: two batches
 * written at once wait for each other on a key's rows once in this many
 * times, and a report reads up to this many rows per bucket of a busy key.
 */
export const USAGE_ROLLUP_SLOTS = 8;

/**
 * The roll-up upserts, fed the JSON arrays `$rows` and `$keys` of
 * usageRollupParameters (one slot, sorted by key, so two batches lock their
 * common rows in the same order).
 */
export function usageRollupStatements(rows: string, keys: string): [string, string] {
  return [`
    INSERT INTO usage_rollups AS u (workspace_id, dimension, key, bucket_hours, bucket_start, slot, ${SUMS})
    SELECT r.workspace_id, r.dimension, r.key, r.bucket_hours, r.bucket_start, r.slot, r.prompt_tokens, r.completion_tokens, r.cost_cents, r.objective_count
    FROM json_to_recordset(${rows}::json) AS r(workspace_id text, dimension text, key text, bucket_hours integer, bucket_start timestamptz,
      slot smallint, prompt_tokens bigint, completion_tokens bigint, cost_cents double precision, objective_count integer)
    ON CONFLICT (workspace_id, dimension, key, bucket_hours, bucket_start, slot) DO UPDATE SET ${ADD_SUMS}`, `
    INSERT INTO usage_rollup_keys AS k (workspace_id, dimension, key, slot, first_hour, last_hour)
    SELECT r.workspace_id, r.dimension, r.key, r.slot, r.first_hour, r.last_hour
    FROM json_to_recordset(${keys}::json) AS r(workspace_id text, dimension text, key text, slot smallint, first_hour timestamptz, last_hour timestamptz)
    ON CONFLICT (workspace_id, dimension, key, slot) DO UPDATE SET ${WIDEN_HOURS}`];
}

/**
 * The two JSON arrays of usageRollupStatements for a batch's changes (its
 * `objective_usage` ones), in one slot picked at random (`slot` for tests).
 */
export function usageRollupParameters(
  changes: ReadonlyArray<{ change: ObjectiveChange }>,
  slot = Math.floor(Math.random() * USAGE_ROLLUP_SLOTS),
): [rows: string, keys: string] {
  const deltas = changes.flatMap(({ change }) => (change.type === 'objective_usage' ? [{ workspaceId: change.workspaceId, delta: change.delta }] : []));
  if (!deltas.length) return ['[]', '[]'];
  const { rows, keys } = rollupRowsOf(deltas);
  return [
    JSON.stringify(rows.map((row) => ({
      workspace_id: row.workspaceId, dimension: row.dimension, key: row.key, bucket_hours: row.bucketHours, bucket_start: row.bucketStart, slot,
      prompt_tokens: row.promptTokens, completion_tokens: row.completionTokens, cost_cents: row.costCents, objective_count: row.objectiveCount,
    }))),
    JSON.stringify(keys.map((key) => ({ workspace_id: key.workspaceId, dimension: key.dimension, key: key.key, slot, first_hour: key.firstHour, last_hour: key.lastHour }))),
  ];
}

/**
 * The page: $6 keys of the dimension in key order whose first and last hours
 * (over their slots) overlap [$4, $5), from $3 on the first page ('', the
 * least text: objectives without a tenant have that key) and after it on
 * later ones, each with its
 * sums over the range's terms (rangeTerms: $7 bucket sizes, $8 and $9 the
 * starts, $10 the signs), one index-only range scan of the primary key per
 * term. A key whose sums are all 0 had nothing in the range (every row adds
 * something, and a term taken away is part of one added).
 */
const pageStatement = (after: boolean) => readStatement(`
  WITH k AS (
    SELECT key FROM usage_rollup_keys
    WHERE workspace_id = $1 AND dimension = $2 AND key ${after ? '>' : '>='} $3
    GROUP BY key HAVING max(last_hour) >= $4 AND min(first_hour) < $5
    ORDER BY key LIMIT $6
  ), t AS (
    SELECT * FROM unnest($7::int[], $8::timestamptz[], $9::timestamptz[], $10::int[]) AS t(bucket_hours, from_start, to_start, sign)
  )
  SELECT k.key, s.prompt_tokens, s.completion_tokens, s.cost_cents, s.objective_count
  FROM k CROSS JOIN LATERAL (
    SELECT sum(t.sign * r.prompt_tokens)::text AS prompt_tokens, sum(t.sign * r.completion_tokens)::text AS completion_tokens,
      sum(t.sign * r.cost_cents) AS cost_cents, sum(t.sign * r.objective_count)::text AS objective_count
    FROM t CROSS JOIN LATERAL (
      SELECT ${SUMS} FROM usage_rollups r
      WHERE r.workspace_id = $1 AND r.dimension = $2 AND r.key = k.key AND r.bucket_hours = t.bucket_hours
        AND r.bucket_start >= t.from_start AND r.bucket_start < t.to_start
      OFFSET 0 -- kept a subquery: flattened, the planner reads all the key's rows and joins them with t by hash
    ) r
  ) s
  ORDER BY k.key`);
const FIRST_PAGE = pageStatement(false);
const NEXT_PAGE = pageStatement(true);

/**
 * Tenant erasure: the tenant's rows are added to ERASED_TENANT_KEY's of the
 * same buckets and slots and deleted, its key rows likewise; one statement.
 */
const ERASE_TENANT = `
  WITH moved AS (
    DELETE FROM usage_rollups WHERE workspace_id = $1 AND dimension = 'tenant' AND key = $2
    RETURNING workspace_id, dimension, bucket_hours, bucket_start, slot, ${SUMS}
  ), merged AS (
    INSERT INTO usage_rollups AS u (workspace_id, dimension, key, bucket_hours, bucket_start, slot, ${SUMS})
    SELECT workspace_id, dimension, $3, bucket_hours, bucket_start, slot, ${SUMS} FROM moved ORDER BY bucket_hours, bucket_start, slot
    ON CONFLICT (workspace_id, dimension, key, bucket_hours, bucket_start, slot) DO UPDATE SET ${ADD_SUMS}
  ), moved_key AS (
    DELETE FROM usage_rollup_keys WHERE workspace_id = $1 AND dimension = 'tenant' AND key = $2 RETURNING workspace_id, dimension, slot, first_hour, last_hour
  ), merged_key AS (
    INSERT INTO usage_rollup_keys AS k (workspace_id, dimension, key, slot, first_hour, last_hour)
    SELECT workspace_id, dimension, $3, slot, first_hour, last_hour FROM moved_key ORDER BY slot
    ON CONFLICT (workspace_id, dimension, key, slot) DO UPDATE SET ${WIDEN_HOURS}
  )
  SELECT count(*)::int AS rows FROM moved`;

interface PageRow {
  key: string;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  cost_cents: number | null;
  objective_count: string | null;
}

export function createUsageStore(dataSource: DataSource): UsageStore {
  const manager = dataSource.manager;
  return {
    async page({ workspaceId, dimension, range, after, limit }: UsagePageRequest): Promise<UsagePage> {
      const terms = rangeTerms(range);
      const values = [
        workspaceId, dimension, after ?? '', range.from, range.to, limit + 1,
        terms.map((term) => term.bucketHours), terms.map((term) => term.from), terms.map((term) => term.to), terms.map((term) => term.sign),
      ];
      const rows = (await readRows(manager, after === undefined ? FIRST_PAGE : NEXT_PAGE, values)) as unknown as PageRow[];
      const more = rows.length > limit;
      const looked = more ? rows.slice(0, limit) : rows;
      const sums = looked.map((row) => ({
        key: row.key,
        promptTokens: Number(row.prompt_tokens),
        completionTokens: Number(row.completion_tokens),
        costCents: roundCents(Number(row.cost_cents)),
        objectiveCount: Number(row.objective_count),
      }));
      return {
        items: sums.filter((item) => item.promptTokens !== 0 || item.completionTokens !== 0 || item.costCents !== 0 || item.objectiveCount !== 0),
        next: more ? looked[looked.length - 1].key : null,
      };
    },

    async eraseTenant(workspaceId, tenantId) {
      await dataSource.query(ERASE_TENANT, [workspaceId, tenantId, ERASED_TENANT_KEY]);
    },
  };
}
