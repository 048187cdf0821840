// Webhook delivery end to end (issue 10 items 1-4 and 7): the real app with an
// embedded actor runtime, objectives run by the builtin/scripted model, the
// webhook intake on the embedded event log, the endpoint actors, and a real
// receiver that verifies every request with the `standardwebhooks` package (not
// with our own code). The retry schedule is shortened by configuration.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { TestApi } from '../support/api';
import { startTestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { eventuallyValue } from '../support/eventually';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const COMPLETED = 'WEBHOOK_DELIVERY_STATUS_COMPLETED';

const eventually = <T>(read: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000) => eventuallyValue(read, what, timeoutMs);

describe('webhook delivery (embedded runtime, real receiver)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let receiver: WebhookReceiver;
  let ws: WorkspaceFixture;
  let signingSecret: string;

  /** An agent with one scripted variation whose webhookEventsUrl is `<receiver>/<path>`. */
  async function agentPostingTo(path: string): Promise<string> {
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `hooked-${path.replace(/\W/g, '')}` }, spec: { webhookEventsUrl: `${receiver.url}/${path}` } });
    await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    return agent.metadata.id;
  }

  async function runObjective(agentId: string, initialMessage = 'SAY hello'): Promise<Json> {
    return created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/objectives`, { agentId, initialMessage, metadata: { externalId: 'ext-1', labels: { suite: 'webhooks' } } });
  }

  async function eventsOf(objectiveId: string): Promise<Json[]> {
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}/events?limit=1000`, { token: ws.token });
    return response.body.items;
  }

  async function deliveries(agentId: string, query = ''): Promise<Json[]> {
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/webhook_deliveries?limit=1000${query}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items;
  }

  /** Waits until the objective is finished and every one of its events has a delivery in one of `statuses`. */
  async function settled(agentId: string, objectiveId: string, statuses = [COMPLETED]): Promise<{ events: Json[]; deliveries: Json[] }> {
    return eventually(async () => {
      const events = await eventsOf(objectiveId);
      if (events.at(-1)?.data.type !== 'OBJECTIVE_EVENT_TYPE_FINALIZED') return undefined;
      const rows = (await deliveries(agentId, `&objectiveId=${objectiveId}`));
      if (rows.length !== events.length || !rows.every((row) => statuses.includes(row.data.status))) return undefined;
      return { events, deliveries: rows };
    }, `the deliveries of ${objectiveId} to be ${statuses.join('/')}`);
  }

  /** Verifies with the standardwebhooks package, as a customer's receiver would; returns the parsed body. */
  function verified(webhook: ReceivedWebhook, secret = signingSecret): Json {
    return new Webhook(secret.replace(/^wh_/, 'whsec_')).verify(webhook.body, webhook.headers);
  }

  before(async () => {
    api = await startTestApi({
      runtime: true,
      env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms', AGENTRT_WEBHOOK_TIMEOUT_MS: '2000' },
      logLevel: 'info',
    });
    receiver = await startWebhookReceiver();
    ws = await workspaceFixture(api);
    const account = await api.request('GET', '/v1/account', { token: ws.account.globalApiKey.token });
    signingSecret = account.body.info.webhookEventsHmacSecret;
    assert.match(signingSecret, /^wh_/);
  });

  after(async () => {
    await api?.close();
    await receiver?.close();
  });

  it('delivers every event of an objective, in order, signed, with the delivery id as webhook-id, and records each delivery', async () => {
    const agentId = await agentPostingTo('ok');
    const objective = await runObjective(agentId);
    const { events, deliveries: rows } = await settled(agentId, objective.metadata.id);
    const received = receiver.at('/ok').filter((webhook) => verified(webhook).data.objective.id === objective.metadata.id);
    assert.deepEqual(received.map((webhook) => verified(webhook).data.objectiveEvent.metadata.id), events.map((event) => event.metadata.id), 'every event once, in order');
    for (const webhook of received) {
      const body = verified(webhook);
      assert.equal(body.type, `objective_event.${String(body.data.objectiveEvent.data.type).replace('OBJECTIVE_EVENT_TYPE_', '').toLowerCase()}`);
      assert.equal(body.data.agent.id, agentId);
      assert.equal(body.data.objective.externalId, 'ext-1');
      assert.deepEqual(body.data.objective.labels, { suite: 'webhooks' });
      assert.equal(webhook.headers['content-type'], 'application/json');
      assert.match(webhook.id, /^whdel_[0-9A-Z]{26}$/);
      assert.ok(Math.abs(Number(webhook.timestamp) - Date.now() / 1000) < 60, 'webhook-timestamp in seconds');
    }
    const byEvent = new Map(rows.map((row) => [row.data.objectiveEventId, row]));
    for (const [index, event] of events.entries()) {
      const row = byEvent.get(event.metadata.id);
      assert.ok(row, `a delivery for event ${event.sequence}`);
      assert.equal(row.metadata.id, received[index].id, 'webhook-id is the delivery id');
      assert.equal(row.data.webhookId, row.metadata.id);
      assert.equal(row.data.agentId, agentId);
      assert.equal(row.data.objectiveId, objective.metadata.id);
      assert.equal(row.data.webhookUrl, `${receiver.url}/ok`);
      assert.equal(row.data.eventType, event.data.type);
      assert.equal(row.data.attemptCount, 1);
      assert.equal(row.data.httpStatusCode, 204);
      assert.equal(row.data.responseContentLength, '0');
      assert.equal(typeof row.data.latencyMs, 'number');
      assert.ok(row.data.lastAttemptAt);
      assert.ok(row.data.responseHeaders && typeof row.data.responseHeaders === 'object');
      assert.equal(row.metadata.externalId, 'ext-1');
    }
    const filtered = await deliveries(agentId, `&eventType=OBJECTIVE_EVENT_TYPE_FINALIZED&status=${COMPLETED}`);
    assert.deepEqual(filtered.map((row) => row.data.objectiveEventId), [events.at(-1).metadata.id]);
  });

  it('signs with both secrets from the next delivery after a rotation, for a day, either one verifying', async () => {
    const agentId = await agentPostingTo('rotated');
    // Deliveries just before: this node holds the account's secrets in memory when the rotation comes.
    const before = await runObjective(agentId);
    await settled(agentId, before.metadata.id);
    const rotated = await api.request('POST', '/v1/account/rotate_webhook_signing_key', { token: ws.account.globalApiKey.token });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const newSecret = rotated.body.webhookEventsHmacSecret as string;
    const objective = await runObjective(agentId);
    await settled(agentId, objective.metadata.id);
    const received = receiver.at('/rotated').filter((webhook) => verified(webhook).data.objective.id === objective.metadata.id);
    assert.ok(received.length > 0);
    for (const webhook of received) {
      assert.equal(webhook.signature.split(' ').length, 2, 'two signatures, space-separated');
      assert.equal(verified(webhook, newSecret).data.objective.id, objective.metadata.id);
      assert.equal(verified(webhook, signingSecret).data.objective.id, objective.metadata.id);
    }
    signingSecret = newSecret;
  });

  it('retries a failing receiver with the same webhook-id, and holds the objective\'s later events until the earlier one succeeded', async () => {
    const agentId = await agentPostingTo('flaky');
    // The first event fails twice, then succeeds.
    receiver.answer('/flaky', (webhook, index) => (index < 2 ? { status: 503, headers: { 'retry-after': '0' } } : { status: 200, body: 'ok' }));
    const objective = await runObjective(agentId);
    const { events, deliveries: rows } = await settled(agentId, objective.metadata.id);
    const received = receiver.at('/flaky');
    const ids = received.map((webhook) => webhook.id);
    const first = rows.find((row) => row.data.objectiveEventId === events[0].metadata.id);
    assert.deepEqual(ids.slice(0, 3), [first.metadata.id, first.metadata.id, first.metadata.id], 'three attempts of the first event, one id');
    assert.equal(first.data.attemptCount, 3);
    assert.deepEqual(received.slice(2).map((webhook) => verified(webhook).data.objectiveEvent.sequence), events.map((event) => event.sequence), 'nothing later went before the first succeeded');
  });

  it('records FAILED once the schedule is spent, and the retry endpoint sends it again with the same id', async () => {
    const agentId = await agentPostingTo('down');
    let healthy = false;
    receiver.answer('/down', () => (healthy ? { status: 200 } : { status: 500 }));
    const objective = await runObjective(agentId);
    const failed = await eventually(async () => (await deliveries(agentId, '&status=WEBHOOK_DELIVERY_STATUS_FAILED'))[0], 'a FAILED delivery');
    assert.equal(failed.data.attemptCount, 3, 'the first attempt and two retries');
    assert.equal(failed.data.httpStatusCode, 500);
    assert.equal(failed.data.errorMessage, 'HTTP 500');
    healthy = true;
    const retried = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/webhook_deliveries/${failed.metadata.id}/retry`, { token: ws.token });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.body.metadata.id, failed.metadata.id);
    await settled(agentId, objective.metadata.id);
    const again = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/webhook_deliveries/${failed.metadata.id}/retry`, { token: ws.token });
    assert.equal(again.status, 400, 'a COMPLETED delivery is not retried');
    assert.equal(receiver.at('/down').filter((webhook) => webhook.id === failed.metadata.id).length, 4);
  });

  it('does not follow a redirect', async () => {
    const agentId = await agentPostingTo('moved');
    receiver.answer('/moved', () => ({ status: 302, headers: { location: `${receiver.url}/elsewhere` } }));
    await runObjective(agentId);
    const failed = await eventually(async () => (await deliveries(agentId, '&status=WEBHOOK_DELIVERY_STATUS_FAILED'))[0], 'a FAILED delivery');
    assert.equal(failed.data.httpStatusCode, 302);
    assert.match(failed.data.errorMessage, /redirect not followed/);
    assert.equal(receiver.at('/elsewhere').length, 0);
  });

  it('disables the endpoint on 410 until the URL changes; DISABLED deliveries then go to the new URL on retry', async () => {
    const agentId = await agentPostingTo('gone');
    receiver.answer('/gone', () => ({ status: 410 }));
    const objective = await runObjective(agentId);
    const { events } = await settled(agentId, objective.metadata.id, ['WEBHOOK_DELIVERY_STATUS_DISABLED']);
    assert.equal(receiver.at('/gone').length, 1, 'nothing more is sent after the 410');
    const second = await runObjective(agentId);
    await settled(agentId, second.metadata.id, ['WEBHOOK_DELIVERY_STATUS_DISABLED']);
    assert.equal(receiver.at('/gone').length, 1, 'new events are recorded DISABLED, not sent');

    const moved = await api.request('PATCH', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}`, { token: ws.token, body: { spec: { webhookEventsUrl: `${receiver.url}/new-home` } } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    await sleep(1100);
    const third = await runObjective(agentId);
    await settled(agentId, third.metadata.id);
    assert.ok(receiver.at('/new-home').length > 0, 'a new URL is a new, enabled endpoint');

    const disabled = (await deliveries(agentId, `&objectiveId=${objective.metadata.id}`)).find((row) => row.data.objectiveEventId === events[0].metadata.id);
    const retried = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/webhook_deliveries/${disabled.metadata.id}/retry`, { token: ws.token });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.body.data.webhookUrl, `${receiver.url}/new-home`);
    await eventually(async () => receiver.at('/new-home').find((webhook) => webhook.id === disabled.metadata.id), 'the retried delivery at the new URL');
  });
});
