// A webhook endpoint whose receiver cannot be reached tells the operator once
// (issue 28 item 4): the real app with an embedded runtime, objectives on the
// scripted model, deliveries that fail at connect time (a closed port; an
// address the URL policy refuses when connecting), and the node's own log.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { eventuallyValue } from '../support/eventually';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const FAILED = 'WEBHOOK_DELIVERY_STATUS_FAILED';
const WARNING = /^webhook deliveries cannot reach the receiver/;
const SECRET_IN_URL = 'tok_SECRET_IN_URL';

interface LogLine {
  level: number;
  msg: string;
  agentId?: string;
  endpointId?: string;
  receiverHost?: string;
  reason?: string;
}

/** An API with an embedded runtime and short webhook retries, and a workspace in it. */
async function world(env: Record<string, string>): Promise<{ api: TestApi; ws: WorkspaceFixture }> {
  const api = await startTestApi({ runtime: true, env: { AGENTRT_WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', AGENTRT_WEBHOOK_TIMEOUT_MS: '2000', ...env } });
  return { api, ws: await workspaceFixture(api) };
}

async function scriptedAgent(api: TestApi, ws: WorkspaceFixture, spec: Record<string, unknown>): Promise<string> {
  const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `unreachable-${Date.now()}` }, spec });
  await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
  return agent.metadata.id;
}

/** Runs an objective and waits until each of its events has a FAILED delivery (every attempt made). */
async function failedDeliveries(api: TestApi, ws: WorkspaceFixture, agentId: string): Promise<Json[]> {
  const objective = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/objectives`, { agentId, initialMessage: 'SAY hello' });
  const base = `/v1/workspaces/${ws.workspaceId}`;
  return eventuallyValue(async () => {
    const events = (await api.request('GET', `${base}/objectives/${objective.metadata.id}/events?limit=1000`, { token: ws.token })).body.items as Json[];
    if (events.at(-1)?.data.type !== 'OBJECTIVE_EVENT_TYPE_FINALIZED') return undefined;
    const rows = (await api.request('GET', `${base}/agents/${agentId}/webhook_deliveries?limit=1000`, { token: ws.token })).body.items as Json[];
    return rows.length === events.length && rows.every((row) => row.data.status === FAILED) ? rows : undefined;
  }, 'every delivery of the objective to fail', 50_000);
}

function warningsFor(api: TestApi, agentId: string): LogLine[] {
  return api.logs.flatMap((text) => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine))
    .filter((line) => line.level === 40 && WARNING.test(line.msg) && line.agentId === agentId);
}

describe('webhook endpoints whose receiver cannot be reached', function () {
  this.timeout(120_000);

  describe('when the connection is refused (nothing listens on the port)', () => {
    let api: TestApi;
    let ws: WorkspaceFixture;
    before(async () => ({ api, ws } = await world({ AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' })));
    after(async () => api?.close());

    it('logs one warning for the endpoint, however many attempts fail, naming its agent and host but not the URL', async () => {
      const closed = await startWebhookReceiver();
      await closed.close();
      const host = new URL(closed.url).host;
      const agentId = await scriptedAgent(api, ws, { webhookEventsUrl: `${closed.url}/events?token=${SECRET_IN_URL}` });
      const rows = await failedDeliveries(api, ws, agentId);
      const attempts = rows.reduce((sum, row) => sum + Number(row.data.attemptCount), 0);
      assert.ok(rows.length >= 2 && attempts >= 6, `several deliveries, three attempts each (${rows.length} deliveries, ${attempts} attempts)`);
      assert.equal(rows[0].data.errorMessage, 'connection refused');
      const warnings = warningsFor(api, agentId);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0].receiverHost, host);
      assert.equal(warnings[0].reason, 'connection refused');
      assert.match(warnings[0].endpointId ?? '', new RegExp(`^${agentId}:[0-9a-f]{16}$`));
      assert.ok(!api.logs.join('').includes(SECRET_IN_URL), 'the URL\'s token is never logged');
    });
  });

  describe('when the URL policy refuses the address at delivery time', () => {
    let api: TestApi;
    let ws: WorkspaceFixture;
    let receiver: WebhookReceiver;
    before(async () => {
      ({ api, ws } = await world({}));
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await api?.close();
      await receiver?.close();
    });

    it('logs one warning naming AGENTRT_ALLOW_PRIVATE_NETWORK, and sends nothing', async () => {
      const agentId = await scriptedAgent(api, ws, { webhookEventsUrl: 'https://hooks.example.com/in' });
      // A loopback URL stored before URLs were checked when written: only the connect-time rule stands in its way.
      await api.dataSource.query('UPDATE agents SET webhook_events_url = $1 WHERE id = $2', [`${receiver.url}/legacy`, agentId]);
      const rows = await failedDeliveries(api, ws, agentId);
      const refusal = 'address not allowed: refused to connect to 127.0.0.1 (127.0.0.1), a private, loopback or link-local address; '
        + 'set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses';
      assert.deepEqual([...new Set(rows.map((row) => row.data.errorMessage))], [refusal]);
      const warnings = warningsFor(api, agentId);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0].reason, refusal);
      assert.equal(receiver.received.length, 0);
    });
  });
});
