// Objectives through node failures (issue 9 item 10), on two BUILT nodes in
// cluster mode over real Postgres and NATS, driven over their HTTP APIs as a
// user would: an objective whose tool call is in flight when the node running
// it is killed with SIGKILL finishes on the other node with no outside message,
// the tool seeing the same Idempotency-Key again; and an objective awaiting
// approval on a node that is then killed is approved through the other node
// and finishes there; a model call in flight when its node is killed runs
// again on the other node, its request rebuilt from the objective's state.
// A node stopped with SIGTERM while its tool call never answers and a
// request's body never arrives ends within its drain time (exit 0), and the
// other node completes the objective; a slow tool call running at SIGTERM
// finishes on the stopping node, its result recorded, and reaches the tool
// once. The node running an objective is found from GET
// /v1/cluster (shard owners) and the "listening" log line's nodeId.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { eventually, TEST_NATS_URL } from '../support/cluster-harness';
import { objectiveEventMessages } from '../support/objective-event-messages';
import { TwoNodes } from '../support/two-nodes';

const SHARD_COUNT = 8;
/** The nodes' drain time (AGENTRT_DRAIN_TIMEOUT_MS) and the end of it kept for the handoff (AGENTRT_HANDOFF_TIMEOUT_MS). */
const DRAIN_MS = 8000;
const HANDOFF_MS = 2000;
/** What a stopping process may take beyond its drain time: a bound on shutdown, not a measure of its speed. */
const EXIT_SLACK_MS = 4000;
/** How long `/slow` takes to answer: less than the drain time leaves running calls (DRAIN_MS - HANDOFF_MS). */
const SLOW_TOOL_MS = 4000;

interface HeldToolServer {
  url: string;
  /** Every request: path and Idempotency-Key. */
  requests: Array<{ path: string; idempotencyKey: string | undefined }>;
  /** Idempotency-Keys of the `/slow` requests not answered yet. */
  slowInProgress: Set<string>;
  close(): Promise<void>;
}

/**
 * `/hold` never answers the first request of an Idempotency-Key (the node
 * sending it is killed while it waits) and answers any later one; `/slow`
 * answers SLOW_TOOL_MS after each request; `/echo` answers at once.
 */
