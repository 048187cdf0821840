// The node's domain metrics on /metrics (issue 27 item 5), on a cluster-mode
// node (real NATS and Postgres), read as Prometheus reads them: an objective
// with a tool call moves the objective, model and tool call series with their
// labels, a failed one counts its error type, approvals waiting go 1 then 0
// around an approval (from the read model, so right on any node), approvals
// and denials count by decision, webhook
// deliveries count their result and lag, a schedule's fire its lateness, and
// no label value anywhere is an id. The counters are the process's, so every
// check compares two scrapes; the node runs on a database of its own, so no
// other suite's schedule or objective runs on it meanwhile.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createTool, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { eventuallyValue } from '../support/eventually';
import { runObjective } from '../support/objective-runs';
import { parseScrape, type Scrape } from '../support/prometheus-text';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { modelLabel } from '../../actors/domain-metrics';
import { OPEN_OBJECTIVES_REFRESH_MS } from '../../http/middleware/read-model-metrics';

/** A label value that is an id: a prefixed id (`obj_…`, `agent_…`) or a bare ULID. */
const ID_LIKE = /(^|_)[0-9A-HJKMNP-TV-Z]{26}$|^(acc|ws|agent|agentvar|obj|objevt|toolcall|whdel|sched|tool|wsess|prof)_/;

