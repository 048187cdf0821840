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
import { ulid } from 'ulid';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startNode, type NodeHandle } from '../../src/server';
import { eventuallyValue } from '../support/eventually';
import { PrivatePostgres } from '../support/private-services';

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

async function startTestNode(env: Record<string, string>, dataDir: string): Promise<TestNode> {
  const logs: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: new Writable({ write(chunk, _encoding, done) { logs.push(JSON.parse(String(chunk)) as LogLine); done(); } }) });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AGENTRT_DATA_DIR: dataDir, AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'), ...env });
  const handle = await startNode(config, {
    logger, shutdownGraceMs: 500,
    runtimeOptions: { shardCount: 8, drainTimeoutMs: 2000, handoffTimeoutMs: 1000, subjectPrefix: `outage_${ulid().toLowerCase()}`, eventStream: `OUTAGE_${ulid()}` },
  });
  const token = (await fs.readFile(path.join(dataDir, 'global-api-key.token'), 'utf8')).trim();
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
  let node: TestNode | undefined;

  const folder = async (prefix: string) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    folders.push(dir);
    return dir;
  };

  before(async () => {
    postgres = await PrivatePostgres.create(await folder('agentrt-outage-pg-'));
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && node) process.stderr.write(`node log:\n${node.logs.slice(-80).map((line) => JSON.stringify(line)).join('\n')}\n`);
    await postgres.start().catch(() => undefined);
    await node?.handle.stop();
    node = undefined;
  });

  after(async () => {
    await postgres?.stop();
    await Promise.all(folders.map((dir) => fs.rm(dir, { recursive: true, force: true })));
  });

  it('answers 503 with Retry-After while Postgres is away, says so on /readyz, logs it once, and serves again once it is back', async () => {
    node = await startTestNode({ DATABASE_URL: postgres.url() }, await folder('agentrt-outage-data-'));
    const workspaces = await node.request('GET', '/v1/account/workspaces');
    assert.equal(workspaces.status, 200, JSON.stringify(workspaces.body));
    const workspaceId = workspaces.body.items[0].metadata.id as string;
    const agentId = await scriptedAgent(node, workspaceId);

    // Requests in flight when the server stops: each answers 2xx or 503, none 500.
    const inFlight = Array.from({ length: 30 }, (_, index) => [
      node!.request('GET', `/v1/workspaces/${workspaceId}/agents`),
      node!.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: `racing-${index}` } }),
      node!.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' }),
    ]).flat();
    await postgres.stop();
    for (const answer of await Promise.all(inFlight)) {
      if (answer.status !== 200) assertUnavailable(answer, 'a request in flight at the stop');
    }
    const ready = await node.request('GET', '/readyz');
    assertUnavailable(ready, '/readyz');
    assert.match(ready.body.message, /not ready: the database \(PostgreSQL\) is unreachable/);
    assert.equal((await node.request('GET', '/healthz')).status, 200, '/healthz stays 200');
    for (let round = 0; round < 3; round += 1) {
      assertUnavailable(await node.request('GET', '/v1/account/workspaces'), 'list workspaces');
      assertUnavailable(await node.request('GET', `/v1/workspaces/${workspaceId}/agents`), 'list agents');
      assertUnavailable(await node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: `bot-${round}` } }), 'create an agent');
      assertUnavailable(await node.request('POST', '/v1/account/workspaces', { metadata: { name: `space-${round}` } }), 'create a workspace');
      assertUnavailable(await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' }), 'create an objective');
    }
    // The runtime's loops have met the outage too (their failures are written at debug level).
    await eventuallyValue(async () => ['reminder poll failed', 'shard balancing round failed'].every((msg) => node!.logs.some((line) => line.msg === msg)), 'the runtime loops failing', 30_000);
    assert.equal(outageLines(node.logs, 'postgres').lost.length, 1, 'one warning for the outage');
    assert.deepEqual(node.logs.filter((line) => line.level >= WARN && line.dependency !== 'postgres').map((line) => line.msg), [], 'no other warning or error');

    await postgres.start();
    await eventuallyValue(async () => (await node!.request('GET', '/readyz')).status === 200, '/readyz 200 once Postgres is back', 30_000);
    const created = await node.request('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'after-the-outage' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const objective = await node.request('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' });
    assert.equal(objective.status, 200, JSON.stringify(objective.body));
    const { lost, back } = outageLines(node.logs, 'postgres');
    assert.equal(lost.length, 1, 'still one warning');
    assert.equal(back.length, 1, 'one line when it is back');
    assert.equal(typeof back[0].downForMs, 'number');
  });
});
