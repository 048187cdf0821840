// The built node in its default mode (no DATABASE_URL, no NATS_URL): first start
// bootstraps an account into an empty data folder, SIGTERM exits 0, and a
// restart (clean or after a crash) reuses the database and the master key.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../persistence/embedded-postgres';
import { assertBuilt, cliEnv, startServe, type ServeProcess } from './cli-process';

const TOKEN_FILE = 'global-api-key.token';
const MASTER_KEY_FILE = 'master.key';

async function get(url: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function fileMode(file: string): Promise<number> {
  return (await fs.stat(file)).mode & 0o777;
}

/** Counts the accounts in a (stopped) node's embedded database. */
async function countAccounts(dataDir: string): Promise<number> {
  const database = await startEmbeddedPostgres({ dataDir });
  const client = new Client({ connectionString: database.url });
  try {
    await client.connect();
    const result = await client.query<{ count: string }>('SELECT count(*) AS count FROM accounts');
    return Number(result.rows[0].count);
  } finally {
    await client.end().catch(() => undefined);
    await database.stop();
  }
}

function accountId(body: Record<string, unknown>): unknown {
  return (body.metadata as { id?: unknown } | undefined)?.id;
}

interface SlowRequest {
  /** Resolves once the headers and half of the body are sent. */
  headersSent: Promise<void>;
  /** Sends the rest of the body. */
  finish(): void;
  response: Promise<{ status: number; text: string }>;
}

/** A POST whose body arrives in two parts, so it is in flight between them. */
function startSlowRequest(url: string, token: string, body: string): SlowRequest {
  const half = Math.floor(body.length / 2);
  const request = http.request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
  });
  request.flushHeaders();
  const headersSent = new Promise<void>((resolve) => request.write(body.slice(0, half), () => resolve()));
  return { headersSent, finish: () => request.end(body.slice(half)), response };
}

/** Resolves once a new connection to the node is refused (it stopped listening). */
async function waitUntilRefused(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const refused = await fetch(`${url}/healthz`).then(
      () => false,
      (error: Error & { cause?: { code?: string } }) => error.cause?.code === 'ECONNREFUSED',
    );
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the node kept accepting connections after SIGTERM');
}

