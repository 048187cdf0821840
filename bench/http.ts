// HTTP API benchmark: prints one JSON line of figures, asserts nothing. Starts
// the API in process over a fresh Postgres database and drives it over real
// HTTP with undici (keep-alive, a fixed number of requests in flight): the
// credential check (GET /v1/account), a one-row read (GET an agent), a list
// of 50 agents, and agent creation (one insert). In the same run it measures
// a ceiling: a bare Koa + @koa/router app answering a one-row SELECT by
// primary key from a pg.Pool, with the same client, concurrency and duration,
// in slices alternating with GET an agent, so that their ratio holds however
// the load of the shared build machine changes. Run with `npm run bench:http`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { Pool } from 'pg';
import { Agent, request } from 'undici';
import { startBenchNode } from './support/bench-node';

const CONCURRENCY = 16;
const DURATION_MS = 5000;
/** The API's pool size, given to the bare app too, so both have as many connections. */
const POOL_SIZE = 10;
const BARE_ROWS = 10_000;

function percentile(sorted: number[], p: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

/** What one sender's requests gave: latencies in ms, refusals, time spent sending. */
interface Samples {
  latenciesMs: number[];
  failures: number;
  elapsedMs: number;
}

/** Runs `send` with CONCURRENCY in flight for `durationMs`, adding to `into`. */
async function run(send: () => Promise<number>, durationMs: number, into: Samples): Promise<void> {
  const started = Date.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        const begin = process.hrtime.bigint();
        const status = await send();
        into.latenciesMs.push(Number(process.hrtime.bigint() - begin) / 1e6);
        if (status >= 400) into.failures += 1;
      }
    }),
  );
  into.elapsedMs += Date.now() - started;
}

function figures(name: string, samples: Samples) {
  const sorted = samples.latenciesMs.sort((a, b) => a - b);
  return {
    [`${name}PerSecond`]: Math.round((sorted.length / samples.elapsedMs) * 1000),
    [`${name}P50Ms`]: percentile(sorted, 50),
    [`${name}P99Ms`]: percentile(sorted, 99),
    [`${name}Failures`]: samples.failures,
  };
}

async function warmUp(send: () => Promise<number>): Promise<void> {
  for (let i = 0; i < 200; i++) await send();
}

/** Runs `send` with CONCURRENCY in flight for DURATION_MS; answers rate and latency figures. */
async function measure(name: string, send: () => Promise<number>) {
  await warmUp(send);
  const samples: Samples = { latenciesMs: [], failures: 0, elapsedMs: 0 };
  await run(send, DURATION_MS, samples);
  return figures(name, samples);
}

/** Alternations of measureSideBySide: short enough that load changes hit both senders alike. */
const SLICES = 10;

/**
 * Measures two senders for DURATION_MS each, in SLICES alternating slices, so
 * that the build machine's changing load (it is shared) weighs on both alike
 * and their ratio means something.
 */
async function measureSideBySide(first: [string, () => Promise<number>], second: [string, () => Promise<number>]) {
  const pair = [first, second].map(([name, send]) => ({ name, send, samples: { latenciesMs: [], failures: 0, elapsedMs: 0 } as Samples }));
  for (const { send } of pair) await warmUp(send);
  for (let slice = 0; slice < SLICES; slice++) {
    for (const { send, samples } of pair) await run(send, DURATION_MS / SLICES, samples);
  }
  return pair.map(({ name, samples }) => figures(name, samples));
}

interface BareApp {
  url: string;
  close(): Promise<void>;
}

/**
 * The ceiling: Koa + @koa/router + pg.Pool answering `GET /item/:id` with one
 * row selected by primary key from a table of BARE_ROWS rows, no middleware.
 */
async function startBareKoaPgApp(databaseUrl: string): Promise<BareApp> {
  const pool = new Pool({ connectionString: databaseUrl, max: POOL_SIZE });
  await pool.query('CREATE TABLE bench_items (id integer PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  await pool.query("INSERT INTO bench_items (id, name) SELECT n, 'item-' || n FROM generate_series(1, $1::int) AS n", [BARE_ROWS]);
  await pool.query('ANALYZE bench_items');
  const router = new Router();
  router.get('/item/:id', async (ctx) => {
    const { rows } = await pool.query('SELECT id, name, created_at FROM bench_items WHERE id = $1', [Number(ctx.params.id)]);
    if (rows.length === 0) ctx.throw(404);
    ctx.body = rows[0];
  });
  const app = new Koa();
  app.use(router.routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

async function main(): Promise<void> {
  const api = await startBenchNode({ poolSize: POOL_SIZE });
  const bare = await startBareKoaPgApp(api.database.url);
  const dispatcher = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  try {
    const account = await api.bootstrap('bench');
    const headers = { authorization: `Bearer ${account.globalApiKey.token}`, 'content-type': 'application/json' };
    const agents = `${api.url}/v1/workspaces/${account.workspaceId}/agents`;
    const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const response = await request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), dispatcher });
      await response.body.dump();
      return response.statusCode;
    };
    let created = 0;
    const createAgent = () => call('POST', agents, { metadata: { name: `agent-${created++}` }, spec: { description: 'benchmark agent' } });
    for (let i = 0; i < 60; i++) await createAgent();
    const listed = await request(`${agents}?limit=1`, { headers, dispatcher });
    const oneId = ((await listed.body.json()) as { items: Array<{ metadata: { id: string } }> }).items[0].metadata.id;
    const [bareSelect, getAgent] = await measureSideBySide(
      ['bareKoaPgSelect', () => call('GET', `${bare.url}/item/${1 + Math.floor(Math.random() * BARE_ROWS)}`)],
      ['getAgent', () => call('GET', `${agents}/${oneId}`)],
    );
    const figures = {
      concurrency: CONCURRENCY,
      ...bareSelect,
      ...(await measure('getAccount', () => call('GET', `${api.url}/v1/account`))),
      ...getAgent,
      getAgentToBareRatio: Number((getAgent.getAgentPerSecond / bareSelect.bareKoaPgSelectPerSecond).toFixed(2)),
      ...(await measure('listAgents50', () => call('GET', `${agents}?limit=50`))),
      ...(await measure('createAgent', createAgent)),
    };
    console.log(JSON.stringify(figures));
  } finally {
    await dispatcher.close();
    await bare.close();
    await api.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
