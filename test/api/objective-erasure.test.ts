// Tenant and subject erasure reaching objectives (issue 9 item 9): after
// DELETE of a tenant or a subject, its objectives keep their metadata but
// their content and their events' content read `[erased]`, a running one is
// stopped (CANCELLED), and objectives of other tenants are untouched. The real
// app with its embedded actor runtime and the builtin/scripted model.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { Client } from 'pg';
import { startTestApi, type TestApi } from '../support/api';
import { sharedTestDatabase } from '../support/global-setup';
import { createAgent, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('objective erasure with its tenant or subject', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const create = async (body: Record<string, unknown>) => {
    const response = await api.request('POST', base(), { token: ws.token, body: { agentId, ...body } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const statusOf = async (id: string) => (await get(`${base()}/${id}`)).info.status as string;
  /** DELETE answers the stored job; the erasure is done once the job reads COMPLETED. */
  const erase = async (path: string) => {
    const deleted = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/${path}`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.match(deleted.body.metadata.id, /^erasure_/);
    const follow = `/v1/workspaces/${ws.workspaceId}/erasures/${deleted.body.metadata.id}`;
    await eventually(async () => (await get(follow)).info.status === 'ERASURE_STATUS_COMPLETED', 'the erasure job completed');
    return get(follow);
  };

  before(async () => {
    api = await startTestApi({ runtime: true });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
  });

  after(async () => {
    await api?.close();
  });

  it('erases the content of a tenant\'s finished and running objectives and keeps their metadata; other tenants keep theirs', async () => {
    const finished = await create({
      initialMessage: 'SAY my card number is 4111 1111 1111 1111', data: { card: '4111' }, tenant: { externalId: 'acme' }, metadata: { externalId: 'ticket-1' },
    });
    const running = await create({ initialMessage: 'SLEEP 60000\nSAY too late', tenant: { externalId: 'acme' } });
    const other = await create({ initialMessage: 'SAY keep me', tenant: { externalId: 'globex' } });
    await eventually(async () => (await statusOf(finished.metadata.id)) === 'OBJECTIVE_STATUS_COMPLETED', 'first objective completed');
    await eventually(async () => (await statusOf(other.metadata.id)) === 'OBJECTIVE_STATUS_COMPLETED', 'other tenant\'s objective completed');
    assert.equal(await statusOf(running.metadata.id), 'OBJECTIVE_STATUS_RUNNING');

    const job = await erase(`tenants/${finished.spec.tenantId}`);
    assert.equal(job.info.objectiveCount, 2, 'both objectives of the tenant');
    assert.equal(job.spec.tenantId, finished.spec.tenantId);
    const gone = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tenants/${finished.spec.tenantId}`, { token: ws.token });
    assert.equal(gone.status, 404, 'the tenant record is gone');

    const erased = await get(`${base()}/${finished.metadata.id}`);
    assert.equal(erased.metadata.externalId, 'ticket-1', 'metadata stays');
    assert.equal(erased.spec.initialMessage, '[erased]');
    assert.equal(erased.spec.data, '[erased]');
    assert.equal(erased.info.lastMessage, '[erased]');
    const events = (await get(`${base()}/${finished.metadata.id}/events`)).items as any[];
    assert.ok(events.length >= 3);
    const text = JSON.stringify(events);
    assert.doesNotMatch(text, /4111/, 'no event keeps the content');
    assert.equal(events[0].data.userMessage.content, '[erased]');
    assert.deepEqual(events.map((event) => event.sequence), events.map((_, index) => index + 1), 'the events stay, numbered as before');

    const stopped = await get(`${base()}/${running.metadata.id}`);
    assert.equal(stopped.info.status, 'OBJECTIVE_STATUS_CANCELLED', 'the running objective is stopped');
    assert.equal(stopped.spec.initialMessage, '[erased]');
    const stoppedEvents = (await get(`${base()}/${running.metadata.id}/events`)).items as any[];
    assert.equal(stoppedEvents.at(-1).data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');

    const kept = await get(`${base()}/${other.metadata.id}`);
    assert.equal(kept.spec.initialMessage, 'SAY keep me');
    assert.equal(kept.info.lastMessage, 'keep me');

    const message = await api.request('POST', `${base()}/${finished.metadata.id}/messages`, { token: ws.token, body: { content: 'more?' } });
    assert.equal(message.status, 400, 'an erased objective takes no more messages');
  });

  it('erases a subject\'s objectives only', async () => {
    const mine = await create({ initialMessage: 'SAY secret of alice', subject: { externalId: 'alice' } });
    const theirs = await create({ initialMessage: 'SAY secret of bob', subject: { externalId: 'bob' } });
    await eventually(async () => (await statusOf(mine.metadata.id)) === 'OBJECTIVE_STATUS_COMPLETED', 'alice\'s objective completed');
    await eventually(async () => (await statusOf(theirs.metadata.id)) === 'OBJECTIVE_STATUS_COMPLETED', 'bob\'s objective completed');
    await erase(`subjects/${mine.spec.subjectId}`);
    assert.equal((await get(`${base()}/${mine.metadata.id}`)).info.lastMessage, '[erased]');
    assert.equal((await get(`${base()}/${theirs.metadata.id}`)).info.lastMessage, 'secret of bob');
  });
});

describe('an erasure job across a node restart', function () {
  this.timeout(120_000);
  let api: TestApi | undefined;

  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('is run again by the next node when its node stops mid-way, and completes', async () => {
    api = await startTestApi({ runtime: true });
    const ws = await workspaceFixture(api);
    const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    const base = `/v1/workspaces/${ws.workspaceId}`;
    // Many objectives, each erased by an ask to its actor in turn: the run is still going when the node stops.
    const ids: string[] = [];
    let subjectId = '';
    for (let index = 0; index < 40; index++) {
      const response: { status: number; body: any } = await api.request('POST', `${base}/objectives`, { token: ws.token, body: { agentId, initialMessage: `SAY carol's secret ${index}`, subject: { externalId: 'carol' } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      ids.push(response.body.metadata.id);
      subjectId = response.body.spec.subjectId;
    }
    const statusOf = async (current: TestApi, id: string) => (await current.request('GET', `${base}/objectives/${id}`, { token: ws.token })).body.info.status;
    for (const id of ids) await eventually(async () => (await statusOf(api!, id)) === 'OBJECTIVE_STATUS_COMPLETED', 'objective completed', 30_000);

    const deleted = await api.request('DELETE', `${base}/subjects/${subjectId}`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const erasureId: string = deleted.body.metadata.id;
    assert.equal(deleted.body.info.status, 'ERASURE_STATUS_RUNNING', 'the DELETE answers once the job is stored, before it has run');
    await api.close();
    api = undefined;

    // Stopped mid-way: the run is recorded as started and not ended, and some objectives are not erased yet.
    const database = new Client({ connectionString: (await sharedTestDatabase()).url });
    await database.connect();
    try {
      const work = await database.query('SELECT 1 FROM actor_work WHERE kind = $1 AND actor_id = $2', ['erasure', erasureId]);
      assert.equal(work.rowCount, 1, 'the run was under way when the node stopped');
      const notErased = await database.query(`SELECT count(*)::int AS count FROM objectives WHERE id = ANY($1::text[]) AND initial_message <> '[erased]'`, [ids]);
      assert.ok(notErased.rows[0].count > 0, 'some objectives were still to erase');
    } finally {
      await database.end();
    }

    api = await startTestApi({ runtime: true });
    const follow = async () => (await api!.request('GET', `${base}/erasures/${erasureId}`, { token: ws.token })).body;
    await eventually(async () => (await follow()).info?.status === 'ERASURE_STATUS_COMPLETED', 'the erasure completed on the next node', 60_000);
    assert.equal((await follow()).info.objectiveCount, 40);
    for (const id of ids) {
      const objective: any = (await api.request('GET', `${base}/objectives/${id}`, { token: ws.token })).body;
      assert.equal(objective.spec.initialMessage, '[erased]');
    }
  });
});
