// Webhook delivery through a node failure (issue 10 items 4 and 7), on two
// BUILT nodes in cluster mode over real Postgres and NATS: the node whose
// endpoint actor is sending a delivery is killed with SIGKILL while the
// receiver holds the request; the other node takes the endpoint over and sends
// the delivery again with the same webhook-id, then the objective's later
// events, in order. The receiver verifies every request with standardwebhooks
// and never sees two ids for one event.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';
import { eventually } from '../support/cluster-harness';
import { TwoNodes } from '../support/two-nodes';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('webhook delivery through a node kill (two built nodes, Postgres and NATS)', function () {
  this.timeout(180_000);
  const cluster = new TwoNodes({
    name: 'webhook-e2e',
    env: {
      AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s', AGENTRT_RATE_LIMIT_PER_SECOND: '10000', AGENTRT_RATE_LIMIT_BURST: '10000',
    },
  });
  let receiver: WebhookReceiver;
  let workspaceId: string;

  const call = (method: string, route: string, body?: unknown) => cluster.call(method, route, body);

  before(async () => {
    receiver = await startWebhookReceiver();
    await cluster.start();
    workspaceId = (await call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    // Balanced first: a shard handed over while the test runs would re-send the held delivery without any kill.
    await cluster.balanced();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') cluster.printOutput();
  });

  after(async () => {
    await cluster.close();
    await receiver?.close();
  });

  it('sends a delivery again with the same webhook-id from the node that takes over, then the later events in order', async () => {
    const webhookUrl = `${receiver.url}/held`;
    // The first request of the first delivery is never answered: its sender is killed while it waits.
    let held: string | undefined;
    receiver.answer('/held', (webhook) => {
      if (held === undefined) held = webhook.id;
      return webhook.id === held && receiver.at('/held').filter((request) => request.id === held).length === 1 ? { status: 200, delayMs: 600_000 } : { status: 204 };
    });
    const agentId = (await call('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'hooked' }, spec: { webhookEventsUrl: webhookUrl } })).metadata.id as string;
    await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations`, { metadata: { name: 'v1' }, spec: { prompt: 'You help.', modelConfig: { modelId: 'builtin/scripted' } } });
    const account = await call('GET', '/v1/account');
    const secret = account.info.webhookEventsHmacSecret as string;

    const objective = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY one\nSAY two' });
    const objectiveId = objective.metadata.id as string;
    await eventually(async () => held !== undefined, 'the first delivery reached the receiver', 30_000);
    const owner = await cluster.ownerOf(webhookEndpointIdOf(agentId, webhookUrl));
    const killedAt = Date.now();
    await cluster.stopNode(owner, 'SIGKILL');

    let events: any[] = [];
    await eventually(async () => {
      const list = (await call('GET', `/v1/workspaces/${workspaceId}/objectives/${objectiveId}/events?limit=1000`)).items as any[];
      const finalized = list.at(-1)?.data.type === 'OBJECTIVE_EVENT_TYPE_FINALIZED';
      const deliveries = (await call('GET', `/v1/workspaces/${workspaceId}/agents/${agentId}/webhook_deliveries?limit=1000`)).items as any[];
      events = list;
      return finalized && deliveries.length === list.length && deliveries.every((row) => row.data.status === 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
    }, 'every delivery COMPLETED on the surviving node', 90_000);

    const requests = receiver.at('/held');
    const verifier = new Webhook(secret.replace(/^wh_/, 'whsec_'));
    const bodies = requests.map((request) => verifier.verify(request.body, request.headers) as any);
    const heldRequests = requests.filter((request) => request.id === held);
    assert.equal(heldRequests.length, 2, 'the held delivery was sent again once');
    assert.ok(heldRequests[1].receivedAt > killedAt, 'by the node that took over after the kill');
    const idsByEvent = new Map<string, Set<string>>();
    for (const [index, body] of bodies.entries()) {
      const eventId = body.data.objectiveEvent.metadata.id as string;
      idsByEvent.set(eventId, (idsByEvent.get(eventId) ?? new Set()).add(requests[index].id));
    }
    assert.deepEqual([...idsByEvent.keys()].sort(), events.map((event) => event.metadata.id).sort(), 'every event reached the receiver');
    for (const [eventId, ids] of idsByEvent) assert.equal(ids.size, 1, `one webhook-id for event ${eventId}`);
    const firstReceipts = bodies.map((body) => body.data.objectiveEvent.sequence as number).filter((sequence, index, all) => all.indexOf(sequence) === index);
    assert.deepEqual(firstReceipts, events.map((event) => event.sequence), 'first receipts in sequence order');
    const row = (await call('GET', `/v1/workspaces/${workspaceId}/agents/${agentId}/webhook_deliveries?limit=1000`)).items.find((item: any) => item.metadata.id === held);
    assert.equal(row.data.status, 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
  });
});
