// The usage roll-ups in Postgres (persistence/repositories/usage.store.ts):
// deltas projected as the objective kind does, through the projector's one
// statement (a turn alone, in its transaction) and through the batch
// statement's CTEs, read back for many ranges and every dimension, and
// compared with the deltas summed by hand: a range's terms (8-day buckets,
// days, hours, some taken away) count each usage once. Paging, another
// workspace's rows and tenant erasure, too. Batches pick their rows' slot at
// random: sums span slots, and two batches of the same keys in different
// slots never wait for each other.
import assert from 'node:assert/strict';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { newId } from '../../src/ids';
import type { ObjectiveChange } from '../../src/objectives/objective-events';
import type { ProjectionConnection } from '../../src/ports/objectives-store';
import type { UsageStore } from '../../src/ports/usage-store';
import { ERASED_TENANT_KEY, HOUR_MS, keyOf, NO_TENANT_KEY, USAGE_DIMENSIONS, type UsageDelta, type UsageDimension, type UsageRange, type UsageSums } from '../../src/usage/usage-rollup';
import { createDataSource } from '../../persistence/data-source';
import { createObjectivesStore } from '../../persistence/repositories/objectives.store';
import { createUsageStore, USAGE_ROLLUP_SLOTS, usageRollupParameters, usageRollupStatements } from '../../persistence/repositories/usage.store';
import { sharedTestDatabase } from '../support/global-setup';

type Changes = Array<{ actorId: string; change: ObjectiveChange }>;

/** A small deterministic generator (the same deltas every run). */
function generator(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
}

const START = Date.parse('2026-02-26T00:00:00.000Z');
const SPAN_HOURS = 10 * 24;

function deltasOf(seed: number, count: number): UsageDelta[] {
  const next = generator(seed);
  return Array.from({ length: count }, () => ({
    // Any millisecond of the ten days.
    createdAt: new Date(START + next(SPAN_HOURS) * HOUR_MS + next(HOUR_MS)).toISOString(),
    agentId: `agent_${next(3)}`,
    variationId: `agentvar_${next(4)}`,
    tenantId: next(6) === 0 ? null : `tenant_${next(5)}`,
    modelId: ['builtin/scripted', 'openai/gpt-4o-mini'][next(2)],
    promptTokens: next(3) === 0 ? 0 : 1 + next(1000),
    completionTokens: next(200),
    // Quarters of a cent: exact in binary, so sums in any order agree.
    costCents: next(40) / 4,
    objectives: next(3) === 0 ? 1 : 0,
  }));
}