describe('agentrt serve (embedded mode)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let node: ServeProcess | undefined;

  before(async () => {
    assertBuilt();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-'));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && node) process.stderr.write(`node output: ${JSON.stringify(node.output())}\n`);
  });

  after(async () => {
    await node?.stop('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  describe('on first start with an empty data folder', () => {
    let token: string;

    before(async () => {
      node = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0' }));
      token = (await fs.readFile(path.join(dataDir, TOKEN_FILE), 'utf8')).trim();
    });

    it('writes the global key token to a file only its owner can read, and logs the path', async () => {
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal(await fileMode(path.join(dataDir, TOKEN_FILE)), 0o600);
      const line = node!.logs().find((entry) => entry.tokenFile !== undefined);
      assert.equal(line?.tokenFile, path.join(dataDir, TOKEN_FILE));
    });

    it('generates a master key file only its owner can read', async () => {
      assert.equal(await fileMode(path.join(dataDir, MASTER_KEY_FILE)), 0o600);
      const key = Buffer.from((await fs.readFile(path.join(dataDir, MASTER_KEY_FILE), 'utf8')).trim(), 'base64');
      assert.equal(key.length, 32);
    });

    it('answers GET /v1/account with the token', async () => {
      const response = await get(`${node!.url}/v1/account`, token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.match(String(accountId(response.body)), /^\S+$/);
    });

    it('refuses GET /v1/account without a token', async () => {
      const response = await get(`${node!.url}/v1/account`);
      assert.equal(response.status, 401);
    });

    it('owns every shard alone, as GET /v1/cluster shows', async () => {
      const response = await get(`${node!.url}/v1/cluster`, token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const status = response.body as { shardCount: number; nodes: Array<{ shards: number[] }> };
      assert.equal(status.nodes.length, 1);
      assert.equal(status.nodes[0].shards.length, status.shardCount);
    });

    it('seeds the default workspace with the model catalog', async () => {
      const account = (await get(`${node!.url}/v1/account`, token)).body as { info: { globalApiKey: { info: { workspacesPreview: Array<{ id: string }> } } } };
      const workspaceId = account.info.globalApiKey.info.workspacesPreview[0].id;
      const models = await fetch(`${node!.url}/v1/models?prefix=builtin/`, { headers: { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId } });
      const body = (await models.json()) as { items: Array<{ metadata: { name: string } }> };
      assert.deepEqual(body.items.map((item) => item.metadata.name), ['builtin/scripted']);
    });

    it('applies a bundle with an agent and a variation (one transaction on the embedded database)', async () => {
      const account = (await get(`${node!.url}/v1/account`, token)).body as { info: { globalApiKey: { info: { workspacesPreview: Array<{ id: string }> } } } };
      const workspaceId = account.info.globalApiKey.info.workspacesPreview[0].id;
      const document = {
        tools: [{ metadata: { name: 'lookup' }, spec: { description: 'Looks up', inputSchema: { type: 'object' }, http: { url: 'https://tools.example.com/lookup', method: 'POST' } } }],
        agents: [{ metadata: { name: 'helper' }, spec: {}, variations: [{ metadata: { name: 'main' }, spec: { prompt: 'Be brief.', modelConfig: { modelId: 'builtin/scripted' } }, tools: ['lookup'] }] }],
      };
      const response = await fetch(`${node!.url}/v1/workspaces/${workspaceId}/bundles/starter`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(document),
        signal: AbortSignal.timeout(15_000),
      });
      const plan = (await response.json()) as { created: Array<{ type: string }> };
      assert.equal(response.status, 200, JSON.stringify(plan));
      assert.equal(plan.created.length, 3);
    });

    it('serves the API reference page and the files it loads (swagger-ui-dist found from dist/)', async () => {
      const expected = [
        ['/docs', 'text/html; charset=utf-8'], ['/docs/api-reference.js', 'text/javascript; charset=utf-8'],
        ['/docs/swagger-ui-bundle.js', 'text/javascript; charset=utf-8'], ['/docs/swagger-ui.css', 'text/css; charset=utf-8'],
      ];
      for (const [target, type] of expected) {
        const response = await fetch(`${node!.url}${target}`);
        assert.equal(response.status, 200, `${target}: ${response.status === 200 ? '' : await response.text()}`);
        assert.equal(response.headers.get('content-type'), type, target);
        assert.ok((await response.arrayBuffer()).byteLength > 0, target);
      }
    });

    it('answers GET /healthz', async () => {
      const response = await get(`${node!.url}/healthz`, token);
      assert.equal(response.status, 200);
    });

    it('never writes the token to its log', () => {
      const { stdout, stderr } = node!.output();
      assert.ok(!stdout.includes(token) && !stderr.includes(token), 'the token appears in the node output');
    });

    it('on SIGTERM refuses new connections, finishes the request in flight and exits 0', async () => {
      const body = JSON.stringify({ metadata: { name: 'created-during-shutdown' } });
      const inFlight = startSlowRequest(`${node!.url}/v1/account/workspaces`, token, body);
      await inFlight.headersSent;
      // Give the node time to parse the headers: only then is the connection
      // busy rather than idle (idle ones are closed at once on shutdown).
      await new Promise((resolve) => setTimeout(resolve, 250));
      const exit = node!.stop('SIGTERM');
      await waitUntilRefused(node!.url);
      inFlight.finish();
      const response = await inFlight.response;
      assert.equal(response.status, 200, response.text);
      assert.equal((JSON.parse(response.text) as { metadata: { name: string } }).metadata.name, 'created-during-shutdown');
      assert.deepEqual(await exit, { code: 0, signal: null });
      node = undefined;
    });
  });

  describe('on a restart on the same data folder', () => {
    let token: string;
    let tokenStat: { mtimeMs: number; size: number };
    let firstAccountId: unknown;

    before(async () => {
      const file = path.join(dataDir, TOKEN_FILE);
      token = (await fs.readFile(file, 'utf8')).trim();
      tokenStat = await fs.stat(file);
      node = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0' }));
    });

    it('accepts the token written on first start', async () => {
      const response = await get(`${node!.url}/v1/account`, token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      firstAccountId = accountId(response.body);
      assert.ok(firstAccountId);
    });

    it('does not bootstrap a second account', async () => {
      const file = path.join(dataDir, TOKEN_FILE);
      assert.equal((await fs.readFile(file, 'utf8')).trim(), token);
      const stat = await fs.stat(file);
      assert.deepEqual({ mtimeMs: stat.mtimeMs, size: stat.size }, { mtimeMs: tokenStat.mtimeMs, size: tokenStat.size });
      assert.equal(node!.logs().filter((entry) => entry.tokenFile !== undefined).length, 0);
      assert.deepEqual(await fs.readdir(dataDir).then((names) => names.filter((name) => name.endsWith('.tmp'))), []);
    });

    it('exits 0 on SIGTERM', async () => {
      const exit = await node!.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null });
      node = undefined;
    });
  });

  describe('after a crash (SIGKILL) on the same data folder', () => {
    let token: string;

    before(async () => {
      token = (await fs.readFile(path.join(dataDir, TOKEN_FILE), 'utf8')).trim();
      const crashed = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0' }));
      assert.deepEqual(await crashed.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
      node = await startServe(cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0' }));
    });

    it('takes over the stale lock and serves the same account', async () => {
      const response = await get(`${node!.url}/v1/account`, token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(await node!.stop('SIGTERM'), { code: 0, signal: null });
      node = undefined;
    });

    it('leaves exactly one account in the database', async () => {
      assert.equal(node, undefined, 'the node must have stopped (previous test)');
      assert.equal(await countAccounts(dataDir), 1);
    });
  });
});
