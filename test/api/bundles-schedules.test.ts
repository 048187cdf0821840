// Bundles with agent schedules (issue 11 item 1; api-decisions.md "Search and
// bundles" and "Schedules"): schedules are declared under their agent, checked
// and planned inside the bundle's transaction, and applied through the real
// schedule actors (embedded runtime) once it has committed; read back through
// GET .../schedules. A second suite puts a failing double behind the port to
// show a failure after the commit and the re-apply that completes it.
import assert from 'node:assert/strict';
import { RuntimeScheduleCommands } from '../../actors/kinds/runtime-schedule-commands';
import { UnavailableError } from '../../src/errors';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { ScheduleConfiguration } from '../../src/ports/schedule-commands';
import { initialScheduleInfo, type ScheduleRecord } from '../../src/schedules/schedule-record';
import { assertError, createAgent, created } from '../support/agents-world';
import { startTestApi, type TestApi } from '../support/api';
import { Code } from '../support/fixtures';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

interface PlanItem { type: string; name: string; id?: string }
interface Plan { bundleKey: string; dryRun: boolean; created: PlanItem[]; updated: PlanItem[]; deleted: PlanItem[]; unchanged: PlanItem[] }

const WEEKDAYS_BERLIN = { calendars: [{ comment: 'weekdays at 09:00', hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] }], timezone: 'Europe/Berlin' };
const EVERY_90_MINUTES = { intervals: [{ every: '90m' }], timezone: 'UTC' };

function schedule(name: string, spec: Json = {}): Json {
  return { metadata: { name }, spec: { initialMessage: `Run ${name}`, schedule: WEEKDAYS_BERLIN, ...spec } };
}

/** An agent with a variation and two schedules: morning (weekdays 09:00 Berlin), report (every 90m, ALLOW, paused, with data). */
function document(schedules: Json[] = [
  schedule('morning'),
  schedule('report', {
    schedule: EVERY_90_MINUTES, overlapPolicy: 'OVERLAP_POLICY_ALLOW', status: 'AGENT_SCHEDULE_STATUS_PAUSED', catchupWindow: '120s', data: { region: 'eu' },
  }),
]): Json {
  return {
    agents: [{
      metadata: { name: 'reporter' },
      spec: { inputDataSchema: { type: 'object', properties: { region: { type: 'string' } } } },
      variations: [{ metadata: { name: 'default' }, spec: { prompt: 'Report.', modelConfig: { modelId: 'builtin/scripted' } } }],
      schedules,
    }],
  };
}

const names = (items: PlanItem[]) => items.map((item) => `${item.type}:${item.name}`).sort();
const schedulesOf = (items: PlanItem[]) => names(items.filter((item) => item.type === 'schedule'));

