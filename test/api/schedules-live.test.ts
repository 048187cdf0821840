// Schedules firing for real (issue 11 items 3 and 4): the app with an embedded
// actor runtime over the shared test database, the schedule actor sleeping on
// its durable reminder, preparing and starting objectives of a builtin/scripted
// agent, one per nominal fire time, pause and resume never firing
// retroactively, and `trigger`.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestApi } from '../support/api';
import { startTestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { eventuallyValue } from '../support/eventually';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const eventually = <T>(read: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000) => eventuallyValue(read, what, timeoutMs, 50);

describe('schedules firing (embedded runtime)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;

  const schedulesPath = () => `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules`;

  async function objectivesOf(scheduleId: string): Promise<Json[]> {
    const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives?scheduleId=${scheduleId}&limit=1000`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items;
  }

  async function schedule(id: string): Promise<Json> {
    const response = await api.request('GET', `${schedulesPath()}/${id}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function patch(id: string, spec: Record<string, unknown>): Promise<Json> {
    const response = await api.request('PATCH', `${schedulesPath()}/${id}`, { token: ws.token, body: { spec } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  before(async () => {
    api = await startTestApi({ runtime: { reminderPollMs: 200 }, logLevel: 'info' });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'scheduled' } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
  });

  after(async () => {
    await api?.close();
  });

  it('creates one objective per fire time, each carrying the schedule id and its nominal fire time, and counts them', async () => {
    const created_ = await created(api, ws.token, schedulesPath(), {
      metadata: { name: 'every second' },
      spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'Europe/Berlin' } },
    });
    const id = created_.metadata.id as string;
    const objectives = await eventually(async () => {
      const list = await objectivesOf(id);
      return list.length >= 3 ? list : undefined;
    }, 'three objectives of the schedule');
    const fireTimes = objectives.map((objective) => objective.spec.scheduleFireTime as string);
    assert.equal(new Set(fireTimes).size, fireTimes.length, 'one objective per nominal fire time');
    for (const objective of objectives) {
      assert.equal(objective.spec.scheduleId, id);
      assert.equal(objective.spec.agentId, agentId);
      assert.equal(objective.spec.initialMessage, 'SAY tick');
      assert.match(objective.spec.scheduleFireTime, /T\d\d:\d\d:\d\d\.000Z$/, 'a whole second');
    }
    await eventually(async () => (await objectivesOf(id)).every((objective) => objective.info.status === 'OBJECTIVE_STATUS_COMPLETED'), 'the objectives COMPLETED');
    const state = await schedule(id);
    assert.ok(state.info.fireCount >= 3, JSON.stringify(state.info));
    assert.ok(state.info.lastObjectiveId);
    assert.ok(Date.parse(state.info.nextFireAt) > Date.now() - 2000);
    assert.ok(state.info.lastFiredAt);
    const archived = await api.request('DELETE', `${schedulesPath()}/${id}`, { token: ws.token });
    assert.equal(archived.status, 200, JSON.stringify(archived.body));
    const after = (await objectivesOf(id)).length;
    await sleep(1500);
    assert.ok((await objectivesOf(id)).length <= after + 1, 'an archived schedule stops firing (one fire may have been under way)');
  });

  it('pauses and resumes without firing retroactively', async () => {
    const schedule_ = await created(api, ws.token, schedulesPath(), {
      metadata: { name: 'paused' },
      spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'UTC' }, status: 'AGENT_SCHEDULE_STATUS_PAUSED' },
    });
    const id = schedule_.metadata.id as string;
    assert.equal(schedule_.info.nextFireAt, undefined, 'a paused schedule has no next fire');
    await sleep(2500);
    assert.equal((await objectivesOf(id)).length, 0, 'nothing fires while paused');
    const resumedAt = Date.now();
    const resumed = await patch(id, { status: 'AGENT_SCHEDULE_STATUS_ACTIVE' });
    assert.ok(Date.parse(resumed.info.nextFireAt) > resumedAt - 1000);
    const objectives = await eventually(async () => {
      const list = await objectivesOf(id);
      return list.length >= 1 ? list : undefined;
    }, 'a fire after the resume');
    for (const objective of objectives) assert.ok(Date.parse(objective.spec.scheduleFireTime) >= resumedAt - 1000, 'no fire time from the paused stretch');
    assert.equal((await schedule(id)).info.skipCount ?? 0, 0);
    await patch(id, { status: 'AGENT_SCHEDULE_STATUS_PAUSED' });
  });

  it('stops firing once its agent is deleted: DELETE of the agent archives the schedule through its actor', async () => {
    const doomed = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'doomed' } })).metadata.id as string;
    await createVariation(api, ws.token, ws.workspaceId, doomed, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    const schedule_ = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${doomed}/schedules`, {
      metadata: { name: 'every second' },
      spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'UTC' } },
    });
    const id = schedule_.metadata.id as string;
    await eventually(async () => (await objectivesOf(id)).length >= 1, 'a fire before the delete');
    // force: a fire's objective may be running at this moment.
    const deleted = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/agents/${doomed}?force=true`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const archived = (await api.services.schedulesStore.get(ws.workspaceId, doomed, id))!;
    assert.equal(archived.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
    assert.equal(archived.info.nextFireAt, null, 'no next fire');
    const after = (await objectivesOf(id)).length;
    await sleep(2500);
    assert.equal((await objectivesOf(id)).length, after, 'no objective after the delete');
    const later = (await api.services.schedulesStore.get(ws.workspaceId, doomed, id))!;
    assert.deepEqual(later.info, archived.info, 'no fire was attempted (none skipped, no lastError)');
  });

  it('trigger creates one objective now, and SKIP refuses a second while the first runs', async () => {
    const schedule_ = await created(api, ws.token, schedulesPath(), {
      metadata: { name: 'manual' },
      spec: { initialMessage: 'SLEEP 1500\nSAY done', schedule: { calendars: [{ month: [{ start: 1 }], dayOfMonth: [{ start: 1 }] }], timezone: 'UTC' } },
    });
    const id = schedule_.metadata.id as string;
    const first = await api.request('POST', `${schedulesPath()}/${id}/trigger`, { token: ws.token });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.match(first.body.objectiveId, /^obj_/);
    assert.equal(first.body.schedule.info.fireCount, 1, 'the counters after the fire');
    assert.equal(first.body.schedule.info.lastObjectiveId, first.body.objectiveId);
    await eventually(async () => (await objectivesOf(id)).some((objective) => objective.metadata.id === first.body.objectiveId), 'the triggered objective');
    const second = await api.request('POST', `${schedulesPath()}/${id}/trigger`, { token: ws.token });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.objectiveId, undefined, 'skipped: the first still runs');
    assert.equal(second.body.schedule.info.skipCount, 1);
  });
});
