// docs/examples/webhook-receiver.mjs as saved, run with node as a reader of
// docs/api.md would run it: the real node (embedded runtime, builtin/scripted)
// delivers an objective's events to it, and it verifies and logs each one once.
// docs/api.md shows the file word for word.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { webhookHeaders } from '../../src/webhooks/webhook-signature';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { eventuallyValue } from '../support/eventually';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

const EXAMPLE = path.resolve(__dirname, '../../docs/examples/webhook-receiver.mjs');

interface RunningExample {
  child: ChildProcess;
  url: string;
  /** Its stdout lines so far. */
  lines(): string[];
  stop(): Promise<void>;
}

/** Starts the example with `node`, as saved, and resolves once it says where it listens. */
async function startExample(secret: string): Promise<RunningExample> {
  const child = spawn(process.execPath, [EXAMPLE], { env: { ...process.env, AGENTRT_WEBHOOK_SECRET: secret, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = () => stdout.split('\n').filter(Boolean);
  const port = await Promise.race([
    eventuallyValue(async () => /^listening on port (\d+)$/.exec(lines()[0] ?? '')?.[1], 'the example to listen', 15_000),
    exited.then((code) => assert.fail(`the example exited with ${code}: ${stderr}`)),
  ]);
  return {
    child, url: `http://127.0.0.1:${port}`, lines,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('docs/examples/webhook-receiver.mjs', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let secret: string;
  let example: RunningExample;

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }, logLevel: 'info' });
    ws = await workspaceFixture(api);
    secret = (await api.request('GET', '/v1/account', { token: ws.account.globalApiKey.token })).body.info.webhookEventsHmacSecret;
    example = await startExample(secret);
  });
  after(async () => {
    await example?.stop();
    await api?.close();
  });

  it('is the receiver docs/api.md shows', () => {
    const api = readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');
    const block = /### A receiver \(Node, `standardwebhooks`\)[\s\S]*?```js\n([\s\S]*?)```/.exec(api)?.[1];
    assert.equal(block, readFileSync(EXAMPLE, 'utf8'));
  });

  it('verifies and logs every event the node delivers for an objective, in order', async () => {
    const agent = await createAgent(api, ws.token, ws.workspaceId, { spec: { webhookEventsUrl: `${example.url}/agentrt` } });
    await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const objective = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/objectives`, { agentId: agent.metadata.id, initialMessage: 'SAY hello' });
    const id = objective.metadata.id as string;
    const logged = await eventuallyValue(async () => {
      const lines = example.lines().filter((line) => line.includes(` ${id} `));
      return lines.at(-1)?.startsWith('objective_event.finalized ') && lines;
    }, 'the example to log the objective\'s last event');
    const events = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events?limit=1000`, { token: ws.token })).body.items as Array<{ sequence: number; data: { type: string } }>;
    assert.deepEqual(logged, events.map((event) => `objective_event.${event.data.type.replace('OBJECTIVE_EVENT_TYPE_', '').toLowerCase()} ${id} ${event.sequence}`));
  });

  it('answers 204 to a delivery it has seen without handling it again, and 400 to a bad signature', async () => {
    const objectiveId = 'obj_01KB0Q3M5V7X9Z1C3E5G7J9K2N';
    const envelope = (sequence: number) => JSON.stringify({ type: 'objective_event.message', timestamp: new Date().toISOString(), data: { objective: { id: objectiveId }, objectiveEvent: { sequence } } });
    const deliver = (id: string, body: string, sent = body) => fetch(`${example.url}/agentrt`, {
      method: 'POST', headers: webhookHeaders({ id, timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secret] }), body: sent,
    });
    assert.equal((await deliver('whdel_01KB0Q3M5V7X9Z1C3E5G7J9K2A', envelope(1))).status, 204);
    assert.equal((await deliver('whdel_01KB0Q3M5V7X9Z1C3E5G7J9K2A', envelope(1))).status, 204, 'a delivery sent again');
    assert.equal((await deliver('whdel_01KB0Q3M5V7X9Z1C3E5G7J9K2B', envelope(2), envelope(3))).status, 400, 'a body changed after signing');
    assert.equal((await deliver('whdel_01KB0Q3M5V7X9Z1C3E5G7J9K2C', envelope(4))).status, 204);
    // The example logs in arrival order: once the last one shows, a repeat or the refused one would have shown before it.
    const lines = await eventuallyValue(async () => {
      const logged = example.lines().filter((line) => line.includes(objectiveId));
      return logged.at(-1)?.endsWith(' 4') && logged;
    }, 'the last delivery logged');
    assert.deepEqual(lines, [`objective_event.message ${objectiveId} 1`, `objective_event.message ${objectiveId} 4`]);
  });
});