/** The sums by key of `deltas` within the range, by hand. */
function expected(deltas: UsageDelta[], dimension: UsageDimension, range: UsageRange): Map<string, UsageSums> {
  const sums = new Map<string, UsageSums>();
  for (const delta of deltas) {
    const at = Date.parse(delta.createdAt);
    if (at < range.from.getTime() || at >= range.to.getTime()) continue;
    if (!delta.promptTokens && !delta.completionTokens && !delta.costCents && !delta.objectives) continue;
    const key = keyOf(delta, dimension);
    const sum = sums.get(key) ?? { promptTokens: 0, completionTokens: 0, costCents: 0, objectiveCount: 0 };
    sum.promptTokens += delta.promptTokens;
    sum.completionTokens += delta.completionTokens;
    sum.costCents += delta.costCents;
    sum.objectiveCount += delta.objectives;
    sums.set(key, sum);
  }
  return new Map([...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

describe('usage roll-ups store', function () {
  this.timeout(60_000);
  let dataSource: DataSource;
  let pool: Pool;
  let usage: UsageStore;
  const objectives = () => createObjectivesStore(dataSource);
  const workspaceId = newId('workspace');
  const otherWorkspaceId = newId('workspace');
  const deltas = deltasOf(7, 600);
  const otherDeltas = deltasOf(11, 50).map((delta) => ({ ...delta, agentId: 'agent_other', tenantId: 'tenant_other' }));

  const changesOf = (workspace: string, batch: UsageDelta[]): Changes => batch.map((delta) => ({
    actorId: 'obj_x', change: { type: 'objective_usage', objectiveId: 'obj_x', workspaceId: workspace, delta },
  }));

  /** In a transaction on a raw pg connection, as the runtime's projector path does. */
  async function inTransaction(run: (connection: ProjectionConnection) => Promise<void>): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await run({ query: async (sql, parameters) => (await client.query(sql, parameters)).rows });
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** The projection's statements as the batch statement runs them: CTEs beside the batch's own (turn_outbox). */
  async function asBatchStatement(changes: Changes): Promise<void> {
    const projection = objectives().projection(changes);
    assert.ok(projection, 'usage changes take the batch statement');
    const ctes = projection.statements.map((statement, index) => `w${index} AS (${statement})`);
    await pool.query(`WITH turn_outbox AS (SELECT NULL::text AS id, NULL::jsonb AS payload WHERE false), ${ctes.join(', ')} SELECT 1`, projection.parameters);
  }

  async function all(dimension: UsageDimension, range: UsageRange, workspace = workspaceId): Promise<Map<string, UsageSums>> {
    const page = await usage.page({ workspaceId: workspace, dimension, range, limit: 1000 });
    assert.equal(page.next, null);
    return new Map(page.items.map(({ key, ...sums }) => [key, sums]));
  }

  before(async () => {
    const database = await sharedTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    pool = new Pool({ connectionString: database.url, max: 2 });
    usage = createUsageStore(dataSource);
    // Batches of 1 to 40 deltas, alternately on the two paths; the same rows recur within a batch.
    for (let index = 0, size = 1; index < deltas.length; index += size, size = (size % 40) + 1) {
      const changes = changesOf(workspaceId, deltas.slice(index, index + size));
      if (size % 2) await inTransaction((connection) => objectives().project(connection, changes));
      else await asBatchStatement(changes);
    }
    await asBatchStatement(changesOf(otherWorkspaceId, otherDeltas));
  });

  after(async () => {
    await pool?.end();
    await dataSource?.destroy();
  });

  it('sums each usage once over any range of hours, for every dimension: 8-day buckets, days and hours, an edge taken as a bucket minus its rest', async () => {
    const hour = (offset: number) => new Date(START + offset * HOUR_MS);
    const ranges: UsageRange[] = [
      { from: hour(-24), to: hour(SPAN_HOURS + 24) }, // all of it
      { from: hour(0), to: hour(24) }, // one whole day
      { from: hour(5), to: hour(19) }, // inside a day
      { from: hour(22), to: hour(27) }, // across midnight, no whole day
      { from: hour(13), to: hour(24 * 4 + 7) }, // edge hours, whole days, edge hours
      { from: hour(24 * 3), to: hour(24 * 7 + 1) }, // whole days and one hour
      // The 8-day buckets of the ten days start at hours 48 and 240 (02-28 and 03-08: on the Unix epoch).
      { from: hour(2), to: hour(24 * 10 + 2) }, // a whole 8-day bucket, two days minus two hours before it, two hours after it
      { from: hour(48 + 25), to: hour(240 - 1) }, // most of an 8-day bucket: it minus a day and an hour at the start and an hour at the end
      { from: hour(40), to: hour(40) }, // empty
      { from: hour(SPAN_HOURS + 1), to: hour(SPAN_HOURS + 48) }, // after everything
    ];
    const next = generator(3);
    for (let extra = 0; extra < 12; extra++) {
      const from = next(SPAN_HOURS);
      ranges.push({ from: hour(from), to: hour(from + 1 + next(SPAN_HOURS - from)) });
    }
    for (const range of ranges) {
      for (const dimension of USAGE_DIMENSIONS) {
        const what = `${dimension} over [${range.from.toISOString()}, ${range.to.toISOString()})`;
        assert.deepEqual([...(await all(dimension, range))], [...expected(deltas, dimension, range)], what);
      }
    }
  });

  it('pages through the keys in key order with a cursor key; a page leaves out the keys with nothing in the range', async () => {
    const range = { from: new Date(START), to: new Date(START + 30 * HOUR_MS) };
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await usage.page({ workspaceId, dimension: 'tenant', range, after, limit: 2 });
      assert.ok(page.items.length <= 2);
      seen.push(...page.items.map((item) => item.key));
      pages += 1;
      if (page.next === null) break;
      after = page.next;
    }
    assert.deepEqual(seen, [...expected(deltas, 'tenant', range).keys()]);
    assert.ok(seen.includes(NO_TENANT_KEY), 'objectives without a tenant have a key of their own');
    assert.ok(pages >= 3);

    // A range where most keys had nothing: keys whose first and last hours span it are looked at, and may leave a page short.
    const quiet = { from: new Date(START + 100 * HOUR_MS), to: new Date(START + 101 * HOUR_MS) };
    const items: string[] = [];
    after = undefined;
    for (;;) {
      const page = await usage.page({ workspaceId, dimension: 'tenant', range: quiet, after, limit: 2 });
      items.push(...page.items.map((item) => item.key));
      if (page.next === null) break;
      after = page.next;
    }
    assert.deepEqual(items, [...expected(deltas, 'tenant', quiet).keys()]);
  });

  it('spreads batches over slots, so two open batches of the same keys in different slots do not wait for each other', async () => {
    const [{ slots }] = await dataSource.query('SELECT count(DISTINCT slot)::int AS slots FROM usage_rollups WHERE workspace_id = $1', [workspaceId]);
    assert.ok(slots > 1 && slots <= USAGE_ROLLUP_SLOTS, `the batches above wrote ${slots} slots`);
    const workspace = newId('workspace');
    const batch = changesOf(workspace, deltasOf(3, 5).map((delta) => ({ ...delta, createdAt: new Date(START).toISOString() })));
    const [rows, keys] = usageRollupStatements('$1', '$2');
    const write = (client: { query: (sql: string, values: unknown[]) => Promise<unknown> }, slot: number) =>
      client.query(`WITH r AS (${rows}), k AS (${keys}) SELECT 1`, usageRollupParameters(batch, slot));
    const first = await pool.connect();
    const second = await pool.connect();
    try {
      await write(first, 0); // the rows and keys exist
      await first.query('BEGIN');
      await write(first, 1); // rows of slot 1 locked until the commit
      await second.query("SET lock_timeout = '200ms'");
      await write(second, 2);
      await assert.rejects(write(second, 1), /lock timeout/, 'the same slot waits for the open batch');
      await first.query('COMMIT');
    } finally {
      await second.query('RESET lock_timeout').catch(() => undefined);
      first.release();
      second.release();
    }
    const range = { from: new Date(START), to: new Date(START + HOUR_MS) };
    const committed = expected([...batch, ...batch, ...batch].map(({ change }) => (change as { delta: UsageDelta }).delta), 'agent', range);
    assert.deepEqual([...(await all('agent', range, workspace))], [...committed], 'slots 0, 1 and 2 summed');
  });

  it("never shows another workspace's sums", async () => {
    const range = { from: new Date(START - 24 * HOUR_MS), to: new Date(START + (SPAN_HOURS + 24) * HOUR_MS) };
    const agents = await all('agent', range);
    assert.equal(agents.has('agent_other'), false);
    assert.deepEqual([...(await all('agent', range, otherWorkspaceId)).keys()], ['agent_other']);
    assert.deepEqual([...(await all('tenant', range, otherWorkspaceId))], [...expected(otherDeltas, 'tenant', range)]);
  });

  it("moves an erased tenant's sums to the erased key, leaving no row or key under its id; the totals stay", async () => {
    const range = { from: new Date(START - 24 * HOUR_MS), to: new Date(START + (SPAN_HOURS + 24) * HOUR_MS) };
    const before = await all('tenant', range);
    const models = await all('model', range);
    await usage.eraseTenant(workspaceId, 'tenant_1');
    await usage.eraseTenant(workspaceId, 'tenant_3');
    await usage.eraseTenant(workspaceId, 'tenant_3');
    const after = await all('tenant', range);
    assert.equal(after.has('tenant_1') || after.has('tenant_3'), false);
    const merged = (key: keyof UsageSums) => before.get('tenant_1')![key] + before.get('tenant_3')![key];
    assert.deepEqual(after.get(ERASED_TENANT_KEY), {
      promptTokens: merged('promptTokens'), completionTokens: merged('completionTokens'), costCents: merged('costCents'), objectiveCount: merged('objectiveCount'),
    });
    assert.deepEqual(after.get('tenant_2'), before.get('tenant_2'), 'other tenants keep theirs');
    assert.deepEqual(await all('model', range), models, 'the other dimensions are untouched');
    const [{ count }] = await dataSource.query(
      `SELECT (SELECT count(*) FROM usage_rollups WHERE workspace_id = $1 AND key = ANY($2)) + (SELECT count(*) FROM usage_rollup_keys WHERE workspace_id = $1 AND key = ANY($2)) AS count`,
      [workspaceId, ['tenant_1', 'tenant_3']],
    );
    assert.equal(Number(count), 0);
    // Day and hour rows moved alike: any range still adds up.
    const part = { from: new Date(START + 13 * HOUR_MS), to: new Date(START + (24 * 4 + 7) * HOUR_MS) };
    const expectedPart = expected(deltas.map((delta) => (delta.tenantId === 'tenant_1' || delta.tenantId === 'tenant_3' ? { ...delta, tenantId: ERASED_TENANT_KEY } : delta)), 'tenant', part);
    assert.deepEqual([...(await all('tenant', part))], [...expectedPart]);
  });
});
