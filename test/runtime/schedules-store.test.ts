// The agent schedules read model (persistence/repositories/schedules.store.ts)
// against the real Postgres database: the projector's one upsert per call on a
// raw pg transaction like the runtime's (revisions order writes, the last
// change of an id in a call wins), the reads of the port, and the objectives'
// one-objective-per-fire key the same migration adds.
import assert from 'node:assert/strict';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../persistence/data-source';
import { createSchedulesStore } from '../../persistence/repositories/schedules.store';
import { newId } from '../../src/ids';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { SchedulesStore } from '../../src/ports/schedules-store';
import { initialScheduleInfo, type ScheduleChange, type ScheduleRecord } from '../../src/schedules/schedule-record';
import { sharedTestDatabase } from '../support/global-setup';

describe('schedules store (read model)', () => {
  let dataSource: DataSource;
  let pool: Pool;
  let store: SchedulesStore;
  const owner = { accountId: newId('account'), workspaceId: newId('workspace'), agentId: newId('agent') };
  const page = { limit: 50, sortOrder: 'asc' as const };

  before(async () => {
    const database = await sharedTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    pool = new Pool({ connectionString: database.url, max: 2 });
    await dataSource.query(`INSERT INTO accounts (id, account_id, name, webhook_signing_secret) VALUES ($1, $1, 'acme', 'secret')`, [owner.accountId]);
    await dataSource.query(`INSERT INTO workspaces (id, account_id, name, status) VALUES ($1, $2, $1, 'STATUS_ENABLED')`, [owner.workspaceId, owner.accountId]);
    store = createSchedulesStore(dataSource);
  });

  after(async () => {
    await pool?.end();
    await dataSource?.destroy();
  });

  /** Runs the projector as the runtime does: on one raw pg connection, inside a transaction; answers how many statements it sent. */
  async function project(changes: Array<{ actorId: string; change: ScheduleChange }>): Promise<number> {
    const client = await pool.connect();
    let statements = 0;
    try {
      await client.query('BEGIN');
      const sql: SqlRunner = {
        query: async <Row>(text: string, parameters?: unknown[]) => {
          statements += 1;
          return (await client.query(text, parameters)).rows as Row[];
        },
      };
      await store.project(sql, changes);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
    return statements;
  }

  const changes = (records: ScheduleRecord[]) => records.map((schedule) => ({ actorId: schedule.id, change: { type: 'schedule' as const, schedule } }));

  function schedule(overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
    return {
      id: newId('schedule'), ...owner, profileId: 'prof_seed', name: 'morning-report', externalId: null, labels: {}, bundleKey: null,
      spec: {
        initialMessage: 'Write the morning report',
        schedule: { calendars: [{ hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] }], timezone: 'Europe/Berlin' },
        overlapPolicy: 'OVERLAP_POLICY_SKIP', status: 'AGENT_SCHEDULE_STATUS_ACTIVE', catchupWindow: '1m',
      },
      info: { ...initialScheduleInfo(), nextFireAt: '2026-03-30T07:00:00.000Z' },
      createdAt: '2026-03-27T10:00:00.000Z', updatedAt: '2026-03-27T10:00:00.000Z', revision: 1,
      ...overrides,
    };
  }
  const withStatus = (record: ScheduleRecord, status: ScheduleRecord['spec']['status'], revision: number): ScheduleRecord =>
    ({ ...record, spec: { ...record.spec, status }, revision });

  describe('project', () => {
    it('inserts a schedule and replaces it with a higher revision', async () => {
      const first = schedule({ externalId: 'report-1', labels: { team: 'ops' }, bundleKey: 'ops-bundle', spec: { ...schedule().spec, data: { region: 'emea' }, variationId: 'agentvar_x' } });
      await project(changes([first]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, first.id), first);
      const fired: ScheduleRecord = {
        ...withStatus(first, 'AGENT_SCHEDULE_STATUS_PAUSED', 2), name: 'renamed',
        info: { nextFireAt: null, lastFiredAt: '2026-03-30T07:00:00.000Z', lastObjectiveId: 'obj_x', fireCount: 1, skipCount: 2, lastError: 'model disabled' },
        updatedAt: '2026-03-30T07:00:00.123Z',
      };
      await project(changes([fired]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, first.id), fired);
      const [row] = await dataSource.query('SELECT status FROM agent_schedules WHERE id = $1', [first.id]);
      assert.equal(row.status, 'AGENT_SCHEDULE_STATUS_PAUSED', 'the status column follows spec.status');
    });

    it('ignores a change whose revision is not newer than the stored one', async () => {
      const newer = withStatus(schedule(), 'AGENT_SCHEDULE_STATUS_PAUSED', 3);
      await project(changes([newer]));
      await project(changes([{ ...newer, revision: 2, name: 'older' }]));
      await project(changes([{ ...newer, revision: 3, name: 'same revision' }]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, newer.id), newer);
    });

    it('keeps the last change of each id within one call, in one statement', async () => {
      const a = schedule();
      const b = schedule();
      const all = changes([
        a, b, withStatus(a, 'AGENT_SCHEDULE_STATUS_PAUSED', 2), withStatus(b, 'AGENT_SCHEDULE_STATUS_ARCHIVED', 2),
        withStatus(a, 'AGENT_SCHEDULE_STATUS_ACTIVE', 3), { ...withStatus(a, 'AGENT_SCHEDULE_STATUS_ARCHIVED', 1), name: 'stale in the batch' },
      ]);
      assert.equal(await project(all), 1, 'one statement for the whole call');
      const stored = [await store.get(owner.workspaceId, owner.agentId, a.id), await store.get(owner.workspaceId, owner.agentId, b.id)];
      assert.deepEqual(stored.map((row) => [row!.spec.status, row!.revision, row!.name]), [
        ['AGENT_SCHEDULE_STATUS_ACTIVE', 3, 'morning-report'],
        ['AGENT_SCHEDULE_STATUS_ARCHIVED', 2, 'morning-report'],
      ]);
    });

    it('sends nothing for an empty call', async () => {
      assert.equal(await project([]), 0);
    });

    it('fails on a change type it does not know', async () => {
      const unknown = { actorId: 'x', change: { type: 'objective', schedule: schedule() } as unknown as ScheduleChange };
      await assert.rejects(project([unknown]), /schedules projector: unknown change type objective/);
    });
  });

  describe('reads', () => {
    it("answers null for another agent's or workspace's schedule", async () => {
      const row = schedule();
      await project(changes([row]));
      assert.equal(await store.get(owner.workspaceId, newId('agent'), row.id), null);
      assert.equal(await store.get(newId('workspace'), owner.agentId, row.id), null);
      assert.equal(await store.get(owner.workspaceId, owner.agentId, newId('schedule')), null);
    });

    it('lists in id order both ways, limit + 1 rows, filtered by status, labels and name prefix', async () => {
      const agent = { ...owner, agentId: newId('agent') };
      const rows = [
        schedule({ ...agent, name: 'alpha', labels: { tier: 'gold' } }),
        withStatus(schedule({ ...agent, name: 'beta' }), 'AGENT_SCHEDULE_STATUS_PAUSED', 1),
        schedule({ ...agent, name: 'gamma' }),
        withStatus(schedule({ ...agent, name: 'delta', labels: { tier: 'gold' } }), 'AGENT_SCHEDULE_STATUS_ARCHIVED', 1),
      ];
      await project(changes(rows));
      const names = async (filter: object, request: object = page) =>
        (await store.list(owner.workspaceId, agent.agentId, filter, { ...page, ...request })).map((row) => row.name);
      assert.deepEqual(await names({}), ['alpha', 'beta', 'gamma', 'delta']);
      assert.deepEqual(await names({}, { limit: 2 }), ['alpha', 'beta', 'gamma']);
      assert.deepEqual(await names({}, { limit: 2, sortOrder: 'desc', after: rows[3].id }), ['gamma', 'beta', 'alpha']);
      assert.deepEqual(await names({ status: 'AGENT_SCHEDULE_STATUS_ACTIVE' }), ['alpha', 'gamma']);
      assert.deepEqual(await names({ status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }), ['delta']);
      assert.deepEqual(await names({ labels: { tier: 'gold' } }), ['alpha', 'delta']);
      assert.deepEqual(await names({ prefix: 'be' }), ['beta']);
      assert.deepEqual(await names({ prefix: rows[2].id }), ['gamma']);
      assert.deepEqual(await store.list(newId('workspace'), agent.agentId, {}, page), []);
    });
  });

  describe('objectives (schedule_id, schedule_fire_time)', () => {
    const insertObjective = (scheduleId: string | null, fireTime: string | null) => dataSource.query(
      `INSERT INTO objectives (id, account_id, workspace_id, agent_id, variation_id, profile_id, status, info, schedule_id, schedule_fire_time)
       VALUES ($1, $2, $3, $4, 'agentvar_seed', 'prof_seed', 'OBJECTIVE_STATUS_RUNNING', '{}', $5, $6)`,
      [newId('objective'), owner.accountId, owner.workspaceId, owner.agentId, scheduleId, fireTime],
    );

    it('holds one objective per schedule and nominal fire time', async () => {
      const scheduleId = newId('schedule');
      await insertObjective(scheduleId, '2026-03-30T07:00:00Z');
      await insertObjective(scheduleId, '2026-03-31T07:00:00Z');
      await insertObjective(newId('schedule'), '2026-03-30T07:00:00Z');
      await assert.rejects(insertObjective(scheduleId, '2026-03-30T09:00:00+02:00'), (error: Error & { code?: string; constraint?: string }) => {
        assert.equal(error.code ?? (error as { driverError?: { code: string } }).driverError?.code, '23505');
        assert.match(error.message, /uq_objectives_schedule_fire_time/);
        return true;
      });
    });

    it('leaves objectives without a fire time, or of no schedule, unconstrained', async () => {
      const scheduleId = newId('schedule');
      await insertObjective(scheduleId, null);
      await insertObjective(scheduleId, null);
      await insertObjective(null, null);
      await insertObjective(null, null);
    });
  });
});
