// SchedulesStore over Postgres: the agent schedules read model (migration
// Schedules). The projector writes on the actor runtime's connection, inside
// the fenced transaction of a batch of turns: a call is ONE upsert fed one JSON
// array (json_to_recordset), one round trip whatever its size. The read by id
// is a prepared-when-possible statement (record-table.ts); the list pages
// through fetchPage like every other store.
import { In, Not, type DataSource } from 'typeorm';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { SchedulesStore } from '../../src/ports/schedules-store';
import type { ScheduleChange, ScheduleRecord } from '../../src/schedules/schedule-record';
import { ScheduleEntity, type ScheduleRow } from '../entities/schedule.entity';
import { translateDriverError } from './driver-errors';
import { fetchPage } from './list-query';
import { entityColumns, readRows, readStatement } from './record-table';

const ARCHIVED = 'AGENT_SCHEDULE_STATUS_ARCHIVED' as const;

/** Column name → json_to_recordset type, in the order of the INSERT. */
const COLUMNS: ReadonlyArray<[column: string, type: string]> = [
  ['id', 'text'], ['account_id', 'text'], ['workspace_id', 'text'], ['agent_id', 'text'], ['profile_id', 'text'],
  ['name', 'text'], ['external_id', 'text'], ['labels', 'jsonb'], ['bundle_key', 'text'], ['spec', 'jsonb'],
  ['status', 'text'], ['info', 'jsonb'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'], ['revision', 'integer'],
];

/*
 * The one projection statement: $1 holds the rows, one per id. A stored row
 * is replaced only by a higher revision, so a turn projected again, or an
 * older write landing late, changes nothing.
 */
const PROJECT = `
  INSERT INTO agent_schedules AS s (${COLUMNS.map(([column]) => column).join(', ')})
  SELECT ${COLUMNS.map(([column]) => `r.${column}`).join(', ')}
  FROM json_to_recordset($1::json) AS r(${COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')})
  ON CONFLICT (id) DO UPDATE SET ${COLUMNS.filter(([column]) => column !== 'id').map(([column]) => `${column} = excluded.${column}`).join(', ')}
    WHERE s.revision < excluded.revision`;

function rowOf(schedule: ScheduleRecord): Record<string, unknown> {
  return {
    id: schedule.id,
    account_id: schedule.accountId,
    workspace_id: schedule.workspaceId,
    agent_id: schedule.agentId,
    profile_id: schedule.profileId,
    name: schedule.name,
    external_id: schedule.externalId,
    labels: schedule.labels ?? {},
    bundle_key: schedule.bundleKey,
    spec: schedule.spec,
    // A column of its own for the list filter and the index; the spec keeps the truth.
    status: schedule.spec.status,
    info: schedule.info,
    created_at: schedule.createdAt,
    updated_at: schedule.updatedAt,
    revision: schedule.revision,
  };
}

/** The JSON array of PROJECT: the newest change of each schedule (ON CONFLICT may touch a row once per statement). */
export function projectionParameter(changes: ReadonlyArray<{ change: ScheduleChange }>): string {
  const newest = new Map<string, ScheduleRecord>();
  for (const { change } of changes) {
    // A change this projector does not know must fail its turn, not vanish.
    if (change.type !== 'schedule') throw new Error(`schedules projector: unknown change type ${(change as { type: string }).type}`);
    const previous = newest.get(change.schedule.id);
    // Changes come in turn order: a later one replaces an earlier one unless it is older.
    if (!previous || previous.revision <= change.schedule.revision) newest.set(change.schedule.id, change.schedule);
  }
  return JSON.stringify([...newest.values()].map(rowOf));
}

function recordOf(row: ScheduleRow): ScheduleRecord {
  const { status: _status, ...rest } = row;
  return {
    ...rest,
    labels: row.labels ?? {},
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function createSchedulesStore(dataSource: DataSource): SchedulesStore {
  const manager = dataSource.manager;
  const schedules = manager.getRepository(ScheduleEntity);
  const columns = entityColumns(manager, ScheduleEntity, 't');
  const byId = readStatement(`SELECT ${columns.json} AS r FROM agent_schedules t WHERE t.id = $1 AND t.workspace_id = $2 AND t.agent_id = $3`);

  return {
    projection(changes) {
      return changes.length ? { statements: [PROJECT], parameters: [projectionParameter(changes)] } : null;
    },

    async project(sql: SqlRunner, changes) {
      if (!changes.length) return;
      try {
        await sql.query(PROJECT, [projectionParameter(changes)]);
      } catch (error) {
        throw translateDriverError(error);
      }
    },

    async get(workspaceId, agentId, id) {
      const row = (await readRows(manager, byId, [id, workspaceId, agentId]))[0];
      const decoded = row ? columns.decode(row.r) : null;
      return decoded ? recordOf(decoded) : null;
    },

    async list(workspaceId, agentId, filter, page) {
      const query = schedules.createQueryBuilder('s')
        .where('s.workspace_id = :workspaceId', { workspaceId })
        .andWhere('s.agent_id = :agentId', { agentId });
      if (filter.status !== undefined) query.andWhere('s.status = :status', { status: filter.status });
      const rows = await fetchPage(query, 's', page, filter);
      return rows.map(recordOf);
    },

    // Bundle reads (src/bundles): few rows, read outside the bundle's
    // transaction (the actor writes the table, never that transaction).
    async listOfBundle(workspaceId, bundleKey) {
      const rows = await schedules.find({ where: { workspaceId, bundleKey, status: Not(ARCHIVED) }, order: { id: 'ASC' } });
      return rows.map(recordOf);
    },

    async listNamed(workspaceId, agentIds, names) {
      if (!agentIds.length || !names.length) return [];
      const rows = await schedules.find({
        where: { workspaceId, agentId: In([...agentIds]), name: In([...names]), status: Not(ARCHIVED) },
        order: { id: 'ASC' },
      });
      return rows.map(recordOf);
    },
  };
}
