// SchedulesStore over Postgres: the agent schedules read model (migration
// Schedules). The projector writes on the actor runtime's connection, inside
// the fenced transaction of a batch of turns: a call is ONE revision-guarded upsert
// (whole-row-projection.ts), one round trip whatever its size. The read by id
// is a prepared-when-possible statement (record-table.ts); the list pages
// through fetchPage like every other store.
import { In, Not, type DataSource } from 'typeorm';
import type { SchedulesStore } from '../../src/ports/schedules-store';
import type { ScheduleChange, ScheduleRecord } from '../../src/schedules/schedule-record';
import { ScheduleEntity, type ScheduleRow } from '../entities/schedule.entity';
import { fetchPage } from './list-query';
import { entityColumns, readRows, readStatement } from './record-table';
import { wholeRowProjection, type ProjectedColumns } from './whole-row-projection';

const ARCHIVED = 'AGENT_SCHEDULE_STATUS_ARCHIVED' as const;

/** Column name → json_to_recordset type, in the order of the INSERT. */
const COLUMNS: ProjectedColumns = [
  ['id', 'text'], ['account_id', 'text'], ['workspace_id', 'text'], ['agent_id', 'text'], ['profile_id', 'text'],
  ['name', 'text'], ['external_id', 'text'], ['labels', 'jsonb'], ['bundle_key', 'text'], ['spec', 'jsonb'],
  ['status', 'text'], ['info', 'jsonb'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'], ['revision', 'integer'],
];

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


function recordOf(row: ScheduleRow): ScheduleRecord {
  const { status: _status, ...rest } = row;
  return {
    ...rest,
    labels: row.labels ?? {},
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const projection = wholeRowProjection<ScheduleChange, ScheduleRecord>({
  table: 'agent_schedules',
  columns: COLUMNS,
  rowOf(change) {
    // A change this projector does not know must fail its turn, not vanish.
    if (change.type !== 'schedule') throw new Error(`schedules projector: unknown change type ${(change as { type: string }).type}`);
    return change.schedule;
  },
  columnsOf: rowOf,
});

/** The JSON array the projection writes (tests). */
export const projectionParameter = projection.parameter;

export function createSchedulesStore(dataSource: DataSource): SchedulesStore {
  const manager = dataSource.manager;
  const schedules = manager.getRepository(ScheduleEntity);
  const columns = entityColumns(manager, ScheduleEntity, 't');
  const byId = readStatement(`SELECT ${columns.json} AS r FROM agent_schedules t WHERE t.id = $1 AND t.workspace_id = $2 AND t.agent_id = $3`);

  return {
    projection: projection.projection,
    project: projection.project,

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

    // Deleting an agent archives these (src/agents): few rows, usually none.
    async listLiveOfAgent(workspaceId, agentId) {
      const rows = await schedules.find({ where: { workspaceId, agentId, status: Not(ARCHIVED) }, order: { id: 'ASC' } });
      return rows.map(recordOf);
    },
  };
}
