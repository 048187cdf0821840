// The built node in embedded mode stopped with SIGTERM (as Ctrl-C does) while
// about 30 objectives are in flight, each in the middle of HTTP tool calls to a
// real local server that answers after a delay. The stop's burst (effects
// recording their outcomes, every actor snapshotting) used to open more
// connections than the embedded database serves, and the node logged
// ECONNRESET / "Connection terminated unexpectedly" on its way out.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { embeddedRuntimePoolLimit } from '../../persistence/embedded-postgres';
import { assertBuilt, cliEnv, runCli, startServe, type LogLine, type ServeProcess } from './cli-process';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const OBJECTIVES = 30;
/** Tool calls per objective, one turn each, so every objective is still calling when the node stops. */
const CALLS_PER_OBJECTIVE = 20;
/** What a broken database connection looks like in the log (pg's and the socket's wording). */
const CONNECTION_FAILURE = /ECONNRESET|Connection terminated|terminated unexpectedly|Too many connections|EPIPE|ECONNREFUSED/i;

function objectiveScript(index: number): string {
  const calls = Array.from({ length: CALLS_PER_OBJECTIVE }, (_, call) => `CALL wait {"objective": ${index}, "call": ${call}}`);
  // SLEEP 1 between calls makes each call its own model turn (consecutive CALL lines would run in parallel in one).
  return `${calls.join('\nSLEEP 1\n')}\nSAY done`;
}

/** Every log line (stdout JSON, or a stderr line) that mentions a broken database connection. */
function connectionFailures(node: ServeProcess): string[] {
  const { stderr } = node.output();
  const lines = [...node.logs().map((line: LogLine) => JSON.stringify(line)), ...stderr.split('\n')];
  return lines.filter((line) => CONNECTION_FAILURE.test(line));
}

describe('embedded node stopped under load', function () {
  this.timeout(180_000);
  let dataDir: string;
  let tool: TestToolServer;
  let node: ServeProcess | undefined;

  before(async () => {
    assertBuilt();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-stop-under-load-'));
    tool = await startTestToolServer();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && node) process.stderr.write(`node output (tail): ${node.output().stdout.split('\n').slice(-20).join('\n')}\n${node.output().stderr}\n`);
  });

  after(async () => {
    await node?.stop('SIGKILL');
    await tool?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('exits 0 on SIGTERM with 30 objectives calling tools, and logs no broken database connection', async () => {
    node = await startServe(
      cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0', AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_RATE_LIMIT_PER_SECOND: '10000', AGENTRT_RATE_LIMIT_BURST: '10000' }),
    );
    const token = (await fs.readFile(path.join(dataDir, 'global-api-key.token'), 'utf8')).trim();
    const call = async (method: string, route: string, body?: unknown): Promise<Json> => {
      const response = await fetch(`${node!.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const answer = (await response.json()) as Json;
      assert.ok(response.status < 300, `${method} ${route}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };

    const workspaceId = (await call('GET', '/v1/account/workspaces')).items[0].metadata.id as string;
    const ws = `/v1/workspaces/${workspaceId}`;
    const waitTool = await call('POST', `${ws}/tools`, {
      metadata: { name: 'wait' }, spec: { description: 'Answers after a short delay', http: { url: `${tool.url}/delayed?ms=300`, method: 'POST' } },
    });
    const agent = await call('POST', `${ws}/agents`, { metadata: { name: 'busy' }, spec: {} });
    const variation = await call('POST', `${ws}/agents/${agent.metadata.id}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    await call('POST', `${ws}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: waitTool.metadata.id });

    await Promise.all(
      Array.from({ length: OBJECTIVES }, (_, index) => call('POST', `${ws}/objectives`, { agentId: agent.metadata.id, initialMessage: objectiveScript(index) })),
    );
    // Every objective has made a call and the later ones are on their way: all 30 are in flight.
    await tool.arrived('/delayed', OBJECTIVES * 2);

    const exit = await node.stop('SIGTERM');

    assert.deepEqual(exit, { code: 0, signal: null }, 'the node exits 0');
    assert.ok(
      node.logs().some((line) => line.msg === 'shutting down'),
      'the node logged its shutdown',
    );
    const failures = connectionFailures(node);
    assert.equal(failures.length, 0, `${failures.length} log lines show a broken database connection, the first: ${failures.slice(0, 3).join('\n')}`);
    assert.ok(tool.requestsTo('/delayed').length < OBJECTIVES * CALLS_PER_OBJECTIVE, 'objectives were still running when the node stopped');
    node = undefined;
  });

  it('refuses to start when AGENTRT_RUNTIME_POOL_SIZE asks for more connections than the embedded database serves', async () => {
    const tooMany = embeddedRuntimePoolLimit() + 1;
    const result = await runCli(['serve'], cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: '0', AGENTRT_RUNTIME_POOL_SIZE: String(tooMany) }));
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, new RegExp(`AGENTRT_RUNTIME_POOL_SIZE is ${tooMany}, more than the embedded database can serve: at most ${embeddedRuntimePoolLimit()}`));
    assert.ok(!result.stdout.includes('listening'), 'the node did not start');
  });
});
