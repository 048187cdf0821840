// The objectives read model (persistence/repositories/objectives.store.ts)
// against a real Postgres database: the projector's one statement per call
// (rows created, infos updated unless stale, events inserted once) on a raw pg
// transaction like the runtime's, and every read of the port.
import assert from 'node:assert/strict';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { newId } from '../../src/ids';
import type { ObjectiveChange, ObjectiveInfoChange } from '../../src/objectives/objective-events';
import { ObjectiveStatus, type ObjectiveEventType, type ObjectiveSpec } from '../../src/objectives/objective-state';
import type { ObjectivesStore, ProjectionConnection } from '../../src/ports/objectives-store';
import type { PageRequest } from '../../src/resource/pagination';
import { createDataSource } from '../../persistence/data-source';
import { createAgentsStore } from '../../persistence/repositories/agents.store';
import { createObjectivesStore, EVENT_ENVELOPE_SQL } from '../../persistence/repositories/objectives.store';
import { createSearchStore } from '../../persistence/repositories/search.store';
import { createTestDatabase, type TestDatabase } from '../support/database';

type Changes = Array<{ actorId: string; change: ObjectiveChange }>;

interface Made {
  id: string;
  created: Changes[number];
  events: Changes;
  info: Changes[number];
}

describe('objectives store (read model)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let pool: Pool;
  let store: ObjectivesStore;
  const accountId = newId('account');
  const workspaceId = newId('workspace');
  const otherWorkspaceId = newId('workspace');

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    pool = new Pool({ connectionString: database.url, max: 2 });
    await dataSource.query(`INSERT INTO accounts (id, account_id, name, webhook_signing_secret) VALUES ($1, $1, 'acme', 'secret')`, [accountId]);
    for (const id of [workspaceId, otherWorkspaceId]) {
      await dataSource.query(`INSERT INTO workspaces (id, account_id, name, status) VALUES ($1, $2, $1, 'WORKSPACE_STATUS_ACTIVE')`, [id, accountId]);
    }
    store = createObjectivesStore(dataSource);
  });

  after(async () => {
    await pool?.end();
    await dataSource?.destroy();
    await database?.drop();
  });

  /** Runs the projector as the runtime does: on one raw pg connection, inside a transaction. */
  async function project(changes: Changes): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const connection: ProjectionConnection = { query: async (sql, parameters) => (await client.query(sql, parameters)).rows };
      await store.project(connection, changes);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  function info(status: ObjectiveStatus, sequence: number, extra: Partial<ObjectiveInfoChange> = {}): ObjectiveInfoChange {
    return {
      status,
      createdAt: '2025-01-01T00:00:00.000Z',
      startedAt: status === ObjectiveStatus.PENDING ? null : '2025-01-01T00:00:01.000Z',
      finishedAt: null,
      output: null,
      lastMessage: null,
      error: null,
      usage: { promptTokens: 0, completionTokens: 0, costCents: 0 },
      toolCallCount: 0,
      subObjectiveCount: 0,
      pendingToolCallIds: [],
      sequence,
      ...extra,
    };
  }

  function infoChange(id: string, value: ObjectiveInfoChange, workspace = workspaceId): Changes[number] {
    return { actorId: id, change: { type: 'objective', objectiveId: id, workspaceId: workspace, info: value } };
  }

  function eventChange(id: string, sequence: number, type: ObjectiveEventType = 'USER_MESSAGE', workspace = workspaceId): Changes[number] {
    const record = { id: newId('objectiveEvent'), objectiveId: id, sequence, type, createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, sequence)).toISOString(), data: { userMessage: { content: `message ${sequence}` } } };
    return {
      actorId: id,
      change: {
        type: 'objective_event', objectiveId: id, workspaceId: workspace, record,
        webhookType: `objective_event.${type.toLowerCase()}`,
        envelope: {
          timestamp: record.createdAt, type: `objective_event.${type.toLowerCase()}`,
          data: { objectiveEvent: { sequence, data: { type: `OBJECTIVE_EVENT_TYPE_${type}`, ...record.data } } },
        },
      },
    };
  }

  interface Options {
    workspace?: string;
    agentId?: string;
    spec?: Partial<ObjectiveSpec>;
    externalId?: string;
    labels?: Record<string, string>;
    startKey?: string | null;
    status?: ObjectiveStatus;
    events?: number;
  }

  /** The changes of a start turn (created, events 1..n, info), not projected yet. */
  function objective(options: Options = {}): Made {
    const id = newId('objective');
    const workspace = options.workspace ?? workspaceId;
    const spec: ObjectiveSpec = {
      agentId: options.agentId ?? 'agt_default', variationId: 'agtvar_1', data: { order: 'A-17' }, initialMessage: null, episodicKey: null,
      memoryLayerIds: [], tenantId: null, subjectId: null, parentObjectiveId: null, scheduleId: null, ...options.spec,
    };
    const metadata = {
      id, accountId, workspaceId: workspace, profileId: 'prf_creator', createdAt: new Date().toISOString(),
      ...(options.externalId !== undefined ? { externalId: options.externalId } : {}),
      ...(options.labels ? { labels: options.labels } : {}),
    };
    const count = options.events ?? 2;
    const events = Array.from({ length: count }, (_, index) => eventChange(id, index + 1, 'USER_MESSAGE', workspace));
    return {
      id,
      created: { actorId: id, change: { type: 'objective_created', objectiveId: id, workspaceId: workspace, accountId, start: { metadata, spec, startKey: options.startKey ?? null } } },
      events,
      info: infoChange(id, info(options.status ?? ObjectiveStatus.RUNNING, count), workspace),
    };
  }

  const turn = (made: Made): Changes => [made.created, ...made.events, made.info];

  async function eventCount(id: string): Promise<number> {
    const rows: Array<{ count: number }> = await dataSource.query('SELECT count(*)::int AS count FROM objective_events WHERE objective_id = $1', [id]);
    return rows[0].count;
  }

  describe('project', () => {
    it('writes created rows, events and infos of many objectives in one call, and reads them back', async () => {
      const first = objective({ externalId: 'order-1', labels: { team: 'billing' }, startKey: 'key-first', spec: { initialMessage: 'Refund order 1', memoryLayerIds: ['ml_1'], episodicKey: 'ep' } });
      const second = objective({ events: 3, spec: { data: 'plain string data' } });
      await project([...turn(first), ...turn(second)]);

      const found = await store.findById(first.id);
      assert.ok(found);
      const start = (first.created.change as Extract<ObjectiveChange, { type: 'objective_created' }>).start;
      assert.deepEqual(found.metadata, start.metadata);
      assert.deepEqual(found.spec, start.spec);
      assert.deepEqual(found.info, (first.info.change as Extract<ObjectiveChange, { type: 'objective' }>).info);
      assert.equal(found.id, first.id);
      assert.equal(found.accountId, accountId);
      assert.equal(found.workspaceId, workspaceId);
      assert.equal(found.startKey, 'key-first');
      assert.ok(found.updatedAt instanceof Date);

      const secondFound = await store.findById(second.id);
      assert.equal(secondFound?.spec.data, 'plain string data');
      assert.equal(secondFound?.info.sequence, 3);
      assert.equal(secondFound?.metadata.externalId, undefined);
      assert.equal(secondFound?.metadata.labels, undefined);
      assert.equal(await eventCount(first.id), 2);
      assert.equal(await eventCount(second.id), 3);

      const [stored] = await dataSource.query(
        `SELECT o.status, o.sequence, e.webhook_type, ${EVENT_ENVELOPE_SQL} AS envelope, e.envelope #> '{data,objectiveEvent,data}' AS stored_content
         FROM objectives o JOIN objective_events e ON e.objective_id = o.id WHERE o.id = $1 AND e.sequence = 1`,
        [first.id],
      );
      assert.equal(stored.status, ObjectiveStatus.RUNNING);
      assert.equal(stored.sequence, 2);
      assert.equal(stored.webhook_type, 'objective_event.user_message');
      assert.deepEqual(stored.envelope, (first.events[0].change as Extract<ObjectiveChange, { type: 'objective_event' }>).envelope);
      assert.equal(stored.stored_content, null, 'the content is stored once, in data');
    });

    it('takes the last info of an objective within one call, and later calls update the row', async () => {
      const made = objective({ events: 1 });
      await project([made.created, made.events[0], infoChange(made.id, info(ObjectiveStatus.RUNNING, 1)), infoChange(made.id, info(ObjectiveStatus.AWAITING_APPROVAL, 1, { pendingToolCallIds: ['call_1'] }))]);
      assert.equal((await store.findById(made.id))?.info.status, ObjectiveStatus.AWAITING_APPROVAL);

      // Two later turns of the same objective batched in one call.
      await project([
        eventChange(made.id, 2, 'TOOL_APPROVED'), infoChange(made.id, info(ObjectiveStatus.RUNNING, 2)),
        eventChange(made.id, 3, 'ASSISTANT_MESSAGE'), eventChange(made.id, 4, 'FINALIZED'),
        infoChange(made.id, info(ObjectiveStatus.COMPLETED, 4, { lastMessage: 'done', output: { ok: true } })),
      ]);
      const found = await store.findById(made.id);
      assert.equal(found?.info.status, ObjectiveStatus.COMPLETED);
      assert.deepEqual(found?.info.output, { ok: true });
      assert.equal(found?.info.sequence, 4);
      const [row] = await dataSource.query('SELECT status, sequence FROM objectives WHERE id = $1', [made.id]);
      assert.deepEqual(row, { status: ObjectiveStatus.COMPLETED, sequence: 4 });
      assert.equal(await eventCount(made.id), 4);
    });

    it('is idempotent: the same changes twice leave one row and one event each, and a stale info is not applied', async () => {
      const made = objective({ events: 2 });
      await project(turn(made));
      await project(turn(made));
      assert.equal(await eventCount(made.id), 2);
      const newer = infoChange(made.id, info(ObjectiveStatus.COMPLETED, 3, { lastMessage: 'newest' }));
      await project([eventChange(made.id, 3, 'FINALIZED'), newer]);
      const before = await store.findById(made.id);
      // The start turn and an older info projected again: nothing moves back.
      await project(turn(made));
      await project([infoChange(made.id, info(ObjectiveStatus.RUNNING, 2, { lastMessage: 'stale' }))]);
      const after = await store.findById(made.id);
      assert.deepEqual(after?.info, before?.info);
      assert.equal(after?.info.lastMessage, 'newest');
      assert.deepEqual(after?.updatedAt, before?.updatedAt);
      assert.equal(await eventCount(made.id), 3);
      const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM objectives WHERE id = $1', [made.id]);
      assert.equal(count, 1);
    });

    it('applies an info of the same sequence (a status change that records no event)', async () => {
      const made = objective({ events: 1 });
      await project(turn(made));
      await project([infoChange(made.id, info(ObjectiveStatus.CANCELLED, 1))]);
      assert.equal((await store.findById(made.id))?.info.status, ObjectiveStatus.CANCELLED);
    });

    it('creates a row without an info change as PENDING at sequence 0', async () => {
      const made = objective();
      await project([made.created]);
      const found = await store.findById(made.id);
      assert.equal(found?.info.status, ObjectiveStatus.PENDING);
      assert.equal(found?.info.sequence, 0);
      await project([...made.events, made.info]);
      assert.equal((await store.findById(made.id))?.info.status, ObjectiveStatus.RUNNING);
    });

    it('refuses a second objective with the same start key in the workspace (ALREADY_EXISTS), and writes nothing of that call', async () => {
      await project(turn(objective({ startKey: 'dup-key' })));
      const second = objective({ startKey: 'dup-key' });
      await assert.rejects(project(turn(second)), (error: Error & { code?: number }) => {
        assert.match(error.message, /Idempotency-Key/);
        return true;
      });
      assert.equal(await store.findById(second.id), null);
      assert.equal(await eventCount(second.id), 0);
      // The same key in another workspace is another objective.
      const elsewhere = objective({ startKey: 'dup-key', workspace: otherWorkspaceId });
      await project(turn(elsewhere));
      assert.ok(await store.findById(elsewhere.id));
    });

    it('does nothing for no changes, and fails (writing nothing) on a change type it does not know', async () => {
      await store.project({ query: async () => assert.fail('no statement expected') }, []);
      const made = objective();
      const unknown = { actorId: made.id, change: { type: 'objective_renamed', objectiveId: made.id, workspaceId } as unknown as ObjectiveChange };
      await assert.rejects(project([...turn(made), unknown]), /unknown change type objective_renamed/);
      assert.equal(await store.findById(made.id), null);
    });
  });

  describe('reads', () => {
    const listWorkspace = newId('workspace');
    const made: Record<string, Made> = {};
    const page = (limit = 50, sortOrder: 'asc' | 'desc' = 'asc', after?: string): PageRequest => ({ limit, sortOrder, ...(after ? { after } : {}) });
    const ids = (records: Array<{ id: string }>) => records.map((record) => record.id);

    before(async () => {
      await dataSource.query(`INSERT INTO workspaces (id, account_id, name, status) VALUES ($1, $2, $1, 'WORKSPACE_STATUS_ACTIVE')`, [listWorkspace, accountId]);
      const options: Record<string, Options> = {
        plain: {},
        agentB: { agentId: 'agt_b' },
        agentBDone: { agentId: 'agt_b', status: ObjectiveStatus.COMPLETED },
        agentBFailed: { agentId: 'agt_b', status: ObjectiveStatus.FAILED },
        agentBCancelled: { agentId: 'agt_b', status: ObjectiveStatus.CANCELLED },
        agentBWaiting: { agentId: 'agt_b', status: ObjectiveStatus.AWAITING_APPROVAL },
        tenant: { spec: { tenantId: 'tnt_1' } },
        subject: { spec: { tenantId: 'tnt_2', subjectId: 'sbj_1' } },
        otherSubject: { spec: { subjectId: 'sbj_2' } },
        schedule: { spec: { scheduleId: 'sch_1' } },
        child: { spec: { parentObjectiveId: 'obj_parent' } },
        external: { externalId: 'ext-42', labels: { team: 'billing', tier: 'gold' } },
        labelled: { labels: { team: 'billing' } },
        keyed: { startKey: 'start-key-1' },
      };
      // Created in order, one turn each, so ids (ULIDs) ascend in this order.
      for (const [name, option] of Object.entries(options)) {
        made[name] = objective({ ...option, workspace: listWorkspace });
        await project(turn(made[name]));
      }
    });

    it('lists the workspace in id order, both ways, with cursor paging', async () => {
      const all = Object.values(made).map((item) => item.id);
      assert.deepEqual(ids(await store.list(listWorkspace, page(), {})), all);
      assert.deepEqual(ids(await store.list(listWorkspace, page(50, 'desc'), {})), [...all].reverse());
      const collected: string[] = [];
      let after: string | undefined;
      for (;;) {
        const rows = await store.list(listWorkspace, page(4, 'asc', after), {});
        const pageRows = rows.slice(0, 4);
        collected.push(...ids(pageRows));
        if (rows.length <= 4) break;
        after = pageRows[pageRows.length - 1].id;
      }
      assert.deepEqual(collected, all);
      const desc = await store.list(listWorkspace, page(3, 'desc', all[5]), {});
      assert.deepEqual(ids(desc), [all[4], all[3], all[2], all[1]]);
      assert.ok(!ids(await store.list(workspaceId, page(1000), {})).some((id) => all.includes(id)), 'another workspace lists its own');
    });

    it('filters by agent, status, tenant, subject, schedule, parent, external id, labels and id prefix', async () => {
      const list = async (filter: Parameters<ObjectivesStore['list']>[2]) => ids(await store.list(listWorkspace, page(), filter));
      assert.deepEqual(await list({ agentId: 'agt_b' }), [made.agentB, made.agentBDone, made.agentBFailed, made.agentBCancelled, made.agentBWaiting].map((item) => item.id));
      assert.deepEqual(await list({ agentId: 'agt_b', status: ObjectiveStatus.COMPLETED }), [made.agentBDone.id]);
      assert.deepEqual(await list({ status: ObjectiveStatus.AWAITING_APPROVAL }), [made.agentBWaiting.id]);
      assert.deepEqual(await list({ tenantId: 'tnt_1' }), [made.tenant.id]);
      assert.deepEqual(await list({ subjectId: 'sbj_1' }), [made.subject.id]);
      assert.deepEqual(await list({ scheduleId: 'sch_1' }), [made.schedule.id]);
      assert.deepEqual(await list({ parentObjectiveId: 'obj_parent' }), [made.child.id]);
      assert.deepEqual(await list({ externalId: 'ext-42' }), [made.external.id]);
      assert.deepEqual(await list({ labels: { team: 'billing' } }), [made.external.id, made.labelled.id]);
      assert.deepEqual(await list({ labels: { team: 'billing', tier: 'gold' } }), [made.external.id]);
      assert.deepEqual(await list({ prefix: made.keyed.id }), [made.keyed.id]);
      assert.deepEqual(await list({ prefix: made.keyed.id.slice(0, -1) + '%' }), [], 'LIKE wildcards match literally');
      assert.deepEqual(await list({ agentId: 'agt_none' }), []);
    });

    it('lists events after a sequence, ascending, at most limit', async () => {
      const id = made.plain.id;
      await project([eventChange(id, 3, 'ASSISTANT_MESSAGE'), eventChange(id, 4, 'FINALIZED'), infoChange(id, info(ObjectiveStatus.COMPLETED, 4))]);
      const all = await store.listEvents(id, 0, 100);
      assert.deepEqual(all.map((event) => event.sequence), [1, 2, 3, 4]);
      const first = (made.plain.events[0].change as Extract<ObjectiveChange, { type: 'objective_event' }>).record;
      assert.deepEqual(all[0], first);
      assert.deepEqual((await store.listEvents(id, 1, 2)).map((event) => [event.sequence, event.type]), [[2, 'USER_MESSAGE'], [3, 'ASSISTANT_MESSAGE']]);
      assert.deepEqual(await store.listEvents(id, 4, 10), []);
      assert.deepEqual(await store.listEvents('obj_missing', 0, 10), []);
    });

    it('finds by start key within the workspace, and answers null for the unknown', async () => {
      assert.equal((await store.findByStartKey(listWorkspace, 'start-key-1'))?.id, made.keyed.id);
      assert.equal(await store.findByStartKey(workspaceId, 'start-key-1'), null);
      assert.equal(await store.findByStartKey(listWorkspace, 'other'), null);
      assert.equal(await store.findById('obj_missing'), null);
    });

    it('counts the running objectives of an agent (not COMPLETED, FAILED or CANCELLED), also through the agents store', async () => {
      assert.equal(await store.countRunningByAgent('agt_b'), 2);
      assert.equal(await store.countRunningByAgent('agt_none'), 0);
      assert.equal(await createAgentsStore(dataSource).objectives.countRunningObjectives('agt_b'), 2);
      await project([infoChange(made.agentBWaiting.id, info(ObjectiveStatus.CANCELLED, 3), listWorkspace)]);
      assert.equal(await store.countRunningByAgent('agt_b'), 1);
    });

    it('names the objectives of a tenant or subjects, within the workspace, with where their events go', async () => {
      const sorted = (values: string[]) => [...values].sort();
      const all = { after: null, limit: 100 };
      const ids = async (target: { workspaceId: string; tenantId?: string; subjectIds: string[] }, page: { after: string | null; limit: number } = all) =>
        (await store.namedBy(target, page)).map((named) => named.objectiveId);
      assert.deepEqual(await ids({ workspaceId: listWorkspace, tenantId: 'tnt_1', subjectIds: [] }), [made.tenant.id]);
      assert.deepEqual(await ids({ workspaceId: listWorkspace, subjectIds: ['sbj_1', 'sbj_2'] }), sorted([made.subject.id, made.otherSubject.id]));
      assert.deepEqual(await ids({ workspaceId: listWorkspace, tenantId: 'tnt_2', subjectIds: ['sbj_2'] }), sorted([made.subject.id, made.otherSubject.id]));
      assert.deepEqual(await ids({ workspaceId: workspaceId, tenantId: 'tnt_1', subjectIds: ['sbj_1'] }), []);
      assert.deepEqual(await ids({ workspaceId: listWorkspace, subjectIds: [] }), []);
      // A batch at a time, in id order, after the last id of the batch before.
      const both = { workspaceId: listWorkspace, subjectIds: ['sbj_1', 'sbj_2'] };
      const [first, second] = sorted([made.subject.id, made.otherSubject.id]);
      assert.deepEqual(await ids(both, { after: null, limit: 1 }), [first]);
      assert.deepEqual(await ids(both, { after: first, limit: 1 }), [second]);
      assert.deepEqual(await ids(both, { after: second, limit: 1 }), []);
      const [named] = await store.namedBy({ workspaceId: listWorkspace, tenantId: 'tnt_1', subjectIds: [] }, all);
      assert.deepEqual(named, { objectiveId: made.tenant.id, accountId, workspaceId: listWorkspace, agentId: 'agt_default' });
    });

    it('is found by search: external id, label values and the first message', async () => {
      const search = createSearchStore(dataSource);
      const hits = async (query: string) => (await search.search(listWorkspace, query, ['objectives'], 100)).map((hit) => hit.metadata.id);
      assert.deepEqual(await hits('ext-42'), [made.external.id]);
      assert.deepEqual(await hits('gold'), [made.external.id]);
      // data rendered as JSON (no initialMessage): every objective of the workspace holds order A-17.
      assert.equal((await hits('"A-17"')).length, Object.keys(made).length);
      const [hit] = await search.search(listWorkspace, 'ext-42', ['objectives'], 10);
      assert.equal(hit.type, 'objectives');
      assert.equal(hit.metadata.name, made.external.id);
      assert.equal(hit.metadata.externalId, 'ext-42');
      assert.match(hit.snippet, /\*\*ext\*\*/);
      assert.ok(hit.score > 0 && hit.score < 1);
    });
  });
});
