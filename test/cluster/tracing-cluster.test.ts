// Tracing across nodes (issue 27 item 4) in cluster mode: two in-process nodes
// on NATS over their own database, one (B) owning every shard and the other
// (A) none, so every command A's API sends to an objective crosses the bus to
// B. The objective's turns on B continue the span of the request A served;
// a follow-up message's command carries the span of its own request to B,
// whose turn links it; the events go out through JetStream with the turn's
// traceparent header, and the webhook receiver gets the objective's trace.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { eventuallyValue } from '../support/eventually';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SHARD_COUNT = 4;

describe('tracing across nodes (Postgres and NATS)', function () {
  this.timeout(120_000);
  const names = uniqueBusNames();
  let database: TestDatabase;
  let otlp: OtlpReceiver;
  let hooks: WebhookReceiver;
  const nodes: TestApi[] = [];

  const startNode = () => startTestApi({
    database,
    // No rebalancing after the first round: the first node keeps every shard, the second gets none.
    runtime: { ...names, shardCount: SHARD_COUNT, rebalanceIntervalMs: 600_000 },
    natsUrl: TEST_NATS_URL,
    env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
    logLevel: 'info',
  });

  before(async () => {
    database = await createTestDatabase();
    otlp = await startOtlpReceiver();
    hooks = await startWebhookReceiver();
    nodes.push(await startNode());
    await eventuallyValue(async () => nodes[0].runtime!.ownedShards().length === SHARD_COUNT, 'the first node owning every shard', 30_000);
    nodes.push(await startNode());
  });

  after(async () => {
    for (const node of nodes.reverse()) await node.close().catch(() => undefined);
    await hooks?.close();
    await otlp?.close();
    await database?.drop();
    await deleteWebhookIntakeDurables(names.subjectPrefix);
    await deleteStream(names.eventStream);
  });

  it("continues the request's trace on the node that owns the objective, and links a later command's own trace", async () => {
    const [owner, front] = nodes;
    assert.equal(front.runtime!.ownedShards().length, 0, 'the node serving the requests owns no shard');
    const ws = await workspaceFixture(front);
    const agentId = (await createAgent(front, ws.token, ws.workspaceId, { metadata: { name: 'far' }, spec: { webhookEventsUrl: `${hooks.url}/far` } })).metadata.id as string;
    await createVariation(front, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const base = `/v1/workspaces/${ws.workspaceId}/objectives`;
    const objectiveId = (await created(front, ws.token, base, { agentId, initialMessage: 'SAY hello' })).metadata.id as string;
    const completed = (lastMessage: string) => eventuallyValue(async () => {
      const read = await front.request('GET', `${base}/${objectiveId}`, { token: ws.token });
      return read.body.info?.status === 'OBJECTIVE_STATUS_COMPLETED' && read.body.info.lastMessage === lastMessage;
    }, `the objective answering ${lastMessage}`, 20_000);
    await completed('hello');
    const followUp = await front.request('POST', `${base}/${objectiveId}/messages`, { token: ws.token, body: { content: 'SAY again' } });
    assert.equal(followUp.status, 200, JSON.stringify(followUp.body));
    await completed('again');

    const events = (await front.request('GET', `${base}/${objectiveId}/events?limit=100`, { token: ws.token })).body.items as any[];
    const traceId = events[0].traceId as string;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.ok(events.every((event) => event.traceId === traceId), 'the follow-up run stays in the trace the objective was created in');
    // 60 s: a delivery retried after a failed attempt waits its backoff; on a timeout, say what was delivered and recorded.
    const webhooks = await eventuallyValue(async () => (hooks.at('/far').length >= events.length ? hooks.at('/far') : undefined), 'every event delivered', 60_000)
      .catch(async (error: Error) => {
        const deliveries = await front.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/webhook_deliveries?limit=100`, { token: ws.token });
        throw new Error(`${error.message}: ${hooks.at('/far').length} of ${events.length} received; deliveries recorded: ${JSON.stringify(deliveries.body)}`);
      });
    assert.ok(webhooks.every((webhook) => webhook.headers.traceparent?.split('-')[1] === traceId), 'JetStream carried the trace to the intake and the delivery');

    const frontPort = Number(new URL(front.url).port);
    const ownerId = owner.runtime!.nodeId;
    const spans = await otlp.waitFor((all) => {
      // Spans go out in the order they end: once the last delivery's is in, the turns' are too.
      const followRequest = all.find((span) => span.name === 'POST /v1/workspaces/{workspaceId}/objectives/{id}/messages');
      return followRequest && all.filter((span) => span.traceId === traceId && span.name === 'webhook.deliver').length >= events.length ? all : undefined;
    }, 'the spans of both requests and the turns');
    const request = (name: string): ReceivedSpan => {
      const found = spans.find((span) => span.name === name);
      assert.ok(found, name);
      assert.equal(found.attributes['server.port'], frontPort, 'served by the node without shards');
      return found;
    };
    const create = request('POST /v1/workspaces/{workspaceId}/objectives');
    const message = request('POST /v1/workspaces/{workspaceId}/objectives/{id}/messages');
    assert.equal(create.traceId, traceId);
    assert.notEqual(message.traceId, traceId, 'the follow-up request has a trace of its own');

    const turns = spans.filter((span) => span.traceId === traceId && span.name === 'objective.turn');
    assert.ok(turns.every((turn) => turn.attributes['agentrt.node.id'] === ownerId), 'every turn ran on the owner');
    const start = turns.find((turn) => turn.parentSpanId === create.spanId);
    assert.ok(start, "the start turn on the owner is a child of the other node's request span");
    const commanded = turns.filter((turn) => turn.attributes['agentrt.turn.cause'] === 'command' && turn !== start);
    assert.equal(commanded.length, 1, 'the follow-up command turn');
    assert.deepEqual(commanded[0].links, [{ traceId: message.traceId, spanId: message.spanId }], "the wire carried the follow-up request's span to the owner");
    assert.ok(!turns.some((turn) => turn.parentSpanId === ''), 'no turn starts a trace of its own');
  });
});
