// The runtime's statements keep their cost with their input, not with the
// size of the tables they touch: every statement an objective's run sends
// (its turns and projections, its tool call and approval, its webhook
// deliveries, a schedule's fires, the event log's appends and claims, a
// /metrics scrape's count of the open objectives) is
// explained on tables of tens of thousands of rows, as the generic plan a
// named statement settles on, and none may read a large table whole. A
// json_to_recordset or unnest input is estimated at 10 to 100 rows whatever
// it holds, so a join with it picks a sequential scan of the other side up to
// a large table size unless the statement gives the planner an index key.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createTool, createVariation, created, MODEL_ID } from '../support/agents-world';
import { sharedTestDatabase } from '../support/global-setup';
import { RUNTIME_SESSION_SETTINGS } from '../../persistence/runtime/runtime-database';
import { captureStatements, explainOnLargeTables, type CapturedStatement } from '../support/statement-plans';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { eventuallyValue } from '../support/eventually';
import { encodeCursor } from '../../src/resource/pagination';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * The tables that grow with use, which the hot path must reach by key.
 * (embedded_stream_deliveries is a queue: it holds a consumer's unacked
 * messages only, and its copies would all be pending, which it never is.)
 */
const LARGE_TABLES = [
  'objectives', 'objective_events', 'actor_journal', 'actor_outbox', 'actor_commands', 'actor_reminders',
  'embedded_stream_messages', 'webhook_deliveries', 'agent_schedules', 'usage_rollups', 'usage_rollup_keys',
];

const eventually = <T>(read: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000) => eventuallyValue(read, what, timeoutMs);

