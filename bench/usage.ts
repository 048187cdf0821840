// Usage report benchmark (issue 27 item 2): prints JSON lines of figures,
// asserts nothing. A fresh database holds the roll-ups of OBJECTIVES
// objectives over the last 30 days of one workspace (AGENTS agents of
// VARIATIONS_PER_AGENT variations each, TENANTS tenants, MODELS models),
// seeded with SQL straight into the tables (generate_series: one row of each
// bucket size per dimension and slot, summed, as the objectives' turns would
// have left them; each objective's usage in the buckets of its creation, in
// a slot picked at random as each turn batch picks one). Then the real API
// (no actor runtime) answers GET .../usage over keep-alive HTTP, one request
// at a time, REQUESTS times per groupBy and range after WARMUP requests: p50
// and p99 in milliseconds, from the request's start to its last byte.
// Run with `npm run bench:usage` (OBJECTIVES=100000 for a quicker run;
// KEEP_DATABASE=1 keeps the seeded database).
import { Agent, request } from 'undici';
import { encodeCursor } from '../src/resource/pagination';
import { BUCKET_HOURS } from '../src/usage/usage-rollup';
import { USAGE_ROLLUP_SLOTS } from '../persistence/repositories/usage.store';
import { startBenchNode } from './support/bench-node';
import { analyzeAsAutovacuumWould } from './support/table-statistics';

const OBJECTIVES = Number(process.env.OBJECTIVES ?? 1_000_000);
const AGENTS = 50;
const VARIATIONS_PER_AGENT = 4;
const TENANTS = Number(process.env.TENANTS ?? 20_000);
const MODELS = 8;
const DAYS = 30;
const REQUESTS = Number(process.env.REQUESTS ?? 300);
const WARMUP = Number(process.env.WARMUP ?? 30);
const HOUR_MS = 3_600_000;