async function startHeldToolServer(): Promise<HeldToolServer> {
  const requests: HeldToolServer['requests'] = [];
  const slowInProgress = new Set<string>();
  const slowTimers = new Set<NodeJS.Timeout>();
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const key = request.headers['idempotency-key'] as string | undefined;
      const route = new URL(request.url ?? '/', 'http://tool.test').pathname;
      const earlier = requests.filter((item) => item.path === route && item.idempotencyKey === key).length;
      requests.push({ path: route, idempotencyKey: key });
      if (route === '/hold' && earlier === 0) return;
      const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, attempt: earlier + 1 }));
      if (route !== '/slow') return answer();
      slowInProgress.add(String(key));
      const timer = setTimeout(() => {
        slowTimers.delete(timer);
        slowInProgress.delete(String(key));
        answer();
      }, SLOW_TOOL_MS);
      slowTimers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    slowInProgress,
    close: () => new Promise((resolve) => {
      for (const timer of slowTimers) clearTimeout(timer);
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The messages of stream OBJECTIVE_EVENTS for one objective. */
function publishedObjectiveEvents(objectiveId: string, expected: number): Promise<Array<{ subject: string; id: string | undefined; body: any }>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return objectiveEventMessages(TEST_NATS_URL, objectiveId, expected, 20_000, (message) => ({ subject: message.subject, id: message.headers?.get('Nats-Msg-Id'), body: message.json() }));
}

describe('objectives through node failures (two built nodes, Postgres and NATS)', function () {
  this.timeout(180_000);
  const cluster = new TwoNodes({
    name: 'objective-e2e',
    shardCount: SHARD_COUNT,
    env: { AGENTRT_DRAIN_TIMEOUT_MS: String(DRAIN_MS), AGENTRT_HANDOFF_TIMEOUT_MS: String(HANDOFF_MS), AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' },
    // OBJECTIVE_EVENTS has a fixed name (api-decisions.md): this run's objectives were its only writers on the test server.
    deleteObjectiveEvents: true,
  });
  const { nodes } = cluster;
  let tools: HeldToolServer;
  let workspaceId: string;
  let agentId: string;

  const call = (method: string, route: string, body?: unknown) => cluster.call(method, route, body);

  /** Waits until both nodes share the shards evenly: no rebalance is under way (a node just restarted takes shards over in one). */
  async function waitForBalance(): Promise<void> {
    if (nodes.includes(null)) await cluster.startNode(nodes.indexOf(null));
    await cluster.balanced(30_000);
  }

  async function objective(id: string) {
    return call('GET', `/v1/workspaces/${workspaceId}/objectives/${id}`);
  }

  async function events(id: string): Promise<Array<{ sequence: number; data: { type: string } }>> {
    return (await call('GET', `/v1/workspaces/${workspaceId}/objectives/${id}/events?limit=1000`)).items;
  }

  before(async () => {
    tools = await startHeldToolServer();
    await cluster.start();
    workspaceId = (await call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    agentId = (await call('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'failover-bot' } })).metadata.id;
    const variation = await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You help.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    const hold = await call('POST', `/v1/workspaces/${workspaceId}/tools`, {
      metadata: { name: 'hold' }, spec: { description: 'Holds the first call', http: { url: `${tools.url}/hold`, method: 'POST' } },
    });
    const risky = await call('POST', `/v1/workspaces/${workspaceId}/tools`, {
      metadata: { name: 'risky' }, spec: { description: 'Needs approval', requiresApproval: true, http: { url: `${tools.url}/echo`, method: 'POST' } },
    });
    const slow = await call('POST', `/v1/workspaces/${workspaceId}/tools`, {
      metadata: { name: 'slow' }, spec: { description: 'Takes a few seconds', http: { url: `${tools.url}/slow`, method: 'POST' } },
    });
    for (const tool of [hold, risky, slow]) {
      await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
    }
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') cluster.printOutput();
  });

  after(async () => {
    await cluster.close();
    await tools?.close();
  });

  it('finishes an objective on the other node after the node running its tool call is killed, with the same Idempotency-Key', async () => {
    const created = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'CALL hold {"n":1}\nSAY held and done' });
    const id = created.metadata.id as string;
    await eventually(async () => tools.requests.some((request) => request.path === '/hold'), 'the tool call reached the tool', 20_000);
    const owner = await cluster.ownerOf(id);
    await cluster.stopNode(owner, 'SIGKILL');
    await eventually(async () => (await objective(id)).info.status === 'OBJECTIVE_STATUS_COMPLETED', 'COMPLETED on the surviving node', 60_000);
    const holds = tools.requests.filter((request) => request.path === '/hold');
    assert.equal(holds.length, 2, 'sent again once after the kill');
    assert.match(holds[0].idempotencyKey ?? '', /\S/);
    assert.equal(holds[1].idempotencyKey, holds[0].idempotencyKey, 'the same Idempotency-Key (the tool call id)');
    const list = await events(id);
    assert.deepEqual(list.map((event) => event.sequence), list.map((_, index) => index + 1), 'events numbered without gaps');
    assert.equal(list.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_RESULT').length, 1, 'one result for the one call');
    assert.equal(list.at(-1)!.data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    // The same events on NATS, once each, in order, as webhook envelopes whose message id is the event id.
    const published = await publishedObjectiveEvents(id, list.length);
    assert.deepEqual(published.map((message) => message.body.data.objectiveEvent.sequence), list.map((event) => event.sequence));
    assert.deepEqual(published.map((message) => message.id), list.map((event: any) => event.metadata.id)); // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(published[0].subject, `objective_events.${created.metadata.accountId}.${workspaceId}.${agentId}.${id}.user_message`);
    assert.equal(published.at(-1)!.body.type, 'objective_event.finalized');
    await cluster.startNode(nodes.indexOf(null));
  });

  it('runs a model call again on the other node after the node running it is killed, its request rebuilt from the objective', async () => {
    // The journal keeps no model request (it would hold the whole conversation): the survivor rebuilds it from the state.
    const created = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SLEEP 3000\nSAY answered after the kill' });
    const id = created.metadata.id as string;
    const owner = await cluster.ownerOf(id);
    await cluster.stopNode(owner, 'SIGKILL');
    await eventually(async () => !['OBJECTIVE_STATUS_RUNNING', 'OBJECTIVE_STATUS_PENDING'].includes((await objective(id)).info.status), 'finished on the surviving node', 60_000);
    const finished = await objective(id);
    assert.equal(finished.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(finished.info));
    assert.equal(finished.info.lastMessage, 'answered after the kill');
    const types = (await events(id)).map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
    assert.deepEqual(types, ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'FINALIZED']);
    await cluster.startNode(nodes.indexOf(null));
  });

  it('ends a node within its drain time on SIGTERM while its tool call never answers and a request is in flight; the other node completes the objective', async () => {
    // The SIGTERM's handoff is the only one.
    await waitForBalance();
    const holdsBefore = tools.requests.filter((request) => request.path === '/hold').length;
    const created = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'CALL hold {"n":3}\nSAY drained and done' });
    const id = created.metadata.id as string;
    await eventually(async () => tools.requests.filter((request) => request.path === '/hold').length > holdsBefore, 'the tool call reached the tool', 20_000);
    const owner = await cluster.ownerOf(id);
    const stopping = nodes[owner]!;
    // A request in flight that does not end by itself (its body never comes): shutdown must cut it within the drain time too.
    const stalled = net.connect(Number(new URL(stopping.url).port), new URL(stopping.url).hostname);
    stalled.on('error', () => undefined);
    const cut = once(stalled, 'close');
    await once(stalled, 'connect');
    stalled.write(`POST /v1/workspaces/${workspaceId}/objectives HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer ${cluster.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"agentId":`);
    const signalledAt = Date.now();
    const exit = await cluster.stopNode(owner, 'SIGTERM');
    const stoppedInMs = Date.now() - signalledAt;
    await cut;
    assert.deepEqual(exit, { code: 0, signal: null }, 'a graceful stop');
    assert.ok(stoppedInMs <= DRAIN_MS + EXIT_SLACK_MS, `exited ${stoppedInMs} ms after SIGTERM; the drain time is ${DRAIN_MS} ms`);
    assert.ok(stopping.logs().some((line) => line.msg === 'effects still running at the end of the drain time: the next owner runs them again'), 'the unanswered call was given up at the end of the drain time');
    await eventually(async () => (await objective(id)).info.status === 'OBJECTIVE_STATUS_COMPLETED', 'COMPLETED on the other node', 60_000);
    const holds = tools.requests.filter((request) => request.path === '/hold').slice(holdsBefore);
    assert.equal(holds.length, 2, 'the call given up is made again by the next owner');
    assert.equal(holds[1].idempotencyKey, holds[0].idempotencyKey, 'with the same Idempotency-Key');
    await cluster.startNode(owner);
  });

  it('lets a tool call running at SIGTERM finish and records its result: the tool sees it once, and the other node completes the objective', async () => {
    await waitForBalance();
    const created = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'CALL slow {"n":4}\nSAY slow and done' });
    const id = created.metadata.id as string;
    await eventually(async () => tools.slowInProgress.size === 1, 'the tool call reached the tool', 20_000);
    const [key] = tools.slowInProgress;
    const owner = await cluster.ownerOf(id);
    assert.ok(tools.slowInProgress.has(key), 'the call still runs when the node is stopped');
    const exit = await cluster.stopNode(owner, 'SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null });
    await eventually(async () => (await objective(id)).info.status === 'OBJECTIVE_STATUS_COMPLETED', 'COMPLETED on the other node', 60_000);
    assert.deepEqual(tools.requests.filter((request) => request.path === '/slow').map((request) => request.idempotencyKey), [key], 'the call reached the tool once');
    const types = (await events(id)).map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
    assert.deepEqual(types.filter((type) => type.startsWith('TOOL_')), ['TOOL_CALLED', 'TOOL_RESULT']);
    await cluster.startNode(owner);
  });

  it('approves, through the other node, a tool call that was waiting on a node since killed', async () => {
    const created = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'CALL risky {"q":"drop"}\nSAY approved and done' });
    const id = created.metadata.id as string;
    await eventually(async () => (await objective(id)).info.status === 'OBJECTIVE_STATUS_AWAITING_APPROVAL', 'AWAITING_APPROVAL', 20_000);
    const [toolCallId] = (await objective(id)).info.pendingToolCallIds as string[];
    const owner = await cluster.ownerOf(id);
    await cluster.stopNode(owner, 'SIGKILL');
    const approved = await call('PUT', `/v1/workspaces/${workspaceId}/objectives/${id}/tool_calls/${toolCallId}/approve`, {});
    assert.deepEqual(approved.info.pendingToolCallIds, []);
    await eventually(async () => (await objective(id)).info.status === 'OBJECTIVE_STATUS_COMPLETED', 'COMPLETED after approval', 60_000);
    assert.equal(tools.requests.filter((request) => request.path === '/echo' && request.idempotencyKey === toolCallId).length, 1, 'the approved call ran once');
    const types = (await events(id)).map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
    assert.deepEqual(types.filter((type) => type.startsWith('TOOL_')), ['TOOL_APPROVAL_REQUESTED', 'TOOL_APPROVED', 'TOOL_CALLED', 'TOOL_RESULT']);
  });
});
