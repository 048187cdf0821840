// Upgrading a cluster from a version that had no cluster id (issue 24 item
// 10): its database has no id yet and its webhook intake durable on
// OBJECTIVE_EVENTS is named from the subject prefix alone. After the upgrade
// the cluster makes its id, keeps delivering its agents' events, its new
// durable goes on where the old one stood (it is not handed again what the old
// one acknowledged) and the old durable is left as it was.
import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { Webhook } from 'standardwebhooks';
import { legacyWebhookIntakeDurableName, webhookIntakeDurableName } from '../../actors/kinds/webhook-intake';
import { OBJECTIVE_EVENTS_STREAM } from '../../src/objectives/objective-events';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { eventuallyValue } from '../support/eventually';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const STREAM = OBJECTIVE_EVENTS_STREAM.name;

describe('a cluster upgraded from a version without a cluster id (Postgres and NATS)', function () {
  this.timeout(120_000);
  const names = uniqueBusNames();
  const legacyDurable = legacyWebhookIntakeDurableName(names.subjectPrefix);
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let connection: NatsConnection;
  let manager: JetStreamManager;
  let api: TestApi | undefined;

  const startNode = () => startTestApi({ database, runtime: { ...names, shardCount: 4 }, natsUrl: TEST_NATS_URL, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }, logLevel: 'info' });
  const clusterId = async (): Promise<string | null> => (await api!.dataSource.query('SELECT cluster_id FROM actor_cluster'))[0].cluster_id;

  before(async () => {
    database = await createTestDatabase();
    receiver = await startWebhookReceiver();
    connection = await connect({ servers: TEST_NATS_URL });
    manager = await jetstreamManager(connection);
  });

  after(async () => {
    await api?.close().catch(() => undefined);
    await receiver?.close();
    await manager?.consumers.delete(STREAM, legacyDurable).catch(() => false);
    await deleteWebhookIntakeDurables(names.subjectPrefix);
    await deleteStream(names.eventStream);
    await connection?.close();
    await database?.drop();
  });

  it('makes its id, goes on delivering from where the old durable stood, and leaves the old durable as it was', async () => {
    api = await startNode();
    const ws: WorkspaceFixture = await workspaceFixture(api);
    const signingSecret = (await api.request('GET', '/v1/account', { token: ws.account.globalApiKey.token })).body.info.webhookEventsHmacSecret as string;
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'hooked' }, spec: { webhookEventsUrl: `${receiver.url}/events` } });
    await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const verifier = new Webhook(signingSecret.replace(/^wh_/, 'whsec_'));
    const received = () => receiver.at('/events').map((webhook) => (verifier.verify(webhook.body, webhook.headers) as any).data.objectiveEvent.metadata.id as string);
    const runObjective = async (initialMessage: string): Promise<string[]> => {
      const objective = await created(api!, ws.token, `/v1/workspaces/${ws.workspaceId}/objectives`, { agentId: agent.metadata.id, initialMessage });
      const events = await eventuallyValue(async () => {
        const items = (await api!.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objective.metadata.id}/events?limit=1000`, { token: ws.token })).body.items as any[];
        return items.at(-1)?.data.type === 'OBJECTIVE_EVENT_TYPE_FINALIZED' ? items.map((event) => event.metadata.id as string) : undefined;
      }, 'the objective finalized', 30_000);
      await eventuallyValue(async () => events.every((id) => received().includes(id)), 'every event of the objective delivered', 30_000);
      return events;
    };
    const before = await runObjective('SAY before the upgrade');
    const firstId = await clusterId();
    // What the version without a cluster id leaves: no id in the database, and its durable named from the
    // prefix alone, past every event it delivered (here: all of the stream so far).
    await api.dataSource.query('UPDATE actor_cluster SET cluster_id = NULL');
    await api.close();
    await manager.consumers.delete(STREAM, webhookIntakeDurableName(`${names.subjectPrefix}.${firstId}`));
    await manager.consumers.add(STREAM, { durable_name: legacyDurable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New, filter_subject: 'objective_events.>' });
    const upgradeSeq = (await manager.streams.info(STREAM)).state.last_seq;
    const legacyBefore = await manager.consumers.info(STREAM, legacyDurable);

    api = await startNode();
    const upgradedId = await clusterId();
    assert.match(upgradedId ?? '', /^[0-9A-HJKMNP-TV-Z]{26}$/, 'a cluster id made at the first start after the upgrade');
    assert.notEqual(upgradedId, firstId);
    const afterUpgrade = await runObjective('SAY after the upgrade');

    const counts = new Map<string, number>();
    for (const id of received()) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const id of [...before, ...afterUpgrade]) assert.equal(counts.get(id), 1, `event ${id} delivered once`);
    const durable = await manager.consumers.info(STREAM, webhookIntakeDurableName(`${names.subjectPrefix}.${upgradedId}`));
    const publishedSince = (await manager.streams.info(STREAM)).state.last_seq - upgradeSeq;
    assert.ok(durable.delivered.consumer_seq <= publishedSince, `the new durable was handed ${durable.delivered.consumer_seq} messages, only ${publishedSince} were published after the old one's position`);
    const legacyAfter = await manager.consumers.info(STREAM, legacyDurable);
    assert.deepEqual(legacyAfter.delivered, legacyBefore.delivered, 'the old durable is left as it was');
  });
});