function log(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function percentile(sorted: number[], p: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

/*
 * $1 workspace, $2 the end of the 30 days, $3 the bucket sizes in hours. Each objective: a uniform instant
 * of the 30 days, an agent, one of its variations, a tenant (uniform; ids in
 * the API's form), the variation's model, and its model calls' usage.
 */
const SEED_ROLLUPS = `
  WITH o AS MATERIALIZED (
    SELECT $2::timestamptz - random() * interval '${DAYS} days' AS at,
      i % ${AGENTS} AS agent, (i % ${AGENTS}) * ${VARIATIONS_PER_AGENT} + (i / ${AGENTS}) % ${VARIATIONS_PER_AGENT} AS variation,
      floor(random() * ${TENANTS})::int AS tenant,
      (1000 + floor(random() * 6000))::bigint AS prompt_tokens, (100 + floor(random() * 900))::bigint AS completion_tokens,
      round((random() * 4)::numeric, 4)::float8 AS cost_cents, floor(random() * ${USAGE_ROLLUP_SLOTS})::int AS slot
    FROM generate_series(1, ${OBJECTIVES}) AS i
  )
  INSERT INTO usage_rollups (workspace_id, dimension, key, bucket_hours, bucket_start, slot, prompt_tokens, completion_tokens, cost_cents, objective_count)
  SELECT $1, d.dimension, d.key, b.hours, b.bucket_start, o.slot, sum(o.prompt_tokens), sum(o.completion_tokens), sum(o.cost_cents), count(*)
  FROM o
  CROSS JOIN LATERAL (VALUES
    ('agent', 'agent_bench' || lpad(o.agent::text, 21, '0')),
    ('variation', 'agentvar_bench' || lpad(o.variation::text, 18, '0')),
    ('tenant', 'tenant_bench' || lpad(o.tenant::text, 20, '0')),
    ('model', 'vendor-' || (o.variation % ${MODELS}) || '/model-' || (o.variation % ${MODELS}))
  ) AS d(dimension, key)
  CROSS JOIN LATERAL (SELECT hours, to_timestamp(floor(extract(epoch FROM o.at) / (hours * 3600)) * hours * 3600) FROM unnest($3::int[]) AS hours) AS b(hours, bucket_start)
  GROUP BY d.dimension, d.key, b.hours, b.bucket_start, o.slot`;

const SEED_KEYS = `
  INSERT INTO usage_rollup_keys (workspace_id, dimension, key, slot, first_hour, last_hour)
  SELECT workspace_id, dimension, key, slot, min(bucket_start), max(bucket_start) FROM usage_rollups
  WHERE workspace_id = $1 AND bucket_hours = 1 GROUP BY workspace_id, dimension, key, slot`;

async function main(): Promise<void> {
  const api = await startBenchNode({ logLevel: 'warn', poolSize: 4 });
  const dispatcher = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    const account = await api.bootstrap('bench-usage');
    const workspaceId = account.workspaceId;
    const key = await api.request('POST', `/v1/workspaces/${workspaceId}/api_keys`, {
      token: account.globalApiKey.token, body: { metadata: { name: 'usage-reader' }, spec: { permissions: ['objectives:read'] } },
    });
    const token = key.body.spec.token as string;

    const now = Date.now();
    const seedStarted = performance.now();
    await api.dataSource.query(SEED_ROLLUPS, [workspaceId, new Date(now).toISOString(), [...BUCKET_HOURS]]);
    await api.dataSource.query(SEED_KEYS, [workspaceId]);
    await api.dataSource.query('VACUUM (ANALYZE) usage_rollups');
    await api.dataSource.query('VACUUM (ANALYZE) usage_rollup_keys');
    await analyzeAsAutovacuumWould(api.dataSource);
    // The seed's writes flushed now, not by a checkpoint during the first reports (a node's checkpoints spread its turns' writes).
    await api.dataSource.query('CHECKPOINT');
    const rows = await api.dataSource.query(
      `SELECT dimension, bucket_hours, count(*)::int AS rows FROM usage_rollups WHERE workspace_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`, [workspaceId]);
    const [size] = await api.dataSource.query(`SELECT pg_total_relation_size('usage_rollups')::bigint AS rollups, pg_total_relation_size('usage_rollup_keys')::bigint AS keys`);
    log({
      phase: 'seed', objectives: OBJECTIVES, agents: AGENTS, variations: AGENTS * VARIATIONS_PER_AGENT, tenants: TENANTS, models: MODELS, days: DAYS,
      seconds: Number(((performance.now() - seedStarted) / 1000).toFixed(1)),
      rows: Object.fromEntries(rows.map((row: { dimension: string; bucket_hours: number; rows: number }) => [`${row.dimension}/${row.bucket_hours}h`, row.rows])),
      mib: { rollups: Math.round(Number(size.rollups) / 2 ** 20), keys: Math.round(Number(size.keys) / 2 ** 20) },
    });

    const iso = (time: number) => encodeURIComponent(new Date(time).toISOString());
    const day = 24 * HOUR_MS;
    const midnight = Math.floor(now / day) * day;
    const ranges: Array<[name: string, query: string]> = [
      ['default (last 30 days)', ''],
      ['last 7 days', `&from=${iso(now - 7 * day)}`],
      ['last 24 hours', `&from=${iso(now - day)}`],
      ['last 3 hours', `&from=${iso(now - 3 * HOUR_MS)}`],
      ['2 whole days, 10 days ago', `&from=${iso(midnight - 10 * day)}&to=${iso(midnight - 8 * day)}`],
    ];
    const cases: Array<[groupBy: string, range: string, query: string]> = [];
    for (const groupBy of ['agent', 'variation', 'tenant', 'model']) {
      for (const [name, query] of ranges) cases.push([groupBy, name, `groupBy=${groupBy}${query}`]);
    }
    // The tenant dimension deeper: a page from the middle of the keys, and the largest page.
    cases.push(['tenant', 'default, page from the middle (cursor)', `groupBy=tenant&cursor=${encodeCursor(`tenant:tenant_bench${String(Math.floor(TENANTS / 2)).padStart(20, '0')}`, 'asc')}`]);
    cases.push(['tenant', 'default, limit=1000', 'groupBy=tenant&limit=1000']);
    cases.push(['variation', 'default, limit=1000 (all 200)', 'groupBy=variation&limit=1000']);

    for (const [groupBy, range, query] of cases) {
      const url = `${api.url}/v1/workspaces/${workspaceId}/usage?${query}`;
      const times: number[] = [];
      let items = 0;
      for (let index = 0; index < WARMUP + REQUESTS; index++) {
        const started = performance.now();
        const response = await request(url, { dispatcher, headers: { authorization: `Bearer ${token}` } });
        const body = await response.body.text();
        const elapsed = performance.now() - started;
        if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${body}`);
        if (index >= WARMUP) times.push(elapsed);
        if (index === 0) items = (JSON.parse(body) as { items: unknown[] }).items.length;
      }
      times.sort((a, b) => a - b);
      log({ phase: 'report', groupBy, range, items, requests: REQUESTS, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: percentile(times, 100) });
    }
  } finally {
    await dispatcher.close();
    // KEEP_DATABASE=1 leaves the seeded database for a look at the plans (its name is printed).
    const keepDatabase = process.env.KEEP_DATABASE === '1';
    await api.close({ keepDatabase });
    if (keepDatabase) log({ phase: 'kept', database: api.database.name });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
