// The agent schedules API (interface-spec 2.15, api-decisions.md "Schedules")
// over the real app and the shared test database, without an actor runtime:
// the schedule actor is a recording double behind the real runtime port
// (RuntimeScheduleCommands), projecting what it is told through the real store
// as the actor would, so every read goes through the read model.
import assert from 'node:assert/strict';
import { RuntimeScheduleCommands } from '../../actors/kinds/runtime-schedule-commands';
import { startKeyOf } from '../../src/objectives/objective.service';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { ScheduleConfiguration, ScheduleTriggerReply } from '../../src/ports/schedule-commands';
import { UnavailableError } from '../../src/errors';
import { nextFireTime } from '../../src/schedules/fire-times';
import { toAgentSchedule } from '../../src/schedules/schedule-mappers';
import { SCHEDULE_KIND, initialScheduleInfo, type ScheduleRecord } from '../../src/schedules/schedule-record';
import { assertError, createAgent, createVariation } from '../support/agents-world';
import { startTestApi, type ApiResponse, type TestApi } from '../support/api';
import { Code, missingId } from '../support/fixtures';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const WEEKDAYS_BERLIN = { calendars: [{ comment: 'weekdays at 09:00', hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] }], timezone: 'Europe/Berlin' };
const EVERY_15_MINUTES = { intervals: [{ every: '15m' }], timezone: 'Europe/Berlin' };

interface Call { kind: string; id: string; message: Json; options: Json }

/**
 * The schedule actor as the API sees it: configure projects the row (revision + 1, nextFireAt while ACTIVE); trigger answers an objective.
 * A schedule id in `failing` is answered UNAVAILABLE (an actor that timed out), without a call recorded.
 */
function recordingActor(api: () => TestApi) {
  const calls: Call[] = [];
  const failing = new Set<string>();
  const commands = new RuntimeScheduleCommands();
  const sql: SqlRunner = { query: (text, parameters) => api().dataSource.query(text, parameters) };
  commands.bind({
    ask: async <Reply>(kind: string, id: string, message: unknown, options?: unknown) => {
      if (failing.has(id)) throw new UnavailableError(`schedule actor ${id} did not answer in time`);
      calls.push({ kind, id, message, options });
      const store = api().services.schedulesStore;
      if ((message as { type: string }).type === 'configure') {
        const schedule = (message as { schedule: ScheduleConfiguration }).schedule;
        const stored = await store.get(schedule.workspaceId, schedule.agentId, schedule.id);
        const active = schedule.spec.status === 'AGENT_SCHEDULE_STATUS_ACTIVE';
        const next = active ? nextFireTime(schedule.spec.schedule, new Date()) : null;
        const record: ScheduleRecord = {
          ...schedule,
          info: { ...(stored?.info ?? initialScheduleInfo()), nextFireAt: next ? next.toISOString() : null },
          revision: (stored?.revision ?? 0) + 1,
        };
        await store.project(sql, [{ actorId: id, change: { type: 'schedule', schedule: record } }]);
        return record as Reply;
      }
      const row = (await api().dataSource.query('SELECT workspace_id, agent_id FROM agent_schedules WHERE id = $1', [id]))[0];
      const stored = (await store.get(row.workspace_id, row.agent_id, id))!;
      const objectiveId = missingId('obj');
      const fired: ScheduleRecord = {
        ...stored, info: { ...stored.info, lastFiredAt: '2026-01-05T08:00:00.000Z', lastObjectiveId: objectiveId, fireCount: stored.info.fireCount + 1 },
        revision: stored.revision + 1,
      };
      await store.project(sql, [{ actorId: id, change: { type: 'schedule', schedule: fired } }]);
      return { schedule: fired, objectiveId } satisfies ScheduleTriggerReply as Reply;
    },
  });
  return { calls, failing, commands };
}

