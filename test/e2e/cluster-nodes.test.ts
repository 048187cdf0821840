// Two built nodes in cluster mode (DATABASE_URL and NATS_URL) started together
// on one empty Postgres database: exactly one of them bootstraps the first
// account, both accept its token, and both stop with exit 0 on SIGTERM.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { deleteStream } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { assertBuilt, cliEnv, startServe, type ServeProcess } from './cli-process';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const TOKEN_FILE = 'global-api-key.token';

async function readIfExists(file: string): Promise<string | null> {
  return fs.readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}

describe('agentrt serve (cluster mode: Postgres and NATS)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  const dataDirs: string[] = [];
  let nodes: ServeProcess[] = [];
  let eventStream: string;

  before(async () => {
    assertBuilt();
    database = await createTestDatabase();
    for (let index = 0; index < 2; index += 1) dataDirs.push(await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-e2e-')));
    // Fresh subjects and stream per run, so runs never see each other's messages.
    const suffix = ulid().toLowerCase();
    eventStream = `E2E_${suffix.toUpperCase()}`;
    const shared = {
      DATABASE_URL: database.url,
      NATS_URL,
      AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'),
      AGENTRT_SUBJECT_PREFIX: `e2e_${suffix}`,
      AGENTRT_EVENT_STREAM: eventStream,
      AGENTRT_SHARD_COUNT: '8',
      PORT: '0',
    };
    nodes = await Promise.all(dataDirs.map((dataDir) => startServe(cliEnv({ ...shared, AGENTRT_DATA_DIR: dataDir }))));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') for (const node of nodes) process.stderr.write(`node output: ${JSON.stringify(node.output())}\n`);
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
    await Promise.all(dataDirs.map((dataDir) => fs.rm(dataDir, { recursive: true, force: true })));
    if (eventStream) await deleteStream(eventStream);
    await database?.drop();
  });

  it('runs each node on the NATS bus', () => {
    for (const node of nodes) assert.equal(node.logs().find((line) => line.msg === 'listening')?.bus, 'nats');
  });

  it('bootstraps the first account on exactly one node, and both nodes accept its token', async () => {
    const tokens = (await Promise.all(dataDirs.map((dataDir) => readIfExists(path.join(dataDir, TOKEN_FILE))))).filter((token) => token !== null);
    assert.equal(tokens.length, 1, 'exactly one node writes a token file');
    for (const node of nodes) {
      const response = await fetch(`${node.url}/v1/account`, { headers: { authorization: `Bearer ${tokens[0]}` } });
      assert.equal(response.status, 200, await response.text());
    }
  });

  it('stops both nodes with exit 0 on SIGTERM', async () => {
    const exits = await Promise.all(nodes.map((node) => node.stop('SIGTERM')));
    assert.deepEqual(exits, [
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
