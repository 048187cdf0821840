// Two built nodes in cluster mode (DATABASE_URL and NATS_URL) started together
// on one empty Postgres database: exactly one of them bootstraps the first
// account, both accept its token, and both stop with exit 0 on SIGTERM.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ServeProcess } from './cli-process';
import { TwoNodes } from '../support/two-nodes';

const TOKEN_FILE = 'global-api-key.token';

async function readIfExists(file: string): Promise<string | null> {
  return fs.readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
}

describe('agentrt serve (cluster mode: Postgres and NATS)', function () {
  this.timeout(120_000);
  const cluster = new TwoNodes({ name: 'e2e' });
  const nodes = () => cluster.nodes as ServeProcess[];

  before(async () => {
    await cluster.start();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') cluster.printOutput();
  });

  after(async () => {
    await cluster.close();
  });

  it('runs each node on the NATS bus', () => {
    for (const node of nodes()) assert.equal(node.logs().find((line) => line.msg === 'listening')?.bus, 'nats');
  });

  it('bootstraps the first account on exactly one node, and both nodes accept its token', async () => {
    const tokens = (await Promise.all(cluster.dataDirs.map((dataDir) => readIfExists(path.join(dataDir, TOKEN_FILE))))).filter((token) => token !== null);
    assert.equal(tokens.length, 1, 'exactly one node writes a token file');
    for (const node of nodes()) {
      const response = await fetch(`${node.url}/v1/account`, { headers: { authorization: `Bearer ${tokens[0]}` } });
      assert.equal(response.status, 200, await response.text());
    }
  });

  it('stops both nodes with exit 0 on SIGTERM', async () => {
    const exits = await Promise.all(nodes().map((node) => node.stop('SIGTERM')));
    assert.deepEqual(exits, [
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