describe('agent schedules API', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let actor: ReturnType<typeof recordingActor>;
  let agentId: string;
  let otherAgentId: string;
  let otherVariationId: string;
  let variationId: string;
  let foreign: { workspaceId: string; token: string; agentId: string; scheduleId: string };

  const base = (agent = agentId, workspaceId = ws.workspaceId) => `/v1/workspaces/${workspaceId}/agents/${agent}/schedules`;
  const body = (spec: Json = {}, metadata: Json = {}) => ({
    metadata: { name: 'morning-report', ...metadata },
    spec: { initialMessage: 'Write the morning report', schedule: WEEKDAYS_BERLIN, ...spec },
  });
  const create = (payload: Json, options: { token?: string; agent?: string; headers?: Record<string, string> } = {}) =>
    api.request('POST', base(options.agent), { token: options.token ?? ws.token, body: payload, headers: options.headers });
  const createOk = async (payload: Json, agent = agentId): Promise<Json> => {
    const response = await create(payload, { agent });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  };
  const get = (id: string, token = ws.token) => api.request('GET', `${base()}/${id}`, { token });
  const patch = (id: string, payload: Json, headers: Record<string, string> = {}) =>
    api.request('PATCH', `${base()}/${id}`, { token: ws.token, body: payload, headers });
  const remove = (id: string, token = ws.token) => api.request('DELETE', `${base()}/${id}`, { token });
  const trigger = (id: string, headers: Record<string, string> = {}, token = ws.token) =>
    api.request('POST', `${base()}/${id}/trigger`, { token, body: {}, headers });
  const upcoming = (id: string, query = '', token = ws.token) => api.request('GET', `${base()}/${id}/upcoming${query}`, { token });
  const invalidField = (response: ApiResponse, field: string) => {
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.code, Code.INVALID_ARGUMENT);
    assert.equal(response.body.details[0].fieldViolations[0].field, field, JSON.stringify(response.body));
  };

  before(async () => {
    actor = recordingActor(() => api);
    api = await startTestApi({ scheduleCommands: actor.commands });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId, {
      spec: { inputDataSchema: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] } },
    })).metadata.id;
    variationId = (await createVariation(api, ws.token, ws.workspaceId, agentId)).metadata.id;
    otherAgentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    otherVariationId = (await createVariation(api, ws.token, ws.workspaceId, otherAgentId)).metadata.id;
    const other = await ws.otherWorkspace();
    const foreignAgent = (await createAgent(api, other.token, other.workspaceId)).metadata.id;
    const foreignSchedule = await api.request('POST', base(foreignAgent, other.workspaceId), { token: other.token, body: body() });
    assert.equal(foreignSchedule.status, 200, JSON.stringify(foreignSchedule.body));
    foreign = { ...other, agentId: foreignAgent, scheduleId: foreignSchedule.body.metadata.id };
  });

  after(async () => api?.close());

  describe('POST /v1/workspaces/{ws}/agents/{agentId}/schedules', () => {
    it('creates an ACTIVE SKIP schedule with a 1m catch-up window by default, through the schedule actor', async () => {
      const calls = actor.calls.length;
      const created = await createOk(body({ data: { region: 'emea' } }, { externalId: 'report-1', labels: { team: 'ops' } }));
      const id = created.metadata.id;
      assert.match(id, /^sched_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.deepEqual(created.spec, {
        initialMessage: 'Write the morning report', schedule: WEEKDAYS_BERLIN, data: { region: 'emea' },
        overlapPolicy: 'OVERLAP_POLICY_SKIP', status: 'AGENT_SCHEDULE_STATUS_ACTIVE', catchupWindow: '1m',
      });
      assert.equal(created.info.fireCount, 0);
      assert.equal(created.info.skipCount, 0);
      assert.ok(Date.parse(created.info.nextFireAt) > Date.now(), 'the actor set the next fire');
      assert.equal(created.info.lastFiredAt, undefined, 'unset info fields are absent');
      assert.deepEqual({ ...created.metadata, createdAt: undefined, updatedAt: undefined }, {
        id, accountId: ws.account.accountId, workspaceId: ws.workspaceId, name: 'morning-report', profileId: created.metadata.profileId,
        externalId: 'report-1', labels: { team: 'ops' }, createdAt: undefined, updatedAt: undefined,
      });
      assert.equal(actor.calls.length, calls + 1);
      const call = actor.calls.at(-1)!;
      assert.equal(call.kind, SCHEDULE_KIND);
      assert.equal(call.id, id, 'the actor id is the schedule id');
      assert.equal(call.message.type, 'configure');
      assert.deepEqual(Object.keys(call.message.schedule).sort(), [
        'accountId', 'agentId', 'bundleKey', 'createdAt', 'externalId', 'id', 'labels', 'name', 'profileId', 'spec', 'updatedAt', 'workspaceId',
      ]);
      assert.deepEqual((await get(id)).body, created, 'GET reads what the actor projected');
    });

    it('turns UNSPECIFIED enums into their defaults and echoes durations in canonical form', async () => {
      const created = await createOk(body({
        schedule: { intervals: [{ every: '90m', offset: '60s' }, { every: '24h' }, { every: '3600s', offset: '0s' }], timezone: 'America/New_York' },
        overlapPolicy: 'OVERLAP_POLICY_UNSPECIFIED', status: 'AGENT_SCHEDULE_STATUS_UNSPECIFIED', catchupWindow: '120s', data: { region: 'us' },
      }));
      assert.deepEqual(created.spec.schedule.intervals, [{ every: '1h30m', offset: '1m' }, { every: '1d' }, { every: '1h', offset: '0s' }]);
      assert.equal(created.spec.catchupWindow, '2m');
      assert.equal(created.spec.overlapPolicy, 'OVERLAP_POLICY_SKIP');
      assert.equal(created.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE');
    });

    it('keeps ALLOW, PAUSED and a variation of the agent as given', async () => {
      const created = await createOk(body({ overlapPolicy: 'OVERLAP_POLICY_ALLOW', status: 'AGENT_SCHEDULE_STATUS_PAUSED', variationId, data: { region: 'apac' } }));
      assert.equal(created.spec.overlapPolicy, 'OVERLAP_POLICY_ALLOW');
      assert.equal(created.spec.status, 'AGENT_SCHEDULE_STATUS_PAUSED');
      assert.equal(created.spec.variationId, variationId);
      assert.equal(created.info.nextFireAt, undefined, 'a paused schedule has no next fire');
    });

    it('returns INVALID_ARGUMENT naming the field for each bad value', async () => {
      const rules = (patch: Json) => ({ ...WEEKDAYS_BERLIN, ...patch });
      const calendar = (fields: Json) => rules({ calendars: [{ hour: [{ start: 9 }], ...fields }] });
      const cases: Array<[Json, string]> = [
        [{ metadata: { name: 'x' }, spec: { schedule: WEEKDAYS_BERLIN } }, 'spec.initialMessage'],
        [{ spec: body().spec }, 'metadata'],
        [body({ initialMessage: '' }), 'spec.initialMessage'],
        [body({ initialMessage: '   ' }), 'spec.initialMessage'],
        [{ metadata: { name: 'x' }, spec: { initialMessage: 'hi' } }, 'spec.schedule'],
        [body({ schedule: { timezone: 'Europe/Berlin' } }), 'spec.schedule'],
        [body({ schedule: { calendars: [], intervals: [], timezone: 'UTC' } }), 'spec.schedule'],
        [body({ schedule: rules({ timezone: 'Mars/Olympus_Mons' }) }), 'spec.schedule.timezone'],
        [body({ schedule: rules({ timezone: '+01:00' }) }), 'spec.schedule.timezone'],
        [body({ schedule: rules({ timezone: '' }) }), 'spec.schedule.timezone'],
        [body({ schedule: { calendars: WEEKDAYS_BERLIN.calendars } }), 'spec.schedule.timezone'],
        [body({ schedule: calendar({ hour: [{ start: 24 }] }) }), 'spec.schedule.calendars[0].hour[0].start'],
        [body({ schedule: calendar({ minute: [{ start: 0 }, { start: 60 }] }) }), 'spec.schedule.calendars[0].minute[1].start'],
        [body({ schedule: calendar({ second: [{ start: -1 }] }) }), 'spec.schedule.calendars[0].second[0].start'],
        [body({ schedule: calendar({ dayOfMonth: [{ start: 0 }] }) }), 'spec.schedule.calendars[0].dayOfMonth[0].start'],
        [body({ schedule: calendar({ month: [{ start: 1, end: 13 }] }) }), 'spec.schedule.calendars[0].month[0].end'],
        [body({ schedule: calendar({ dayOfWeek: [{ start: 7 }] }) }), 'spec.schedule.calendars[0].dayOfWeek[0].start'],
        [body({ schedule: calendar({ hour: [{ start: 10, end: 9 }] }) }), 'spec.schedule.calendars[0].hour[0].end'],
        [body({ schedule: calendar({ hour: [{ start: 0, end: 23, step: 0 }] }) }), 'spec.schedule.calendars[0].hour[0].step'],
        [body({ schedule: calendar({ hour: [{ start: 1.5 }] }) }), 'spec.schedule.calendars[0].hour[0].start'],
        [body({ schedule: calendar({ hour: [{ begin: 1 }] }) }), 'spec.schedule.calendars[0].hour[0].start'],
        [body({ schedule: calendar({ hour: [{ start: 1, begin: 2 }] }) }), 'spec.schedule.calendars[0].hour[0].begin'],
        [body({ schedule: calendar({ weekday: [{ start: 1 }] }) }), 'spec.schedule.calendars[0].weekday'],
        [body({ schedule: calendar({ comment: 'x'.repeat(201) }) }), 'spec.schedule.calendars[0].comment'],
        [body({ schedule: rules({ intervals: [{ every: '1x' }] }) }), 'spec.schedule.intervals[0].every'],
        [body({ schedule: rules({ intervals: [{ every: '30m1h' }] }) }), 'spec.schedule.intervals[0].every'],
        [body({ schedule: rules({ intervals: [{ every: '' }] }) }), 'spec.schedule.intervals[0].every'],
        [body({ schedule: rules({ intervals: [{ every: '0s' }] }) }), 'spec.schedule.intervals[0].every'],
        [body({ schedule: rules({ intervals: [{ every: '1h', offset: '1h' }] }) }), 'spec.schedule.intervals[0].offset'],
        [body({ schedule: rules({ intervals: [{ every: '1h' }, { every: '15m', offset: '-1m' }] }) }), 'spec.schedule.intervals[1].offset'],
        [body({ schedule: rules({ intervals: [{ offset: '1m' }] }) }), 'spec.schedule.intervals[0].every'],
        [body({ overlapPolicy: 'OVERLAP_POLICY_BUFFER_ONE' }), 'spec.overlapPolicy'],
        [body({ status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }), 'spec.status'],
        [body({ status: 'ACTIVE' }), 'spec.status'],
        [body({ catchupWindow: 'soon' }), 'spec.catchupWindow'],
        [body({ catchupWindow: '0s' }), 'spec.catchupWindow'],
        [body({ variationId: otherVariationId }), 'spec.variationId'],
        [body({ variationId: missingId('agentvar') }), 'spec.variationId'],
        [body({ variationId: 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 'spec.variationId'],
        [body({ data: { region: 7 } }), 'spec.data.region'],
        [body({ data: {} }), 'spec.data.region'],
        [body({ unknown: true }), 'spec.unknown'],
        [body({}, { name: '' }), 'metadata.name'],
        [body({}, { labels: { 'bad key!': 'x' } }), 'metadata.labels.bad key!'],
      ];
      for (const [payload, field] of cases) invalidField(await create(payload), field);
    });

    it('names the field and its problem in the message', async () => {
      assertError(await create(body({ schedule: { ...WEEKDAYS_BERLIN, timezone: 'Mars/Olympus_Mons' } })), 400, Code.INVALID_ARGUMENT,
        'spec.schedule.timezone: "Mars/Olympus_Mons" is not an IANA time-zone name such as Europe/Berlin');
      assertError(await create(body({ schedule: { intervals: [{ every: '1h', offset: '90m' }], timezone: 'UTC' } })), 400, Code.INVALID_ARGUMENT,
        'spec.schedule.intervals[0].offset: must be less than every (1h)');
      assertError(await create(body({ status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' })), 400, Code.INVALID_ARGUMENT,
        'spec.status: AGENT_SCHEDULE_STATUS_ARCHIVED is set by DELETE; send ACTIVE or PAUSED');
      assertError(await create(body({ variationId: otherVariationId })), 400, Code.INVALID_ARGUMENT,
        `spec.variationId: ${otherVariationId} is not a variation of agent ${agentId}`);
      assertError(await create(body({ data: { region: 7 } })), 400, Code.INVALID_ARGUMENT,
        "spec.data does not satisfy the agent's inputDataSchema: spec.data.region must be of type string");
    });

    it('takes any data, or none, when the agent has no inputDataSchema', async () => {
      const withData = await createOk(body({ data: [1, 'two'] }), otherAgentId);
      assert.deepEqual(withData.spec.data, [1, 'two']);
      const without = await createOk(body(), otherAgentId);
      assert.equal('data' in without.spec, false);
    });

    it('returns FAILED_PRECONDITION for an ARCHIVED agent', async () => {
      const archived = (await createAgent(api, ws.token, ws.workspaceId, { spec: { status: 'AGENT_STATUS_ARCHIVED' } })).metadata.id;
      assertError(await create(body(), { agent: archived }), 400, Code.FAILED_PRECONDITION, `agent ${archived} is ARCHIVED; schedules run DRAFT and PUBLISHED agents`);
    });

    it("returns NOT_FOUND for another workspace's agent and INVALID_ARGUMENT for a malformed one", async () => {
      assertError(await create(body(), { agent: foreign.agentId }), 404, Code.NOT_FOUND, `agent ${foreign.agentId} not found`);
      assertError(await create(body(), { agent: missingId('agent') }), 404, Code.NOT_FOUND, `agent ${missingId('agent')} not found`);
      assertError(await create(body(), { agent: 'sched_nope' }), 400, Code.INVALID_ARGUMENT, /^agentId: has an invalid format/);
    });

    it("checks the agent before the body: another workspace's agent is NOT_FOUND whatever the body holds", async () => {
      const invalid = { metadata: {}, spec: { schedule: { intervals: 'often' } } };
      for (const agent of [foreign.agentId, missingId('agent')]) {
        const answers = [
          await api.request('POST', base(agent), { token: ws.token, body: invalid }),
          await api.request('PATCH', `${base(agent)}/${foreign.scheduleId}`, { token: ws.token, body: invalid }),
          await api.request('POST', `${base(agent)}/${foreign.scheduleId}/trigger`, { token: ws.token, body: ['not an object'] }),
        ];
        for (const answer of answers) assertError(answer, 404, Code.NOT_FOUND, `agent ${agent} not found`);
      }
      // An agent of the workspace: the body is checked then.
      assertError(await api.request('POST', base(), { token: ws.token, body: invalid }), 400, Code.INVALID_ARGUMENT, /metadata\.name/);
    });

    it('hands the Idempotency-Key to the actor as the command id, and replays a repeated request', async () => {
      const key = `key-${Date.now()}`;
      const first = await create(body({ data: { region: 'emea' } }), { headers: { 'idempotency-key': key } });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(actor.calls.at(-1)!.options, { commandId: `create:${startKeyOf({ profileId: first.body.metadata.profileId }, key)}` });
      const calls = actor.calls.length;
      const again = await create(body({ data: { region: 'emea' } }), { headers: { 'idempotency-key': key } });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.metadata.id, first.body.metadata.id);
      assert.equal(actor.calls.length, calls, 'a replay does not reach the actor');
    });
  });

  describe('GET /v1/workspaces/{ws}/agents/{agentId}/schedules', () => {
    let agent: string;
    let rows: Json[];
    before(async () => {
      agent = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      rows = [];
      for (const [name, status, labels] of [
        ['alpha', 'AGENT_SCHEDULE_STATUS_ACTIVE', { tier: 'gold' }],
        ['beta', 'AGENT_SCHEDULE_STATUS_PAUSED', {}],
        ['gamma', 'AGENT_SCHEDULE_STATUS_ACTIVE', { tier: 'gold' }],
        ['delta', 'AGENT_SCHEDULE_STATUS_ACTIVE', {}],
      ] as const) rows.push(await createOk(body({ status }, { name, labels }), agent));
      const archived = await api.request('DELETE', `${base(agent)}/${rows[3].metadata.id}`, { token: ws.token });
      assert.equal(archived.status, 200);
    });
    const list = (query = '', token = ws.token) => api.request('GET', `${base(agent)}${query}`, { token });
    const ids = (response: ApiResponse) => {
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.items.map((item: Json) => item.metadata.name);
    };

    it('lists every schedule of the agent in creation order, archived ones included', async () => {
      assert.deepEqual(ids(await list()), ['alpha', 'beta', 'gamma', 'delta']);
      const one = await api.request('GET', `${base(agent)}/${rows[0].metadata.id}`, { token: ws.token });
      assert.deepEqual((await list()).body.items[0], one.body, 'list items are what GET answers');
    });

    it('filters by status, labels and prefix', async () => {
      assert.deepEqual(ids(await list('?status=AGENT_SCHEDULE_STATUS_ACTIVE')), ['alpha', 'gamma']);
      assert.deepEqual(ids(await list('?status=AGENT_SCHEDULE_STATUS_PAUSED')), ['beta']);
      assert.deepEqual(ids(await list('?status=AGENT_SCHEDULE_STATUS_ARCHIVED')), ['delta']);
      assert.deepEqual(ids(await list('?status=AGENT_SCHEDULE_STATUS_UNSPECIFIED')).length, 4);
      assert.deepEqual(ids(await list('?labels=tier=gold')), ['alpha', 'gamma']);
      assert.deepEqual(ids(await list('?prefix=ga')), ['gamma']);
      invalidField(await list('?status=ACTIVE'), 'status');
    });

    it('pages with a cursor in either order', async () => {
      const first = await list('?limit=3');
      assert.deepEqual(ids(first), ['alpha', 'beta', 'gamma']);
      assert.deepEqual(ids(await list(`?limit=3&cursor=${first.body.pagination.nextCursor}`)), ['delta']);
      assert.deepEqual(ids(await list('?limit=2&sortOrder=desc')), ['delta', 'gamma']);
    });

    it("returns NOT_FOUND for another workspace's agent", async () => {
      assertError(await api.request('GET', base(foreign.agentId), { token: ws.token }), 404, Code.NOT_FOUND, `agent ${foreign.agentId} not found`);
    });
  });

  describe('GET /v1/workspaces/{ws}/agents/{agentId}/schedules/{id}', () => {
    it("returns NOT_FOUND for an unknown schedule, another agent's and another workspace's", async () => {
      const mine = await createOk(body());
      const unknown = missingId('sched');
      assertError(await get(unknown), 404, Code.NOT_FOUND, `schedule ${unknown} not found`);
      assertError(await api.request('GET', `${base(otherAgentId)}/${mine.metadata.id}`, { token: ws.token }), 404, Code.NOT_FOUND, `schedule ${mine.metadata.id} not found`);
      assertError(await api.request('GET', `${base(foreign.agentId)}/${foreign.scheduleId}`, { token: ws.token }), 404, Code.NOT_FOUND, `agent ${foreign.agentId} not found`);
      assertError(await api.request('GET', `${base()}/${foreign.scheduleId}`, { token: ws.token }), 404, Code.NOT_FOUND, `schedule ${foreign.scheduleId} not found`);
      assertError(await api.request('GET', `${base(foreign.agentId, foreign.workspaceId)}/${foreign.scheduleId}`, { token: ws.token }), 403, Code.PERMISSION_DENIED, /workspace/);
      assertError(await get('agent_01ARZ3NDEKTSV4RRFFQ69G5FAV'), 400, Code.INVALID_ARGUMENT, /^id: has an invalid format/);
    });
  });

  describe('PATCH /v1/workspaces/{ws}/agents/{agentId}/schedules/{id}', () => {
    it('applies the fields present in the body and keeps the others', async () => {
      const created = await createOk(body({ data: { region: 'emea' }, variationId }, { labels: { team: 'ops' } }));
      const id = created.metadata.id;
      const response = await patch(id, {
        metadata: { name: 'evening-report' },
        spec: { schedule: { intervals: [{ every: '120m' }], timezone: 'Asia/Tokyo' }, status: 'AGENT_SCHEDULE_STATUS_PAUSED', catchupWindow: '300s' },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.name, 'evening-report');
      assert.deepEqual(response.body.metadata.labels, { team: 'ops' });
      assert.equal(response.body.metadata.createdAt, created.metadata.createdAt);
      assert.ok(response.body.metadata.updatedAt > created.metadata.updatedAt);
      assert.deepEqual(response.body.spec, {
        initialMessage: 'Write the morning report', schedule: { intervals: [{ every: '2h' }], timezone: 'Asia/Tokyo' }, data: { region: 'emea' },
        overlapPolicy: 'OVERLAP_POLICY_SKIP', status: 'AGENT_SCHEDULE_STATUS_PAUSED', variationId, catchupWindow: '5m',
      });
      const call = actor.calls.at(-1)!;
      assert.equal(call.message.type, 'configure');
      assert.equal(call.message.schedule.id, id);
      assert.equal(call.message.schedule.createdAt, new Date(created.metadata.createdAt).toISOString());
      assert.deepEqual((await get(id)).body, response.body);
      const resumed = await patch(id, { spec: { status: 'AGENT_SCHEDULE_STATUS_ACTIVE' } });
      assert.equal(resumed.body.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE');
      assert.ok(resumed.body.info.nextFireAt);
    });

    it('returns a masked field absent from the body to its default', async () => {
      const created = await createOk(body({ data: { region: 'emea' }, variationId, overlapPolicy: 'OVERLAP_POLICY_ALLOW', catchupWindow: '1h' }, { externalId: 'x' }));
      const response = await patch(created.metadata.id, { updateMask: 'spec.variationId,spec.overlapPolicy,spec.catchupWindow,metadata.externalId' });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.variationId, undefined);
      assert.equal(response.body.spec.overlapPolicy, 'OVERLAP_POLICY_SKIP');
      assert.equal(response.body.spec.catchupWindow, '1m');
      assert.equal(response.body.metadata.externalId, undefined);
      assert.deepEqual(response.body.spec.data, { region: 'emea' }, 'a field outside the mask stays');
      const cleared = await patch(created.metadata.id, { updateMask: 'spec.data', spec: { initialMessage: 'ignored: not in the mask' } });
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.equal('data' in cleared.body.spec, false);
      assert.equal(cleared.body.spec.initialMessage, 'Write the morning report');
    });

    it('checks each field it changes, naming it', async () => {
      const { metadata: { id } } = await createOk(body({ data: { region: 'emea' } }));
      invalidField(await patch(id, { spec: { schedule: { calendars: [{ hour: [{ start: 25 }] }], timezone: 'UTC' } } }), 'spec.schedule.calendars[0].hour[0].start');
      invalidField(await patch(id, { spec: { status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' } }), 'spec.status');
      invalidField(await patch(id, { spec: { data: { region: 1 } } }), 'spec.data.region');
      invalidField(await patch(id, { spec: { variationId: otherVariationId } }), 'spec.variationId');
      invalidField(await patch(id, { spec: { catchupWindow: '1h30' } }), 'spec.catchupWindow');
      invalidField(await patch(id, { updateMask: 'spec.initialMessage' }), 'spec.initialMessage');
      invalidField(await patch(id, { updateMask: 'spec.schedule' }), 'spec.schedule');
      invalidField(await patch(id, { updateMask: 'info.fireCount' }), 'updateMask');
      invalidField(await patch(id, { metadata: { labels: { 'no spaces': 'x' } } }), 'metadata.labels.no spaces');
    });

    it('honours If-Match on metadata.updatedAt', async () => {
      const created = await createOk(body({ data: { region: 'emea' } }));
      assertError(await patch(created.metadata.id, { metadata: { name: 'late' } }, { 'if-match': '2020-01-01T00:00:00.000Z' }), 409, Code.ABORTED, /^the resource was modified/);
      const ok = await patch(created.metadata.id, { metadata: { name: 'on-time' } }, { 'if-match': created.metadata.updatedAt });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });
  });

  describe('DELETE /v1/workspaces/{ws}/agents/{agentId}/schedules/{id}', () => {
    it('archives the schedule through its actor; it stays readable and can no longer be changed or triggered', async () => {
      const { metadata: { id } } = await createOk(body({ data: { region: 'emea' } }));
      const archived = await remove(id);
      assert.equal(archived.status, 200, JSON.stringify(archived.body));
      assert.equal(archived.body.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
      assert.equal(archived.body.info.nextFireAt, undefined);
      assert.deepEqual(actor.calls.at(-1)!.message.schedule.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
      assert.deepEqual((await get(id)).body, archived.body);
      const calls = actor.calls.length;
      assert.deepEqual((await remove(id)).body, archived.body, 'a second DELETE answers the archived schedule');
      assert.equal(actor.calls.length, calls, 'without asking the actor again');
      assertError(await patch(id, { metadata: { name: 'revived' } }), 400, Code.FAILED_PRECONDITION, `schedule ${id} is ARCHIVED and cannot be changed`);
      assertError(await patch(id, { spec: { status: 'AGENT_SCHEDULE_STATUS_ACTIVE' } }), 400, Code.FAILED_PRECONDITION, `schedule ${id} is ARCHIVED and cannot be changed`);
      assertError(await trigger(id), 400, Code.FAILED_PRECONDITION, `schedule ${id} is ARCHIVED and cannot be triggered`);
      assert.equal((await upcoming(id, '?count=1')).body.fireTimes.length, 1, 'upcoming still answers what the rules would fire');
    });

    it('returns NOT_FOUND for an unknown schedule', async () => {
      assertError(await remove(missingId('sched')), 404, Code.NOT_FOUND, `schedule ${missingId('sched')} not found`);
    });
  });

  describe('DELETE /v1/workspaces/{ws}/agents/{agentId} (the agent of schedules)', () => {
    const agentPath = (agent: string) => `/v1/workspaces/${ws.workspaceId}/agents/${agent}`;
    /** The schedule as the read model holds it, mapped as GET maps it (GET itself answers the agent NOT_FOUND once it is deleted). */
    const stored = async (agent: string, id: string) => {
      const record = await api.services.schedulesStore.get(ws.workspaceId, agent, id);
      assert.ok(record, `schedule ${id} is still in the read model`);
      return toAgentSchedule(record) as Json;
    };
    const configuresOf = (from: number) => actor.calls.slice(from).filter((call) => call.message.type === 'configure');

    it('archives each schedule of the agent that is not ARCHIVED through its actor, as DELETE of the schedule does', async () => {
      const agent = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      const active = await createOk(body(), agent);
      const paused = await createOk(body({ status: 'AGENT_SCHEDULE_STATUS_PAUSED', schedule: EVERY_15_MINUTES }, { name: 'paused' }), agent);
      const archivedBefore = (await api.request('DELETE', `${base(agent)}/${(await createOk(body({}, { name: 'old' }), agent)).metadata.id}`, { token: ws.token })).body;
      const elsewhere = await createOk(body(), otherAgentId);
      const calls = actor.calls.length;

      const deleted = await api.request('DELETE', agentPath(agent), { token: ws.token });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.deepEqual(deleted.body, {});

      assert.deepEqual(configuresOf(calls).map((call) => [call.id, call.message.schedule.spec.status]), [
        [active.metadata.id, 'AGENT_SCHEDULE_STATUS_ARCHIVED'],
        [paused.metadata.id, 'AGENT_SCHEDULE_STATUS_ARCHIVED'],
      ], 'one configure per live schedule, in creation order; the archived one is not asked again');
      for (const before of [active, paused]) {
        const after = await stored(agent, before.metadata.id);
        assert.deepEqual(after.spec, { ...before.spec, status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }, 'only the status changes');
        assert.equal(after.info.nextFireAt, undefined, 'an archived schedule has no next fire');
        assert.deepEqual(after.metadata.labels, before.metadata.labels);
      }
      assert.deepEqual(await stored(agent, archivedBefore.metadata.id), archivedBefore, 'an ARCHIVED schedule is left as it was');
      const other = await api.request('GET', `${base(otherAgentId)}/${elsewhere.metadata.id}`, { token: ws.token });
      assert.equal(other.body.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE', "another agent's schedule stays ACTIVE");

      assertError(await api.request('GET', `${base(agent)}/${active.metadata.id}`, { token: ws.token }), 404, Code.NOT_FOUND, `agent ${agent} not found`);
      assertError(await api.request('GET', `${base(agent)}/${active.metadata.id}/upcoming`, { token: ws.token }), 404, Code.NOT_FOUND, `agent ${agent} not found`);
      assertError(await api.request('POST', `${base(agent)}/${paused.metadata.id}/trigger`, { token: ws.token, body: {} }), 404, Code.NOT_FOUND, `agent ${agent} not found`);
    });

    it('keeps the agent when an actor fails, and a retried DELETE archives the rest and deletes it', async () => {
      const agent = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      const first = await createOk(body({}, { name: 'first' }), agent);
      const second = await createOk(body({}, { name: 'second' }), agent);
      actor.failing.add(second.metadata.id);
      try {
        assertError(await api.request('DELETE', agentPath(agent), { token: ws.token }), 503, 14, `schedule actor ${second.metadata.id} did not answer in time`);
      } finally {
        actor.failing.delete(second.metadata.id);
      }
      assert.equal((await api.request('GET', agentPath(agent), { token: ws.token })).status, 200, 'the agent is not deleted while a schedule of it is live');
      assert.equal((await stored(agent, first.metadata.id)).spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED', 'the schedule before the failure is archived');
      assert.equal((await stored(agent, second.metadata.id)).spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE');

      const calls = actor.calls.length;
      const retried = await api.request('DELETE', agentPath(agent), { token: ws.token });
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.deepEqual(configuresOf(calls).map((call) => call.id), [second.metadata.id], 'the retry asks only the schedule still live');
      assert.equal((await stored(agent, second.metadata.id)).spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED');
      assertError(await api.request('GET', agentPath(agent), { token: ws.token }), 404, Code.NOT_FOUND, `agent ${agent} not found`);
    });
  });

  describe('POST /v1/workspaces/{ws}/agents/{agentId}/schedules/{id}/trigger', () => {
    it('asks the actor to fire once now and answers the schedule with the objective it created', async () => {
      const { metadata: { id } } = await createOk(body({ data: { region: 'emea' }, status: 'AGENT_SCHEDULE_STATUS_PAUSED' }));
      const key = `trigger-${Date.now()}`;
      const response = await trigger(id, { 'idempotency-key': key });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.objectiveId, missingId('obj'));
      assert.equal(response.body.schedule.metadata.id, id);
      assert.equal(response.body.schedule.info.fireCount, 1);
      assert.equal(response.body.schedule.info.lastObjectiveId, missingId('obj'));
      const call = actor.calls.at(-1)!;
      assert.deepEqual([call.kind, call.id, call.message], [SCHEDULE_KIND, id, { type: 'trigger' }]);
      assert.deepEqual(call.options, { commandId: `trigger:${startKeyOf({ profileId: response.body.schedule.metadata.profileId }, key)}` });
    });

    it("returns NOT_FOUND for another agent's schedule and FAILED_PRECONDITION once its agent is ARCHIVED", async () => {
      const created = await createOk(body(), otherAgentId);
      assertError(await trigger(created.metadata.id), 404, Code.NOT_FOUND, `schedule ${created.metadata.id} not found`);
      const archive = await api.request('PATCH', `/v1/workspaces/${ws.workspaceId}/agents/${otherAgentId}`, { token: ws.token, body: { spec: { status: 'AGENT_STATUS_ARCHIVED' } } });
      assert.equal(archive.status, 200, JSON.stringify(archive.body));
      const response = await api.request('POST', `${base(otherAgentId)}/${created.metadata.id}/trigger`, { token: ws.token, body: {} });
      assertError(response, 400, Code.FAILED_PRECONDITION, `agent ${otherAgentId} is ARCHIVED; objectives run on DRAFT and PUBLISHED agents`);
      await api.request('PATCH', `/v1/workspaces/${ws.workspaceId}/agents/${otherAgentId}`, { token: ws.token, body: { spec: { status: 'AGENT_STATUS_PUBLISHED' } } });
    });
  });

  describe('GET /v1/workspaces/{ws}/agents/{agentId}/schedules/{id}/upcoming', () => {
    let weekdays: string;
    let quarterHours: string;
    before(async () => {
      weekdays = (await createOk(body({ data: { region: 'emea' } }))).metadata.id;
      quarterHours = (await createOk(body({ data: { region: 'emea' }, schedule: EVERY_15_MINUTES, status: 'AGENT_SCHEDULE_STATUS_PAUSED' }))).metadata.id;
    });
    const fireTimes = async (id: string, query: string) => {
      const response = await upcoming(id, query);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.fireTimes as string[];
    };

    it('answers weekdays at 09:00 Berlin in UTC across the spring-forward change (CET 08:00Z, then CEST 07:00Z)', async () => {
      assert.deepEqual(await fireTimes(weekdays, '?count=5&from=2026-03-26T00:00:00Z'), [
        '2026-03-26T08:00:00Z', '2026-03-27T08:00:00Z', '2026-03-30T07:00:00Z', '2026-03-31T07:00:00Z', '2026-04-01T07:00:00Z',
      ]);
    });

    it('answers weekdays at 09:00 Berlin across the fall-back change, strictly after from', async () => {
      assert.deepEqual(await fireTimes(weekdays, '?count=3&from=2026-10-22T07:00:00Z'), ['2026-10-23T07:00:00Z', '2026-10-26T08:00:00Z', '2026-10-27T08:00:00Z']);
      assert.deepEqual(await fireTimes(weekdays, '?count=1&from=2026-10-23T08:00:00%2B01:00'), ['2026-10-26T08:00:00Z'], 'from may carry an offset');
    });

    it('answers every 15 minutes on real elapsed time through the DST change, for a PAUSED schedule too', async () => {
      assert.deepEqual(await fireTimes(quarterHours, '?count=6&from=2026-03-29T00:40:00Z'), [
        '2026-03-29T00:45:00Z', '2026-03-29T01:00:00Z', '2026-03-29T01:15:00Z', '2026-03-29T01:30:00Z', '2026-03-29T01:45:00Z', '2026-03-29T02:00:00Z',
      ]);
      assert.deepEqual(await fireTimes(quarterHours, '?count=4&from=2026-10-25T00:30:00Z'), [
        '2026-10-25T00:45:00Z', '2026-10-25T01:00:00Z', '2026-10-25T01:15:00Z', '2026-10-25T01:30:00Z',
      ]);
    });

    it('answers 10 fire times after now by default, and up to 1000', async () => {
      const before = Date.now();
      const times = await fireTimes(quarterHours, '');
      assert.equal(times.length, 10);
      assert.ok(Date.parse(times[0]) > before - 1000 && Date.parse(times[0]) <= before + 15 * 60_000 + 1000, times[0]);
      assert.equal((await fireTimes(weekdays, '?count=1000')).length, 1000);
    });

    it('returns INVALID_ARGUMENT for a count outside 1..1000 or a from that is not a date-time', async () => {
      for (const query of ['?count=0', '?count=1001', '?count=-1', '?count=2.5', '?count=ten']) invalidField(await upcoming(weekdays, query), 'count');
      for (const query of ['?from=tomorrow', '?from=2026-13-01T00:00:00Z', '?from=']) invalidField(await upcoming(weekdays, query), 'from');
      invalidField(await upcoming(weekdays, '?limit=5'), 'limit');
    });

    it('returns NOT_FOUND for an unknown schedule', async () => {
      assertError(await upcoming(missingId('sched')), 404, Code.NOT_FOUND, `schedule ${missingId('sched')} not found`);
    });
  });

  describe('scopes', () => {
    it('needs agents:read to read and agents:manage to write', async () => {
      const { metadata: { id } } = await createOk(body({ data: { region: 'emea' } }));
      const reader = await ws.keyWith(['agents:read']);
      const wrong = await ws.keyWith(['objectives:manage']);
      assert.equal((await api.request('GET', base(), { token: reader })).status, 200);
      assert.equal((await get(id, reader)).status, 200);
      assert.equal((await upcoming(id, '', reader)).status, 200);
      const lacks = (scope: string) => `this credential lacks the ${scope} scope`;
      assertError(await get(id, wrong), 403, Code.PERMISSION_DENIED, lacks('agents:read'));
      assertError(await upcoming(id, '', wrong), 403, Code.PERMISSION_DENIED, lacks('agents:read'));
      assertError(await create(body(), { token: reader }), 403, Code.PERMISSION_DENIED, lacks('agents:manage'));
      assertError(await api.request('PATCH', `${base()}/${id}`, { token: reader, body: {} }), 403, Code.PERMISSION_DENIED, lacks('agents:manage'));
      assertError(await remove(id, reader), 403, Code.PERMISSION_DENIED, lacks('agents:manage'));
      assertError(await trigger(id, {}, reader), 403, Code.PERMISSION_DENIED, lacks('agents:manage'));
      assertError(await api.request('GET', base()), 401, Code.UNAUTHENTICATED, 'missing bearer token (Authorization: Bearer <token>)');
    });
  });

  describe('on a node without an actor runtime', () => {
    let bare: TestApi;
    before(async () => {
      bare = await startTestApi();
    });
    after(async () => bare?.close());

    it('answers writes and triggers UNAVAILABLE, and still reads', async () => {
      const { metadata: { id } } = await createOk(body({ data: { region: 'emea' } }));
      const path = `${base()}/${id}`;
      assertError(await bare.request('POST', base(), { token: ws.token, body: body({ data: { region: 'emea' } }) }), 503, 14, 'this node runs no actor runtime');
      assertError(await bare.request('PATCH', path, { token: ws.token, body: { metadata: { name: 'x' } } }), 503, 14, 'this node runs no actor runtime');
      assertError(await bare.request('DELETE', path, { token: ws.token }), 503, 14, 'this node runs no actor runtime');
      assertError(await bare.request('POST', `${path}/trigger`, { token: ws.token, body: {} }), 503, 14, 'this node runs no actor runtime');
      assert.equal((await bare.request('GET', path, { token: ws.token })).status, 200);
      assert.equal((await bare.request('GET', `${path}/upcoming`, { token: ws.token })).status, 200);
    });

    it('answers DELETE of an agent with a live schedule UNAVAILABLE and keeps the agent; one without schedules is deleted', async () => {
      const agents = `/v1/workspaces/${ws.workspaceId}/agents`;
      const scheduled = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      const { metadata: { id } } = await createOk(body(), scheduled);
      assertError(await bare.request('DELETE', `${agents}/${scheduled}`, { token: ws.token }), 503, 14, 'this node runs no actor runtime');
      assert.equal((await bare.request('GET', `${agents}/${scheduled}`, { token: ws.token })).status, 200);
      assert.equal((await bare.request('GET', `${base(scheduled)}/${id}`, { token: ws.token })).body.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE');
      const plain = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      assert.equal((await bare.request('DELETE', `${agents}/${plain}`, { token: ws.token })).status, 200);
    });
  });
});