describe('statement plans on large tables', function () {
  this.timeout(120_000);
  let api: TestApi | undefined;
  let tools: TestToolServer;
  let receiver: WebhookReceiver;
  let ws: WorkspaceFixture;
  let statements: CapturedStatement[] = [];
  let stopSchedule: (() => Promise<void>) | undefined;

  before(async () => {
    api = await startTestApi({
      runtime: { reminderPollMs: 100 },
      env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' },
      logLevel: 'info',
    });
    tools = await startTestToolServer();
    receiver = await startWebhookReceiver();
    ws = await workspaceFixture(api);
    const base = `/v1/workspaces/${ws.workspaceId}`;
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'planned' }, spec: { webhookEventsUrl: `${receiver.url}/planned` } })).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const echo = await createTool(api, ws.token, ws.workspaceId, { metadata: { name: 'echo' }, spec: { description: 'Echoes', http: { url: `${tools.url}/echo`, method: 'POST' } } });
    await created(api, ws.token, `${base}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: echo.metadata.id, requiresApproval: true });

    const capture = captureStatements();
    try {
      // An objective with a tool call held for approval, approved, and its webhooks delivered.
      const objective = await created(api, ws.token, `${base}/objectives`, { agentId, initialMessage: 'CALL echo {"q":1}\nSAY done' });
      const id = objective.metadata.id as string;
      const toolCallId = await eventually(async () => {
        const read = await api!.request('GET', `${base}/objectives/${id}`, { token: ws.token });
        return read.body.info.pendingToolCallIds?.[0] as string | undefined;
      }, 'the pending approval');
      // A scrape while it waits: /metrics counts the open objectives and the approvals waiting from the read model.
      const metrics = await api.request('GET', '/metrics');
      assert.match(metrics.body, /^agentrt_tool_calls_awaiting_approval \d+$/m);
      const approved = await api.request('PUT', `${base}/objectives/${id}/tool_calls/${toolCallId}/approve`, { token: ws.token, body: {} });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      await eventually(async () => (await api!.request('GET', `${base}/objectives/${id}`, { token: ws.token })).body.info.status === 'OBJECTIVE_STATUS_COMPLETED', 'the objective to complete');
      await eventually(async () => {
        const deliveries = await api!.request('GET', `${base}/agents/${agentId}/webhook_deliveries?limit=100&objectiveId=${id}`, { token: ws.token });
        const events = await api!.request('GET', `${base}/objectives/${id}/events?limit=100`, { token: ws.token });
        return deliveries.body.items.length === events.body.items.length && deliveries.body.items.every((row: any) => row.data.status === 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
      }, 'every event delivered');
      // A schedule's fires: its reminder, its fire turn and the objective it starts.
      const schedule = await created(api, ws.token, `${base}/agents/${agentId}/schedules`, {
        metadata: { name: 'every second' },
        spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'UTC' } },
      });
      await eventually(async () => {
        const list = await api!.request('GET', `${base}/objectives?limit=100&scheduleId=${schedule.metadata.id}`, { token: ws.token });
        return list.body.items.filter((item: any) => item.info.status === 'OBJECTIVE_STATUS_COMPLETED').length >= 2;
      }, 'two scheduled objectives completed');
      // The usage report, first and next page: its keys, then each key's rows of the range.
      const usage = await api.request('GET', `${base}/usage?groupBy=agent&limit=1`, { token: ws.token });
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      const next = await api.request('GET', `${base}/usage?groupBy=agent&limit=1&cursor=${encodeCursor('agent:agent_0', 'asc')}`, { token: ws.token });
      assert.equal(next.status, 200, JSON.stringify(next.body));
      // Deleted once the plans are checked: its reminder is one of the rows copied.
      stopSchedule = async () => {
        await api!.request('DELETE', `${base}/agents/${agentId}/schedules/${schedule.metadata.id}`, { token: ws.token });
      };
    } finally {
      statements = capture.stop();
    }
  });

  after(async () => {
    await stopSchedule?.();
    await api?.close();
    await tools?.close();
    await receiver?.close();
  });

  const runtimeSessions = { prefix: 'agentrt-runtime', settings: RUNTIME_SESSION_SETTINGS };
  let plans: Awaited<ReturnType<typeof explainOnLargeTables>>;
  let plansOnSmallTables: Awaited<ReturnType<typeof explainOnLargeTables>>;
  before(async () => {
    const { url } = await sharedTestDatabase();
    plansOnSmallTables = await explainOnLargeTables(url, statements, LARGE_TABLES, { rows: 0, settingsOf: runtimeSessions });
    plans = await explainOnLargeTables(url, statements, LARGE_TABLES, { settingsOf: runtimeSessions });
  });

  it('no statement of the runtime plans a sequential scan of a growing table while it is small, nor a walk of a whole index in its place', () => {
    // A prepared statement keeps its plan: one made on a small table would scan it whole once it grew.
    const runtimeScans = plansOnSmallTables.fullScans.filter((scan) => scan.applicationName.startsWith('agentrt-runtime'));
    assert.ok(plansOnSmallTables.scans.some((scan) => scan.applicationName.startsWith('agentrt-runtime')), 'the runtime\'s statements were explained');
    assert.deepEqual(runtimeScans, []);
  });

  it('no statement of the runtime is compiled with JIT (a statement priced out of a sequential scan costs more than jit_above_cost)', () => {
    // Measured: the membership's DELETE of stale nodes took 50-360 ms per run, all of it JIT compilation.
    const compiled = [...plansOnSmallTables.jitCompiled, ...plans.jitCompiled].filter((plan) => plan.applicationName.startsWith('agentrt-runtime'));
    assert.deepEqual(compiled, []);
  });

  it('no statement of the run reads a large table whole', () => {
    for (const table of LARGE_TABLES) assert.ok(plans.sizes[table] >= 20_000, `${table} filled: ${plans.sizes[table]} rows`);
    assert.ok(plans.explained >= 30, `explained ${plans.explained} statements`);
    assert.deepEqual(plans.fullScans, []);
    assert.deepEqual(plans.unprepared, [], 'every statement of the run was explained');
  });

  it('marking outbox rows published finds them by primary key, not through the index of unpublished rows', () => {
    // That index keeps the entries of published rows until a vacuum, and a bitmap scan of it reads them all.
    const marks = plans.scans.filter((scan) => scan.table === 'actor_outbox' && /UPDATE actor_outbox SET published_at/.test(scan.statement));
    assert.ok(marks.length >= 1, 'the run marked outbox rows');
    assert.deepEqual(marks.filter((scan) => scan.index !== 'pk_actor_outbox'), []);
  });
});
