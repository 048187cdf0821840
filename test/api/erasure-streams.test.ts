// Erasure beyond the objectives' rows (issue 24 item 9), on a cluster-mode
// node (real NATS and Postgres): after a subject's erasure job completes, the
// messages of its objectives are gone from OBJECTIVE_EVENTS while other
// objectives' stay, the deliveries its endpoint still had queued go out with
// their content erased, and the endpoint's state (its snapshot) holds none of
// it. The receiver fails every attempt, so deliveries stay queued and retried.
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createVariation, MODEL_ID } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, eventually, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { objectiveEventMessages } from '../support/objective-event-messages';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';

/* eslint-disable @typescript-eslint/no-explicit-any */

const DAY_NS = 86_400_000 * 1_000_000;

describe('erasure through JetStream and webhooks (cluster mode)', function () {
  this.timeout(120_000);
  const busNames = uniqueBusNames();
  let api: TestApi;
  let ws: WorkspaceFixture;
  let receiver: WebhookReceiver;
  let agentId: string;
  let webhookUrl: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const get = async (path: string) => {
    const response = await api.request('GET', `${base()}${path}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const objectiveOf = (webhook: ReceivedWebhook) => (JSON.parse(webhook.body) as any).data.objective.id as string;
  /** The messages of one objective on OBJECTIVE_EVENTS (their data). */
  const streamMessages = (objectiveId: string, expected: number, timeoutMs: number) =>
    objectiveEventMessages(TEST_NATS_URL, objectiveId, expected, timeoutMs, (message) => message.string());

  before(async () => {
    receiver = await startWebhookReceiver();
    receiver.answer('/hooks', () => ({ status: 500 }));
    webhookUrl = `${receiver.url}/hooks`;
    api = await startTestApi({
      runtime: busNames, natsUrl: TEST_NATS_URL,
      // A failed attempt is retried every second for a minute: the deliveries stay queued while the test runs.
      env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 60 }, () => '1s').join(','), AGENTRT_WEBHOOK_TIMEOUT_MS: '2000' },
    });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId, { spec: { webhookEventsUrl: webhookUrl } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
  });

  after(async () => {
    await api?.close();
    await receiver?.close();
    await deleteStream(busNames.eventStream).catch(() => undefined);
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
  });

  it('removes the erased subject\'s messages from the stream and its content from queued webhooks and the endpoint\'s state', async () => {
    const create = async (initialMessage: string, externalId: string) => {
      const response = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId, initialMessage, subject: { externalId } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body as any;
    };
    const alice = await create('SAY secret of alice', 'alice');
    const bob = await create('SAY secret of bob', 'bob');
    for (const objective of [alice, bob]) {
      await eventually(async () => (await get(`/objectives/${objective.metadata.id}`)).info.status === 'OBJECTIVE_STATUS_COMPLETED', 'objective completed', 30_000);
    }
    const eventCount = async (objectiveId: string) => (await get(`/objectives/${objectiveId}/events`)).items.length as number;
    const aliceEvents = await eventCount(alice.metadata.id);
    const bobEvents = await eventCount(bob.metadata.id);
    assert.equal((await streamMessages(alice.metadata.id, aliceEvents, 15_000)).length, aliceEvents, 'alice\'s events were published');
    assert.ok((await streamMessages(alice.metadata.id, aliceEvents, 1000)).some((data) => data.includes('secret of alice')));
    // Both objectives' first events reached the receiver (and failed): their deliveries wait for their next attempt.
    await eventually(() => receiver.at('/hooks').some((webhook) => webhook.body.includes('secret of alice')), 'an attempt for alice', 30_000);
    await eventually(() => receiver.at('/hooks').some((webhook) => webhook.body.includes('secret of bob')), 'an attempt for bob', 30_000);

    const deleted = await api.request('DELETE', `${base()}/subjects/${alice.spec.subjectId}`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    await eventually(async () => (await get(`/erasures/${deleted.body.metadata.id}`)).info.status === 'ERASURE_STATUS_COMPLETED', 'the erasure completed', 60_000);
    const erasedAt = receiver.received.length;

    assert.deepEqual(await streamMessages(alice.metadata.id, 1, 2000), [], 'no message of the erased objective is left on the stream');
    const bobMessages = await streamMessages(bob.metadata.id, bobEvents, 15_000);
    assert.equal(bobMessages.length, bobEvents, 'the other subject\'s messages stay');
    assert.ok(bobMessages.some((data) => data.includes('secret of bob')));

    // Attempts after the erasure: alice's queued delivery goes out erased, bob's as it was.
    await eventually(() => receiver.received.slice(erasedAt).some((webhook) => objectiveOf(webhook) === alice.metadata.id), 'an attempt for alice after the erasure', 30_000);
    await eventually(() => receiver.received.slice(erasedAt).some((webhook) => objectiveOf(webhook) === bob.metadata.id), 'an attempt for bob after the erasure', 30_000);
    // An attempt that was already under way when the endpoint erased its bodies sends what it held: skip the first second.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const settled = receiver.received.length;
    await eventually(() => receiver.received.slice(settled).some((webhook) => objectiveOf(webhook) === alice.metadata.id), 'a later attempt for alice', 30_000);
    const later = receiver.received.slice(settled);
    for (const webhook of later.filter((each) => objectiveOf(each) === alice.metadata.id)) {
      assert.doesNotMatch(webhook.body, /secret of alice/, 'a queued delivery of the erased objective carries no content');
      assert.match(webhook.body, /\[erased\]/);
    }
    await eventually(() => receiver.received.slice(settled).some((webhook) => webhook.body.includes('secret of bob')), 'bob\'s deliveries keep their content', 30_000);

    // The endpoint's state, as its snapshot stores it, holds none of alice's content but still bob's.
    const key = `webhook_endpoint:${webhookEndpointIdOf(agentId, webhookUrl)}`;
    const [snapshot] = await api.dataSource.query('SELECT payload::text AS payload FROM actor_snapshots WHERE persistence_key = $1', [key]);
    assert.ok(snapshot, 'the erasure snapshotted the endpoint');
    assert.doesNotMatch(snapshot.payload, /secret of alice/);
    assert.match(snapshot.payload, /secret of bob/);
    assert.deepEqual(Object.keys(JSON.parse(snapshot.payload).state.erasedObjectives), [alice.metadata.id], 'a late event of alice\'s would be erased too');
  });

  it('gives OBJECTIVE_EVENTS at least the configured retention (default 7 days)', async () => {
    const connection = await connect({ servers: TEST_NATS_URL });
    try {
      const manager = await jetstreamManager(connection);
      // Shared by every cluster on the server: a node never lowers it, so another's longer retention may stand.
      assert.ok((await manager.streams.info('OBJECTIVE_EVENTS')).config.max_age >= 7 * DAY_NS);
    } finally {
      await connection.close();
    }
  });
});
