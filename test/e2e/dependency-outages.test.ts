// Honest answers during an outage (issue 29 item 3): a node started in-process
// (src/server.ts) on a Postgres and a NATS of the test's own, which the test
// stops and starts again. While a dependency is away the API answers 503
// UNAVAILABLE with Retry-After (never 500), /readyz answers 503 naming it and
// /healthz 200; the node logs one warning when it goes and one line when it
// is back, and serves again once it is.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startNode, type NodeHandle } from '../../src/server';
import { eventuallyValue } from '../support/eventually';
import { PrivateNats, PrivatePostgres } from '../support/private-services';

interface LogLine {
  level: number;
  msg: string;
  dependency?: string;
  [field: string]: unknown;
}

const WARN = 40;

interface TestNode {
  handle: NodeHandle;
  logs: LogLine[];
  token: string;
  request(method: string, route: string, body?: unknown): Promise<{ status: number; body: any; retryAfter: string | null }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One master key for the nodes of a test (a cluster's nodes share theirs). */
const MASTER_KEY = randomBytes(32).toString('base64');

/** Starts a node; `tokenFrom` is the data folder of the node that created the first account (its own by default). */
async function startTestNode(env: Record<string, string>, dataDir: string, tokenFrom = dataDir): Promise<TestNode> {
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: new Writable({ write(chunk, _encoding, done) { logs.push(JSON.parse(String(chunk)) as LogLine); done(); } }) });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AGENTRT_DATA_DIR: dataDir, AGENTRT_MASTER_KEY: MASTER_KEY, ...env });
  const handle = await startNode(config, {
    logger, shutdownGraceMs: 500,
    runtimeOptions: { shardCount: 8, drainTimeoutMs: 2000, handoffTimeoutMs: 1000, rebalanceIntervalMs: 200 },
  });
  const token = (await fs.readFile(path.join(tokenFrom, 'global-api-key.token'), 'utf8')).trim();
  return {
    handle, logs, token,
    async request(method, route, body) {
      const response = await fetch(`${handle.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, retryAfter: response.headers.get('retry-after') };
    },
  };
}

/** An agent answering with the built-in scripted model (no provider needed). */
async function scriptedAgent(node: TestNode, workspaceId: string): Promise<string> {
  const agent = await node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'outage-bot' } });
  assert.equal(agent.status, 200, JSON.stringify(agent.body));
  const variation = await node.request('POST', `/v1/workspaces/${workspaceId}/agents/${agent.body.metadata.id}/variations`, {
    metadata: { name: 'v1' }, spec: { prompt: 'You help.', modelConfig: { modelId: 'builtin/scripted' } },
  });
  assert.equal(variation.status, 200, JSON.stringify(variation.body));
  return agent.body.metadata.id as string;
}

/** The lines of the node's log about one dependency's loss (warnings) and return (info "reachable again"). */
function outageLines(logs: LogLine[], dependency: string) {
  return {
    lost: logs.filter((line) => line.level === WARN && line.dependency === dependency),
    back: logs.filter((line) => line.dependency === dependency && /reachable again/.test(line.msg)),
  };
}

/** The node's Prometheus text. */
async function metrics(node: TestNode): Promise<string> {
  return (await fetch(`${node.handle.url}/metrics`)).text();
}

/** Asserts a 503 UNAVAILABLE with Retry-After (the body printed otherwise). */
function assertUnavailable(answer: { status: number; body: unknown; retryAfter: string | null }, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  assert.equal((answer.body as { code: number }).code, 14, what);
  assert.match(answer.retryAfter ?? '', /^[1-9]\d*$/, `${what}: Retry-After`);
}

describe('honest answers while Postgres or NATS is away', function () {
  this.timeout(120_000);
  const folders: string[] = [];
  let postgres: PrivatePostgres;
  let nats: PrivateNats | undefined;
  let natsStopped = false;
  let nodes: TestNode[] = [];

  const folder = async (prefix: string) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    folders.push(dir);
    return dir;
  };

  before(async () => {
    postgres = await PrivatePostgres.create(await folder('agentrt-outage-pg-'));
  });

  const privateNats = async () => (nats ??= await PrivateNats.create(await folder('agentrt-outage-nats-')));

  /** A new database on the private server: each test's node creates its first account there. */
  let databases = 0;
  async function freshDatabase(): Promise<string> {
    const name = `outage_${(databases += 1)}`;
    const client = new Client({ connectionString: postgres.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return postgres.url(name);
  }

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const node of nodes) process.stderr.write(`node log:\n${node.logs.filter((line) => line.level >= WARN).slice(-40).map((line) => JSON.stringify(line)).join('\n')}\n`);
    }
    await postgres.start().catch(() => undefined);
    if (natsStopped) await nats?.start();
    natsStopped = false;
    await Promise.all(nodes.map((node) => node.handle.stop()));
    nodes = [];
  });

  after(async () => {
    await nats?.stop();
    await postgres?.stop();
    await Promise.all(folders.map((dir) => fs.rm(dir, { recursive: true, force: true })));
  });

  /**
   * Stops Postgres under a node (`natsUrl`: a cluster node), checks what it answers and logs, and starts it again.
   * `alsoWarned`: the warnings the node gives besides the outage's (a cluster node's lease loss is news of its own).
   */
  async function postgresOutage(natsUrl: string | undefined, alsoWarned: string[]): Promise<void> {
    const node = await startTestNode({ DATABASE_URL: await freshDatabase(), ...(natsUrl ? { NATS_URL: natsUrl } : {}) }, await folder('agentrt-outage-data-'));
    nodes.push(node);
    const workspaces = await node.request('GET', '/v1/account/workspaces');
    assert.equal(workspaces.status, 200, JSON.stringify(workspaces.body));
    const workspaceId = workspaces.body.items[0].metadata.id as string;
    const agentId = await scriptedAgent(node, workspaceId);

    // Requests in flight when the server stops: each answers 2xx or 503, none 500.
    const inFlight = Array.from({ length: 30 }, (_, index) => [
      node.request('GET', `/v1/workspaces/${workspaceId}/agents`),
      node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: `racing-${index}` } }),
      node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' }),
    ]).flat();
    await postgres.stop();
    for (const answer of await Promise.all(inFlight)) {
      if (answer.status !== 200) assertUnavailable(answer, 'a request in flight at the stop');
    }
    const ready = await node.request('GET', '/readyz');
    assertUnavailable(ready, '/readyz');
    assert.match(ready.body.message, /not ready: the database \(PostgreSQL\) is unreachable/);
    assert.equal((await node.request('GET', '/healthz')).status, 200, '/healthz stays 200');
    assert.match(await metrics(node), /^agentrt_dependency_up\{dependency="postgres"\} 0$/m);
    for (let round = 0; round < 3; round += 1) {
      assertUnavailable(await node.request('GET', '/v1/account/workspaces'), 'list workspaces');
      assertUnavailable(await node.request('GET', `/v1/workspaces/${workspaceId}/agents`), 'list agents');
      assertUnavailable(await node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: `bot-${round}` } }), 'create an agent');
      assertUnavailable(await node.request('POST', '/v1/account/workspaces', { metadata: { name: `space-${round}` } }), 'create a workspace');
      assertUnavailable(await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' }), 'create an objective');
    }
    // The runtime's loops have met the outage too (more than one balancing round; their failures are written at debug level).
    await eventuallyValue(async () => node.logs.filter((line) => line.msg === 'shard balancing round failed').length >= 2, 'the shard balancer failing', 30_000);
    assert.equal(outageLines(node.logs, 'postgres').lost.length, 1, 'one warning for the outage');
    assert.deepEqual(node.logs.filter((line) => line.level >= WARN && line.dependency !== 'postgres').map((line) => line.msg), alsoWarned, 'no other warning or error');

    await postgres.start();
    await eventuallyValue(async () => (await node.request('GET', '/readyz')).status === 200, '/readyz 200 once Postgres is back', 30_000);
    const created = await node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'after-the-outage' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const objective = await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' });
    assert.equal(objective.status, 200, JSON.stringify(objective.body));
    assert.match(await metrics(node), /^agentrt_dependency_up\{dependency="postgres"\} 1$/m);
    const { lost, back } = outageLines(node.logs, 'postgres');
    assert.equal(lost.length, 1, 'still one warning');
    assert.equal(back.length, 1, 'one line when it is back');
    assert.equal(typeof back[0].downForMs, 'number');
  }

  it('answers 503 with Retry-After while Postgres is away, says so on /readyz, logs it once, and serves again once it is back', async () => {
    await postgresOutage(undefined, []);
  });

  it('does the same on a cluster node (NATS), whose shard leases are lost with the database', async () => {
    await postgresOutage((await privateNats()).url, ['lease lost: stopping every shard']);
  });

  it('answers 503 naming the message bus while NATS is away, for a create reaching another node, says so on /readyz, logs it once per node, and serves again once it is back', async () => {
    const nats = await privateNats();
    const env = { DATABASE_URL: await freshDatabase(), NATS_URL: nats.url };
    const first = await folder('agentrt-outage-node-');
    nodes.push(await startTestNode(env, first));
    nodes.push(await startTestNode(env, await folder('agentrt-outage-node-'), first));
    const [node, other] = nodes;
    // Both nodes own shards: some objectives of a create through `node` live on `other`, reached over NATS.
    await eventuallyValue(async () => {
      const status = await node.request('GET', '/v1/cluster');
      return status.status === 200 && (status.body.nodes as Array<{ shards: number[] }>).filter((member) => member.shards.length > 0).length === 2;
    }, 'two nodes sharing the shards', 30_000);
    const workspaceId = (await node.request('GET', '/v1/account/workspaces')).body.items[0].metadata.id as string;
    const agentId = await scriptedAgent(node, workspaceId);

    await nats.stop();
    natsStopped = true;
    for (const each of nodes) {
      const ready = await eventuallyValue(async () => {
        const answer = await each.request('GET', '/readyz');
        return answer.status === 503 ? answer : undefined;
      }, '/readyz 503 while NATS is away', 30_000);
      assertUnavailable(ready, '/readyz');
      assert.match(ready.body.message, /not ready: the message bus \(NATS\) is unreachable/);
      assert.equal((await each.request('GET', '/healthz')).status, 200, '/healthz stays 200');
    }
    const creates = [];
    for (let index = 0; index < 20; index += 1) {
      creates.push(await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' }));
    }
    for (const answer of creates) if (answer.status !== 200) assertUnavailable(answer, 'create an objective');
    const refused = creates.filter((answer) => answer.status === 503);
    assert.ok(refused.length > 0, 'the creates reaching the other node are refused');
    for (const answer of refused) assert.match(answer.body.message, /the message bus \(NATS\) is unreachable/);
    for (const each of nodes) {
      assert.equal(outageLines(each.logs, 'nats').lost.length, 1, 'one warning for the outage');
      assert.deepEqual(each.logs.filter((line) => line.level >= WARN && line.dependency !== 'nats').map((line) => line.msg), [], 'no other warning or error');
    }

    await nats.start();
    natsStopped = false;
    for (const each of nodes) await eventuallyValue(async () => (await each.request('GET', '/readyz')).status === 200, '/readyz 200 once NATS is back', 30_000);
    for (let index = 0; index < 10; index += 1) {
      const created = await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    for (const each of [node, other]) {
      const { lost, back } = outageLines(each.logs, 'nats');
      assert.equal(lost.length, 1, 'still one warning');
      assert.equal(back.length, 1, 'one line when it is back');
    }
  });
});