describe('domain metrics on /metrics (cluster mode)', function () {
  this.timeout(60_000);
  const busNames = uniqueBusNames();
  let database: TestDatabase;
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let receiver: WebhookReceiver;
  let agentId: string;
  const base = () => `/v1/workspaces/${ws.workspaceId}`;

  async function scrape(): Promise<Scrape> {
    const response = await api.request('GET', '/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    return parseScrape(response.body as string);
  }

  /** Scrapes until `check` holds on the change since `before` (the read-model gauges refresh every few seconds). */
  function eventuallyScraped(what: string, check: (now: Scrape) => boolean, timeoutMs = 15_000): Promise<Scrape> {
    return eventuallyValue(async () => {
      const now = await scrape();
      return check(now) ? now : undefined;
    }, what, timeoutMs, 100);
  }

  before(async () => {
    tools = await startTestToolServer();
    receiver = await startWebhookReceiver();
    database = await createTestDatabase();
    api = await startTestApi({ database, runtime: { ...busNames, reminderPollMs: 100 }, natsUrl: TEST_NATS_URL, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'metered' }, spec: { webhookEventsUrl: `${receiver.url}/metered` } })).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const echo = await createTool(api, ws.token, ws.workspaceId, { metadata: { name: 'echo' }, spec: { description: 'Echoes', http: { url: `${tools.url}/echo`, method: 'POST' } } });
    const guarded = await createTool(api, ws.token, ws.workspaceId, {
      metadata: { name: 'guarded' }, spec: { description: 'Needs approval', requiresApproval: true, http: { url: `${tools.url}/echo`, method: 'POST' } },
    });
    const broken = await createTool(api, ws.token, ws.workspaceId, { metadata: { name: 'broken' }, spec: { description: 'Fails', http: { url: `${tools.url}/fail`, method: 'POST' } } });
    for (const tool of [echo, guarded, broken]) await created(api, ws.token, `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
  });

  after(async () => {
    await api?.close();
    await Promise.all([tools?.close(), receiver?.close()]);
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
    await deleteStream(busNames.eventStream).catch(() => undefined);
    await database?.drop();
  });

  it('an objective with a tool call counts its start and completion, its model calls by model with tokens, and the tool call by kind and outcome', async () => {
    const before = await scrape();
    const run = await runObjective(api, ws, { agentId, initialMessage: 'CALL echo {"q":1}\nSAY done' });
    assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);

    assert.equal(moved('agentrt_objectives_started_total'), 1);
    assert.equal(moved('agentrt_objectives_finished_total', { status: 'completed', error_type: 'none' }), 1);
    assert.equal(moved('agentrt_objectives_finished_total'), 1, 'no other status moved');
    // Two model turns: the CALL, then the answer after the tool's result.
    assert.equal(moved('agentrt_model_call_duration_seconds_count', { model: 'builtin/scripted', outcome: 'ok' }), 2);
    assert.ok(moved('agentrt_model_call_duration_seconds_sum', { model: 'builtin/scripted', outcome: 'ok' }) > 0);
    const usage = run.objective.info.usage;
    assert.equal(moved('agentrt_model_tokens_total', { model: 'builtin/scripted', type: 'input' }), usage.promptTokens);
    assert.equal(moved('agentrt_model_tokens_total', { model: 'builtin/scripted', type: 'output' }), usage.completionTokens);
    assert.equal(moved('agentrt_tool_calls_total', { kind: 'http', outcome: 'result' }), 1);
    assert.equal(moved('agentrt_tool_calls_total'), 1, 'one tool call, one outcome');
    assert.equal(moved('agentrt_tool_call_duration_seconds_count', { kind: 'http' }), 1);
    assert.equal(moved('agentrt_model_call_errors_total'), 0);
  });

  it('a failed objective counts its error type, and the failed model call its own; refused and failing tool calls count their outcomes', async () => {
    const before = await scrape();
    const failed = await runObjective(api, ws, { agentId, initialMessage: 'FAIL the script says so' });
    assert.equal(failed.objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(failed.objective.info.error.type, 'SCRIPT_FAILED');
    // One turn's calls: an unknown tool is refused before it runs, a tool answering 500 fails with HTTP_ERROR.
    const mixed = await runObjective(api, ws, { agentId, initialMessage: 'CALL nowhere {}\nCALL broken {}\nSAY done' });
    assert.equal(mixed.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(mixed.objective.info));
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);

    assert.equal(moved('agentrt_objectives_finished_total', { status: 'failed', error_type: 'SCRIPT_FAILED' }), 1);
    assert.equal(moved('agentrt_model_call_errors_total', { model: 'builtin/scripted', error_type: 'SCRIPT_FAILED' }), 1);
    assert.equal(moved('agentrt_model_call_duration_seconds_count', { model: 'builtin/scripted', outcome: 'error' }), 1);
    assert.equal(moved('agentrt_tool_calls_total', { kind: 'unknown', outcome: 'refused' }), 1);
    assert.equal(moved('agentrt_tool_calls_total', { kind: 'http', outcome: 'http_error' }), 1);
    assert.equal(moved('agentrt_tool_calls_total'), 2);
  });

  it('approvals waiting go to 1 while a tool call awaits its approval and back to 0 once approved; an approval and a denial count by decision', async () => {
    const waiting = (scraped: Scrape) => scraped.value('agentrt_tool_calls_awaiting_approval');
    const before = await scrape();
    assert.equal(waiting(before), 0, 'nothing waits in this database yet');
    const objective = await created(api, ws.token, `${base()}/objectives`, { agentId, initialMessage: 'CALL guarded {"q":3}\nSAY done' });
    const id = objective.metadata.id as string;
    const toolCallId = await eventuallyValue(async () => {
      const read = await api.request('GET', `${base()}/objectives/${id}`, { token: ws.token });
      return read.body.info.pendingToolCallIds?.[0] as string | undefined;
    }, 'the pending approval');
    const awaiting = await eventuallyScraped('a tool call awaiting approval', (now) => waiting(now) === 1, OPEN_OBJECTIVES_REFRESH_MS * 3);
    assert.equal(awaiting.value('agentrt_objectives_open', { status: 'awaiting_approval' }), 1);

    const approved = await api.request('PUT', `${base()}/objectives/${id}/tool_calls/${toolCallId}/approve`, { token: ws.token, body: {} });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const decided = await eventuallyScraped('the approval no longer waiting', (now) => waiting(now) === 0, OPEN_OBJECTIVES_REFRESH_MS * 3);
    assert.equal(decided.value('agentrt_objectives_open', { status: 'awaiting_approval' }), 0);
    // Counted in the turn that took the approval, which has committed once the API answered.
    assert.equal(decided.value('agentrt_tool_approvals_total', { decision: 'approved' }) - before.value('agentrt_tool_approvals_total', { decision: 'approved' }), 1);
    assert.equal(decided.value('agentrt_tool_approvals_total', { decision: 'denied' }) - before.value('agentrt_tool_approvals_total', { decision: 'denied' }), 0);

    const denied = await created(api, ws.token, `${base()}/objectives`, { agentId, initialMessage: 'CALL guarded {"q":4}\nSAY done' });
    const deniedCallId = await eventuallyValue(async () => {
      const read = await api.request('GET', `${base()}/objectives/${denied.metadata.id}`, { token: ws.token });
      return read.body.info.pendingToolCallIds?.[0] as string | undefined;
    }, 'the second pending approval');
    const deny = await api.request('PUT', `${base()}/objectives/${denied.metadata.id}/tool_calls/${deniedCallId}/deny`, { token: ws.token, body: { memo: 'not now' } });
    assert.equal(deny.status, 200, JSON.stringify(deny.body));
    const after = await eventuallyScraped('both objectives completed', (now) => now.value('agentrt_objectives_finished_total', { status: 'completed' }) - before.value('agentrt_objectives_finished_total', { status: 'completed' }) === 2);
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    assert.equal(moved('agentrt_tool_calls_total', { kind: 'http', outcome: 'result' }), 1, 'the approved call ran');
    assert.equal(moved('agentrt_tool_calls_total', { kind: 'http', outcome: 'denied' }), 1);
    assert.equal(moved('agentrt_tool_approvals_total', { decision: 'approved' }), 1, 'the approval, once');
    assert.equal(moved('agentrt_tool_approvals_total', { decision: 'denied' }), 1, 'the denial');
  });

  it('webhook deliveries count their result and their lag from the event; a receiver that is gone counts as disabled', async () => {
    const before = await scrape();
    const run = await runObjective(api, ws, { agentId, initialMessage: 'SAY hello' });
    const after = await eventuallyScraped(`the ${run.events.length} deliveries`, (now) =>
      now.value('agentrt_webhook_deliveries_total', { result: 'delivered' }) - before.value('agentrt_webhook_deliveries_total', { result: 'delivered' }) >= run.events.length);
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    assert.ok(moved('agentrt_webhook_attempts_total', { result: 'delivered' }) >= run.events.length);
    assert.ok(moved('agentrt_webhook_delivery_lag_seconds_count') >= run.events.length);
    // The lag runs from the event's creation to the receiver's 2xx: positive, and shorter than the test.
    const lagSum = moved('agentrt_webhook_delivery_lag_seconds_sum');
    assert.ok(lagSum > 0 && lagSum < 60 * run.events.length, `lag sum ${lagSum}`);

    receiver.answer('/gone', () => ({ status: 410 }));
    const goneAgent = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'gone' }, spec: { webhookEventsUrl: `${receiver.url}/gone` } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, goneAgent, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const beforeGone = await scrape();
    await runObjective(api, ws, { agentId: goneAgent, initialMessage: 'SAY into the void' });
    const gone = await eventuallyScraped('the gone endpoint disabled', (now) =>
      now.value('agentrt_webhook_deliveries_total', { result: 'disabled' }) > beforeGone.value('agentrt_webhook_deliveries_total', { result: 'disabled' }));
    assert.ok(gone.value('agentrt_webhook_attempts_total', { result: 'http_error' }) > beforeGone.value('agentrt_webhook_attempts_total', { result: 'http_error' }));
  });

  it("a schedule's fire observes its lateness from the fire time", async () => {
    const before = await scrape();
    const schedule = await created(api, ws.token, `${base()}/agents/${agentId}/schedules`, {
      metadata: { name: 'every second' },
      spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'UTC' } },
    });
    try {
      const after = await eventuallyScraped('a fire observed', (now) =>
        now.value('agentrt_schedule_fire_lateness_seconds_count') > before.value('agentrt_schedule_fire_lateness_seconds_count'));
      const fires = after.value('agentrt_schedule_fire_lateness_seconds_count') - before.value('agentrt_schedule_fire_lateness_seconds_count');
      const lateness = after.value('agentrt_schedule_fire_lateness_seconds_sum') - before.value('agentrt_schedule_fire_lateness_seconds_sum');
      // The reminder poller runs every 100 ms here: a fire comes well within a few seconds of its time.
      assert.ok(lateness >= 0 && lateness / fires < 5, `mean lateness ${lateness / fires} s over ${fires} fires`);
      assert.ok(after.value('agentrt_schedule_fire_lateness_seconds_bucket', { le: '+Inf' }) >= fires);
    } finally {
      await api.request('DELETE', `${base()}/agents/${agentId}/schedules/${schedule.metadata.id}`, { token: ws.token });
    }
  });

  it('exports actors per kind, shard ownership and the Node.js process metrics', async () => {
    const scraped = await scrape();
    const kinds = new Set(scraped.samples.filter((sample) => sample.name === 'agentrt_actor_active').map((sample) => sample.labels.kind));
    for (const kind of ['objective', 'webhook_endpoint', 'schedule']) assert.ok(kinds.has(kind), `agentrt_actor_active{kind="${kind}"} in ${[...kinds].join(', ')}`);
    assert.ok(scraped.value('agentrt_actor_owned_shards') > 0, 'this node owns shards');
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      assert.ok(scraped.samples.some((sample) => sample.name === name), `${name} exported`);
    }
    assert.equal(scraped.types.get('nodejs_gc_duration_seconds'), 'histogram');
  });

  it('no label value is an id, and a model outside the catalog is labelled other', async () => {
    const scraped = await scrape();
    const offending = scraped.samples.flatMap((sample) => Object.entries(sample.labels)
      .filter(([, value]) => ID_LIKE.test(value))
      .map(([label, value]) => `${sample.name}{${label}="${value}"}`));
    assert.deepEqual(offending, []);
    assert.ok(scraped.samples.some((sample) => sample.name.startsWith('agentrt_model_') && sample.labels.model === 'builtin/scripted'), 'the scrape holds model labels');
    assert.equal(modelLabel('openai/gpt-4o-mini'), 'openai/gpt-4o-mini');
    assert.equal(modelLabel('acme/my-own-finetune'), 'other');
  });
});
