// HTTP API benchmark: prints one JSON line of figures, asserts nothing. Starts
// the API in process over a fresh Postgres database and drives it over real
// HTTP with undici (keep-alive, a fixed number of requests in flight): the
// credential check (GET /v1/account), a one-row read (GET an agent), a list
// of 50 agents, and agent creation (one insert). Run with `npm run bench:http`.
import { Agent, request } from 'undici';
import { startTestApi } from '../test/support/api';
import { sharedTestDatabase } from '../test/support/global-setup';

const CONCURRENCY = 16;
const DURATION_MS = 5000;

function percentile(sorted: number[], p: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

/** Runs `send` with CONCURRENCY in flight for DURATION_MS; answers rate and latency figures. */
async function measure(name: string, send: () => Promise<number>) {
  for (let i = 0; i < 200; i++) await send(); // warm-up
  const samples: number[] = [];
  let failures = 0;
  const deadline = Date.now() + DURATION_MS;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        const begin = process.hrtime.bigint();
        const status = await send();
        samples.push(Number(process.hrtime.bigint() - begin) / 1e6);
        if (status >= 400) failures += 1;
      }
    }),
  );
  const sorted = samples.sort((a, b) => a - b);
  return {
    [`${name}PerSecond`]: Math.round((samples.length / (Date.now() - started)) * 1000),
    [`${name}P50Ms`]: percentile(sorted, 50),
    [`${name}P99Ms`]: percentile(sorted, 99),
    [`${name}Failures`]: failures,
  };
}

async function main(): Promise<void> {
  const database = await sharedTestDatabase(); // a fresh database, dropped below
  const api = await startTestApi({ logLevel: 'silent', poolSize: 10, env: { AGENTRT_RATE_LIMIT_PER_SECOND: '1000000', AGENTRT_RATE_LIMIT_BURST: '1000000' } });
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
    const figures = {
      concurrency: CONCURRENCY,
      ...(await measure('getAccount', () => call('GET', `${api.url}/v1/account`))),
      ...(await measure('getAgent', () => call('GET', `${agents}/${oneId}`))),
      ...(await measure('listAgents50', () => call('GET', `${agents}?limit=50`))),
      ...(await measure('createAgent', createAgent)),
    };
    console.log(JSON.stringify(figures));
  } finally {
    await dispatcher.close();
    await api.close();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