describe('bundles with agent schedules (embedded runtime)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;

  const apply = (key: string, body: Json, query = '') => api.request<Plan>('PUT', `/v1/workspaces/${ws.workspaceId}/bundles/${key}${query}`, { token: ws.token, body });
  const applyOk = async (key: string, body: Json, query = ''): Promise<Plan> => {
    const response = await apply(key, body, query);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };
  const agentNamed = async (name: string): Promise<string> => {
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents?limit=1000`, { token: ws.token });
    const agent = (response.body.items as Json[]).find((item) => item.metadata.name === name);
    assert.ok(agent, `agent ${name}`);
    return agent.metadata.id;
  };
  const listSchedules = async (agentId: string, status = ''): Promise<Json[]> => {
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules?limit=1000${status ? `&status=${status}` : ''}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items;
  };
  const byName = (items: Json[]) => Object.fromEntries(items.map((item) => [item.metadata.name, item]));
  const revisions = async (agentId: string) =>
    (await api.dataSource.query('SELECT id, revision, updated_at FROM agent_schedules WHERE agent_id = $1 ORDER BY id', [agentId])) as Json[];

  before(async () => {
    api = await startTestApi({ runtime: true });
  });

  beforeEach(async () => {
    ws = await workspaceFixture(api);
  });

  after(async () => {
    await api?.close();
  });

  it('creates the schedules through their actors, with the fire configuration in canonical form and the bundle key', async () => {
    const plan = await applyOk('reports', document());
    assert.deepEqual(schedulesOf(plan.created), ['schedule:reporter/morning', 'schedule:reporter/report']);
    for (const item of plan.created) assert.ok(item.id, `${item.name} has an id`);
    const agentId = await agentNamed('reporter');
    const items = await listSchedules(agentId);
    assert.equal(items.length, 2);
    const { morning, report } = byName(items);
    assert.equal(morning.metadata.id, plan.created.find((item) => item.name === 'reporter/morning')!.id);
    assert.equal(morning.metadata.bundleKey, 'reports');
    assert.deepEqual(morning.spec, {
      initialMessage: 'Run morning', schedule: WEEKDAYS_BERLIN, overlapPolicy: 'OVERLAP_POLICY_SKIP', status: 'AGENT_SCHEDULE_STATUS_ACTIVE', catchupWindow: '1m',
    });
    assert.ok(morning.info.nextFireAt, 'an ACTIVE schedule has its next fire time (the actor armed it)');
    assert.equal(morning.info.fireCount, 0);
    assert.deepEqual(report.spec, {
      initialMessage: 'Run report', schedule: { intervals: [{ every: '1h30m' }], timezone: 'UTC' }, data: { region: 'eu' },
      overlapPolicy: 'OVERLAP_POLICY_ALLOW', status: 'AGENT_SCHEDULE_STATUS_PAUSED', catchupWindow: '2m',
    });
    assert.equal(report.info.nextFireAt, undefined, 'PAUSED');
    const upcoming = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules/${morning.metadata.id}/upcoming?count=1&from=2026-03-26T00:00:00Z`, { token: ws.token });
    assert.deepEqual(upcoming.body, { fireTimes: ['2026-03-26T08:00:00Z'] });
  });

  it('plans no change when the same document is applied again, and asks no actor', async () => {
    await applyOk('reports', document());
    const agentId = await agentNamed('reporter');
    const before = await revisions(agentId);
    const plan = await applyOk('reports', document());
    assert.deepEqual([plan.created, plan.updated, plan.deleted], [[], [], []]);
    assert.deepEqual(schedulesOf(plan.unchanged), ['schedule:reporter/morning', 'schedule:reporter/report']);
    assert.deepEqual(await revisions(agentId), before, 'no actor turn: revisions and updatedAt as they were');
  });

  it('updates only the schedule that changed', async () => {
    await applyOk('reports', document());
    const agentId = await agentNamed('reporter');
    const before = byName(await listSchedules(agentId));
    const plan = await applyOk('reports', document([schedule('morning', { initialMessage: 'Good morning', status: 'AGENT_SCHEDULE_STATUS_PAUSED' }), document().agents[0].schedules[1]]));
    assert.deepEqual(schedulesOf(plan.updated), ['schedule:reporter/morning']);
    assert.deepEqual(schedulesOf(plan.unchanged), ['schedule:reporter/report']);
    const after = byName(await listSchedules(agentId));
    assert.equal(after.morning.metadata.id, before.morning.metadata.id, 'updated in place');
    assert.equal(after.morning.spec.initialMessage, 'Good morning');
    assert.equal(after.morning.spec.status, 'AGENT_SCHEDULE_STATUS_PAUSED');
    assert.equal(after.morning.info.nextFireAt, undefined, 'the actor stopped its timer');
    assert.equal(after.report.metadata.updatedAt, before.report.metadata.updatedAt);
  });

  it('archives a schedule the document no longer declares, and a later one of that name is a new schedule', async () => {
    await applyOk('reports', document());
    const agentId = await agentNamed('reporter');
    const before = byName(await listSchedules(agentId));
    const plan = await applyOk('reports', document([schedule('morning')]));
    assert.deepEqual(plan.deleted, [{ type: 'schedule', name: 'reporter/report', id: before.report.metadata.id }]);
    const archived = await listSchedules(agentId, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
    assert.deepEqual(archived.map((item) => item.metadata.id), [before.report.metadata.id]);
    assert.equal(archived[0].info.nextFireAt, undefined);
    const again = await applyOk('reports', document());
    assert.deepEqual(schedulesOf(again.created), ['schedule:reporter/report']);
    assert.notEqual(again.created[0].id, before.report.metadata.id);
    assert.equal((await listSchedules(agentId, 'AGENT_SCHEDULE_STATUS_ACTIVE')).length, 1);
    assert.equal((await listSchedules(agentId, 'AGENT_SCHEDULE_STATUS_PAUSED')).length, 1);
  });

  it('archives the schedules of an agent the document drops', async () => {
    const plan = await applyOk('reports', document());
    const ids = plan.created.filter((item) => item.type === 'schedule').map((item) => item.id!);
    const agentId = await agentNamed('reporter');
    const dropped = await applyOk('reports', { agents: [{ metadata: { name: 'other' } }] });
    assert.deepEqual(names(dropped.deleted), ['agent:reporter', 'schedule:reporter/morning', 'schedule:reporter/report']);
    for (const id of ids) {
      const record = await api.services.schedulesStore.get(ws.workspaceId, agentId, id);
      assert.equal(record?.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
    }
  });

  it('answers the plan of a dry run and changes nothing', async () => {
    await applyOk('reports', document([schedule('morning')]));
    const agentId = await agentNamed('reporter');
    const before = await revisions(agentId);
    const plan = await applyOk('reports', document([schedule('morning', { initialMessage: 'Changed' }), schedule('evening', { schedule: EVERY_90_MINUTES })]), '?dryRun=true');
    assert.equal(plan.dryRun, true);
    assert.deepEqual(plan.created, [{ type: 'schedule', name: 'reporter/evening' }], 'no id for what a dry run would create');
    assert.deepEqual(schedulesOf(plan.updated), ['schedule:reporter/morning']);
    const removal = await applyOk('reports', document([]), '?dryRun=true');
    assert.deepEqual(schedulesOf(removal.deleted), ['schedule:reporter/morning']);
    assert.deepEqual(await revisions(agentId), before);
    const [only] = await listSchedules(agentId);
    assert.equal(only.spec.initialMessage, 'Run morning');
    assert.equal(only.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE');
  });

  it('names the document path of a bad schedule field, and commits nothing', async () => {
    const cases: Array<[Json, string]> = [
      [schedule('b', { schedule: { ...WEEKDAYS_BERLIN, timezone: 'Mars/Base' } }), 'agents[0].schedules[1].spec.schedule.timezone: "Mars/Base" is not an IANA time-zone name such as Europe/Berlin'],
      [schedule('b', { schedule: { intervals: [{ every: '1h', offset: '2h' }], timezone: 'UTC' } }), 'agents[0].schedules[1].spec.schedule.intervals[0].offset: must be less than every (1h)'],
      [schedule('b', { schedule: { calendars: [{ hour: [{ start: 9, end: 24 }] }], timezone: 'UTC' } }), 'agents[0].schedules[1].spec.schedule.calendars[0].hour[0].end: must be an integer from 0 to 23'],
      [schedule('b', { initialMessage: '   ' }), 'agents[0].schedules[1].spec.initialMessage: must not be empty'],
      [schedule('b', { catchupWindow: '0s' }), 'agents[0].schedules[1].spec.catchupWindow: must be at least 1s'],
      [schedule('b', { status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }), 'agents[0].schedules[1].spec.status: AGENT_SCHEDULE_STATUS_ARCHIVED is set by DELETE; send ACTIVE or PAUSED'],
    ];
    for (const [bad, message] of cases) {
      assertError(await apply('bad', document([schedule('a'), bad])), 400, Code.INVALID_ARGUMENT, message);
    }
    const data = await apply('bad', document([schedule('a', { data: { region: 7 } })]));
    assertError(data, 400, Code.INVALID_ARGUMENT, /^agents\[0\]\.schedules\[0\]\.spec\.data/);
    assert.match(JSON.stringify(data.body), /agents\[0\]\.schedules\[0\]\.spec\.data\.region/);
    const shape = await apply('bad', document([{ metadata: { name: 'x' }, spec: { schedule: WEEKDAYS_BERLIN } }]));
    assertError(shape, 400, Code.INVALID_ARGUMENT, /^agents\[0\]\.schedules\[0\]\.spec/);
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents?limit=1000`, { token: ws.token });
    assert.deepEqual(response.body.items, [], 'the agent was rolled back');
    assert.equal((await api.dataSource.query('SELECT count(*)::int AS n FROM agent_schedules WHERE workspace_id = $1', [ws.workspaceId]))[0].n, 0);
  });

  it('checks variationId against the variations of the schedule\'s agent', async () => {
    const plan = await applyOk('reports', document([]));
    const variationId = plan.created.find((item) => item.type === 'variation')!.id!;
    const withVariation = await applyOk('reports', document([schedule('pinned', { variationId })]));
    assert.deepEqual(schedulesOf(withVariation.created), ['schedule:reporter/pinned']);
    const other = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'outsider' } });
    const foreign = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${other.metadata.id}/variations`, { metadata: { name: 'v' }, spec: { prompt: 'x' } });
    assertError(
      await apply('reports', document([schedule('pinned', { variationId: foreign.metadata.id })])), 400, Code.INVALID_ARGUMENT,
      `agents[0].schedules[0].spec.variationId: ${foreign.metadata.id} is not a variation of agent ${await agentNamed('reporter')}`,
    );
  });

  it('refuses a same-named schedule not in the bundle, adopts it when told, and leaves other schedules of the agent alone', async () => {
    await applyOk('reports', document([]));
    const agentId = await agentNamed('reporter');
    const path = `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules`;
    const manual = await created(api, ws.token, path, schedule('morning', { initialMessage: 'Hand-made' }));
    const untouched = await created(api, ws.token, path, schedule('hand-kept'));
    assertError(
      await apply('reports', document([schedule('morning')])), 400, Code.FAILED_PRECONDITION,
      `agent schedule "morning" (${manual.metadata.id}) is not owned by any bundle; apply with adopt=true to take it over`,
    );
    const adopted = await applyOk('reports', document([schedule('morning')]), '?adopt=true');
    assert.deepEqual(adopted.updated, [{ type: 'schedule', name: 'reporter/morning', id: manual.metadata.id }]);
    const after = byName(await listSchedules(agentId));
    assert.equal(after.morning.metadata.bundleKey, 'reports');
    assert.equal(after.morning.spec.initialMessage, 'Run morning');
    assert.equal(after['hand-kept'].metadata.updatedAt, untouched.metadata.updatedAt);
    assert.equal(after['hand-kept'].metadata.bundleKey, undefined);
    // Another bundle's schedule of that name on an agent it adopts is refused alike.
    assertError(
      await apply('takeover', document([schedule('morning')]), '?adopt=false'), 400, Code.FAILED_PRECONDITION,
      `agent "reporter" (${agentId}) is owned by bundle "reports"; apply with adopt=true to take it over`,
    );
    const takeover = await applyOk('takeover', document([schedule('morning')]), '?adopt=true');
    assert.deepEqual(schedulesOf(takeover.updated), ['schedule:reporter/morning']);
    assert.equal(byName(await listSchedules(agentId)).morning.metadata.bundleKey, 'takeover');
  });

  it('exports the non-archived schedules under their agent, and the document applies back with no change', async () => {
    await applyOk('reports', document());
    await applyOk('reports', document([document().agents[0].schedules[1]])); // morning archived
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/bundles/reports`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body.agents[0].schedules, [{
      metadata: { name: 'report' },
      spec: {
        initialMessage: 'Run report', schedule: { intervals: [{ every: '1h30m' }], timezone: 'UTC' }, data: { region: 'eu' },
        overlapPolicy: 'OVERLAP_POLICY_ALLOW', status: 'AGENT_SCHEDULE_STATUS_PAUSED', catchupWindow: '2m',
      },
    }]);
    const agentId = await agentNamed('reporter');
    const before = await revisions(agentId);
    const plan = await applyOk('reports', response.body);
    assert.deepEqual([plan.created, plan.updated, plan.deleted], [[], [], []]);
    assert.deepEqual(await revisions(agentId), before);
  });

  it('archives the schedules when the bundle is deleted', async () => {
    const plan = await applyOk('reports', document());
    const agentId = await agentNamed('reporter');
    const deleted = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/bundles/reports`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    for (const item of plan.created.filter((entry) => entry.type === 'schedule')) {
      const record = await api.services.schedulesStore.get(ws.workspaceId, agentId, item.id!);
      assert.equal(record?.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED', item.name);
      assert.equal(record?.info.nextFireAt, null);
    }
    assertError(await api.request('GET', `/v1/workspaces/${ws.workspaceId}/bundles/reports`, { token: ws.token }), 404, Code.NOT_FOUND, 'bundle "reports" not found');
  });

  it('archives the schedules created through the API for an agent it deletes, on delete and on an apply that drops the agent', async () => {
    const createThroughApi = async (agentId: string, name: string): Promise<string> => {
      const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules`, { token: ws.token, body: schedule(name) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.metadata.id;
    };
    const statusOf = async (agentId: string, id: string) => (await api.services.schedulesStore.get(ws.workspaceId, agentId, id))?.spec.status;

    await applyOk('reports', document());
    const reporter = await agentNamed('reporter');
    const byApi = await createThroughApi(reporter, 'by-hand');
    const deleted = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/bundles/reports`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal(await statusOf(reporter, byApi), 'AGENT_SCHEDULE_STATUS_ARCHIVED', 'deleting the bundle deleted its agent: the API-created schedule is archived too');

    await applyOk('reports', document());
    const again = await agentNamed('reporter');
    const alsoByApi = await createThroughApi(again, 'also-by-hand');
    const dropped = await applyOk('reports', { agents: [{ metadata: { name: 'other' } }] });
    assert.ok(names(dropped.deleted).includes('agent:reporter'), JSON.stringify(dropped.deleted));
    assert.ok(!names(dropped.deleted).includes('schedule:reporter/also-by-hand'), 'the plan names only the bundle\'s resources');
    assert.equal(await statusOf(again, alsoByApi), 'AGENT_SCHEDULE_STATUS_ARCHIVED', 'the apply deleted its agent: the API-created schedule is archived too');
  });

  it('refuses a new schedule on an ARCHIVED agent', async () => {
    const archivedAgent = document([schedule('morning')]);
    archivedAgent.agents[0].spec.status = 'AGENT_STATUS_ARCHIVED';
    const response = await apply('reports', archivedAgent);
    assertError(response, 400, Code.FAILED_PRECONDITION, /^agents\[0\]\.schedules\[0\]: agent "reporter" \(agent_\w+\) is ARCHIVED/);
  });
});

describe('bundles with agent schedules: a schedule failing after the commit', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  /** 1-based: the configure that fails (null: none). */
  let failAt: number | null = null;
  let calls = 0;

  /** The actor as schedules.test.ts fakes it (projecting through the real store), unreachable for the configure numbered `failAt`. */
  function flakyActor() {
    const commands = new RuntimeScheduleCommands();
    const sql: SqlRunner = { query: (text, parameters) => api.dataSource.query(text, parameters) };
    commands.bind({
      ask: async <Reply>(_kind: string, id: string, message: unknown) => {
        calls += 1;
        if (calls === failAt) throw new UnavailableError('the schedule actor did not answer in time');
        const configuration = (message as { schedule: ScheduleConfiguration }).schedule;
        const stored = await api.services.schedulesStore.get(configuration.workspaceId, configuration.agentId, configuration.id);
        const record: ScheduleRecord = { ...configuration, info: stored?.info ?? initialScheduleInfo(), revision: (stored?.revision ?? 0) + 1 };
        await api.services.schedulesStore.project(sql, [{ actorId: id, change: { type: 'schedule', schedule: record } }]);
        return record as Reply;
      },
    });
    return commands;
  }

  before(async () => {
    api = await startTestApi({ scheduleCommands: flakyActor() });
    ws = await workspaceFixture(api);
  });

  after(async () => {
    await api?.close();
  });

  it('keeps the committed resources, answers the error, and completes on a re-apply', async () => {
    const body = document([schedule('first'), schedule('second'), schedule('third')]);
    // The second configure fails: the first is done, the third never asked.
    failAt = 2;
    const failed = await api.request('PUT', `/v1/workspaces/${ws.workspaceId}/bundles/flaky`, { token: ws.token, body });
    assertError(failed, 503, 14, 'the schedule actor did not answer in time');
    assert.equal(calls, 2);
    failAt = null;
    const agents = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents?limit=1000`, { token: ws.token });
    assert.deepEqual(agents.body.items.map((item: Json) => item.metadata.name), ['reporter'], 'the agent committed');
    const agentId = agents.body.items[0].metadata.id;
    const path = `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules?limit=1000`;
    assert.deepEqual((await api.request('GET', path, { token: ws.token })).body.items.map((item: Json) => item.metadata.name), ['first']);
    const plan = await api.request<Plan>('PUT', `/v1/workspaces/${ws.workspaceId}/bundles/flaky`, { token: ws.token, body });
    assert.equal(plan.status, 200, JSON.stringify(plan.body));
    assert.deepEqual(schedulesOf(plan.body.created), ['schedule:reporter/second', 'schedule:reporter/third']);
    assert.deepEqual(schedulesOf(plan.body.unchanged), ['schedule:reporter/first']);
    assert.deepEqual((await api.request('GET', path, { token: ws.token })).body.items.map((item: Json) => item.metadata.name), ['first', 'second', 'third']);
    const before = calls;
    const again = await api.request<Plan>('PUT', `/v1/workspaces/${ws.workspaceId}/bundles/flaky`, { token: ws.token, body });
    assert.equal(calls, before, 'a complete bundle asks no actor');
    assert.deepEqual(schedulesOf(again.body.unchanged), ['schedule:reporter/first', 'schedule:reporter/second', 'schedule:reporter/third']);
  });
});
