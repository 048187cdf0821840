// ObjectivesStore over Postgres: the objectives read model (migration
// Objectives). The projector writes on the actor runtime's connection, inside
// the fenced transaction of a batch of turns, and is on the hot path of every
// objective: all the changes of one call go out as ONE statement of five
// data-modifying CTEs (rows created, rows updated, events, and the usage
// roll-ups' two upserts, usage.store.ts), each fed one JSON array
// (json_to_recordset), so a call costs one round trip whatever its size.
// Reads by id and of events are raw, prepared-when-possible statements
// (record-table.ts); lists page through fetchPage like every other store.
import type { DataSource, EntityManager } from 'typeorm';
import { objectiveInfoOf, type ObjectiveChange, type ObjectiveCreatedRow, type ObjectiveInfoChange } from '../../src/objectives/objective-events';
import { ERASED, initialObjectiveState, type ObjectiveEventRecord, type ObjectiveStatus } from '../../src/objectives/objective-state';
import { eraseEventContent } from '../../src/objectives/objective-erasure';
import type { ObjectiveRecord, ObjectivesStore, OpenObjectiveCounts, ProjectionConnection } from '../../src/ports/objectives-store';
import { storedObjectiveMetadata } from '../../src/objectives/objective-mappers';
import { ObjectiveEntity, ObjectiveEventEntity, type ObjectiveRow } from '../entities/objective.entity';
import { registerUniqueMessage, translateDriverError } from './driver-errors';
import { usageRollupParameters, usageRollupStatements } from './usage.store';
import { fetchPage } from './list-query';
import { entityColumns, readRows, readStatement } from './record-table';

registerUniqueMessage('uq_objectives_start_key', 'an objective was already created with this Idempotency-Key');

/*
 * The one projection statement. $1: rows to create (objective_created, with
 * the last info of the same call merged in), $2: info updates of rows created
 * by earlier calls (the last per objective), $3: event rows, $4 and $5: what
 * the call adds to the usage roll-ups (usage.store.ts; empty arrays in most
 * calls, which cost the statement next to nothing).
 * - A created row that already exists (the same turn projected again) only
 *   takes the info, and only when not older than what is stored.
 * - An info update is skipped when the stored sequence is later (`<=`: a status
 *   change that records no event keeps the sequence and must still apply).
 * - An event already stored (by id, or by objective and sequence) is skipped.
 * The CTEs see the same snapshot, which is why no objective appears in both
 * $1 and $2; the events' foreign key is checked at the end of the statement,
 * after the rows of $1 exist.
 * - The update names its ids a second time, as an array: $2 is estimated at
 *   100 rows whatever it holds, so the generic plan of a statement prepared
 *   while the table was small joined it by hash with the whole primary key
 *   index (0.6 ms of a 1.1 ms turn statement with 1,700 objectives, and
 *   growing with the table); the array gives the planner an index condition.
 */
const CREATE_AND_UPDATE_STATEMENTS = [`
    INSERT INTO objectives AS o (id, account_id, workspace_id, agent_id, variation_id, profile_id, external_id, labels, data,
      initial_message, episodic_key, memory_layer_ids, tenant_id, subject_id, parent_objective_id, schedule_id, schedule_fire_time,
      status, info, sequence, start_key, widget_session_id, created_at, updated_at)
    SELECT r.id, r.account_id, r.workspace_id, r.agent_id, r.variation_id, r.profile_id, r.external_id, coalesce(r.labels, '{}'), r.data,
      r.initial_message, r.episodic_key, coalesce(r.memory_layer_ids, '[]'), r.tenant_id, r.subject_id, r.parent_objective_id, r.schedule_id, r.schedule_fire_time,
      r.info->>'status', r.info, r.sequence, r.start_key, r.widget_session_id, r.created_at, now()
    FROM json_to_recordset($1::json) AS r(id text, account_id text, workspace_id text, agent_id text, variation_id text, profile_id text,
      external_id text, labels jsonb, data jsonb, initial_message text, episodic_key text, memory_layer_ids jsonb, tenant_id text,
      subject_id text, parent_objective_id text, schedule_id text, schedule_fire_time timestamptz, info jsonb, sequence integer, start_key text, widget_session_id text,
      created_at timestamptz)
    ON CONFLICT (id) DO UPDATE SET info = excluded.info, status = excluded.status, sequence = excluded.sequence, updated_at = excluded.updated_at
      WHERE o.sequence <= excluded.sequence`, `
    UPDATE objectives o SET info = r.info, status = r.info->>'status', sequence = r.sequence, updated_at = now()
    FROM json_to_recordset($2::json) AS r(id text, sequence integer, info jsonb)
    WHERE o.id = r.id AND o.sequence <= r.sequence
      AND o.id = ANY(ARRAY(SELECT k.id FROM json_to_recordset($2::json) AS k(id text)))`];
/**
 * An event row keeps its webhook envelope without `data.objectiveEvent.data`,
 * which is the row's `data` with its type: the content, often most of the
 * event, is stored once. EVENT_ENVELOPE_SQL puts it back.
 */
const STORED_ENVELOPE_PATH = `'{data,objectiveEvent,data}'`;
/** The whole webhook envelope of the objective_events row `e`, as published. */
export const EVENT_ENVELOPE_SQL = `jsonb_set(e.envelope, ${STORED_ENVELOPE_PATH}, jsonb_build_object('type', 'OBJECTIVE_EVENT_TYPE_' || e.type) || e.data)`;

/** The event rows with their envelopes in $3 (the projector's own statement). */
const INSERT_EVENTS = `
    INSERT INTO objective_events (id, objective_id, workspace_id, sequence, type, created_at, data, webhook_type, envelope)
    SELECT r.id, r.objective_id, r.workspace_id, r.sequence, r.type, r.created_at, r.data, r.webhook_type, r.envelope #- ${STORED_ENVELOPE_PATH}
    FROM json_to_recordset($3::json) AS r(id text, objective_id text, workspace_id text, sequence integer, type text,
      created_at timestamptz, data jsonb, webhook_type text, envelope jsonb)
    ON CONFLICT DO NOTHING`;
/**
 * In the batch statement: the envelope is the payload of the event's outbox
 * row, written by the same statement (turn_outbox), so it is not sent twice.
 * A row without one fails the statement (NOT NULL), and the batch then goes
 * through the projector, which sends the envelopes.
 */
const INSERT_EVENTS_FROM_OUTBOX = `
    INSERT INTO objective_events (id, objective_id, workspace_id, sequence, type, created_at, data, webhook_type, envelope)
    SELECT r.id, r.objective_id, r.workspace_id, r.sequence, r.type, r.created_at, r.data, r.webhook_type, o.payload #- ${STORED_ENVELOPE_PATH}
    FROM json_to_recordset($3::json) AS r(id text, objective_id text, workspace_id text, sequence integer, type text,
      created_at timestamptz, data jsonb, webhook_type text)
    LEFT JOIN turn_outbox o ON o.id = r.id
    ON CONFLICT DO NOTHING`;
/** The published envelopes of event rows by id (their outbox rows keep none): one primary key probe each. */
const PROJECTED_ENVELOPES = `SELECT e.id, ${EVENT_ENVELOPE_SQL} AS payload FROM objective_events e WHERE e.id = ANY($1::text[])`;
/** $4 and $5: the usage roll-ups' rows and keys (usageRollupParameters). */
const USAGE_ROLLUP_STATEMENTS = usageRollupStatements('$4', '$5');
/**
 * The roll-ups first: Postgres runs a statement's data-modifying CTEs in the
 * reverse of their order, so they run after the rows and events, and the
 * locks they take on rows other batches write too (the same agent's hour, say)
 * are held the least time before the commit.
 */
const PROJECTION_STATEMENTS = [...USAGE_ROLLUP_STATEMENTS, ...CREATE_AND_UPDATE_STATEMENTS, INSERT_EVENTS_FROM_OUTBOX];
const PROJECT = `WITH rollups AS (${USAGE_ROLLUP_STATEMENTS[0]}), rollup_keys AS (${USAGE_ROLLUP_STATEMENTS[1]}),
  created AS (${CREATE_AND_UPDATE_STATEMENTS[0]}), updated AS (${CREATE_AND_UPDATE_STATEMENTS[1]}), events AS (${INSERT_EVENTS}) SELECT 1`;

/**
 * Objectives of an agent not in a terminal state. The predicate is the partial
 * index ix_objectives_agent_running's, word for word.
 */
const COUNT_RUNNING = readStatement(
  `SELECT count(*)::int AS count FROM objectives
   WHERE agent_id = $1 AND status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')`,
);

/**
 * openCounts in one round trip: the objectives not in a final state by status
 * (the partial index ix_objectives_agent_running holds exactly those: its
 * predicate word for word), then the tool calls the ones AWAITING_APPROVAL
 * wait on (their rows, found through the same index). Its cost grows with the
 * objectives running or waiting, never with the finished ones.
 */
const OPEN_COUNTS = readStatement(
  `SELECT status AS key, count(*)::int AS count FROM objectives
   WHERE status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')
   GROUP BY status
   UNION ALL
   SELECT NULL, coalesce(sum(jsonb_array_length(info -> 'pendingToolCallIds')), 0)::int FROM objectives
   WHERE status = 'OBJECTIVE_STATUS_AWAITING_APPROVAL'`,
);

/** countRunningByAgent on `manager` (the agents store's delete check runs it in its own transaction). */
export async function countRunningObjectives(manager: EntityManager, agentId: string): Promise<number> {
  const rows = await readRows(manager, COUNT_RUNNING, [agentId]);
  return Number(rows[0]?.count ?? 0);
}

/** The info of a row created without an info change in the same call (the actor always sends one). */
function pendingInfo(start: ObjectiveCreatedRow): ObjectiveInfoChange {
  return { ...objectiveInfoOf(initialObjectiveState(start.metadata.id)), createdAt: start.metadata.createdAt };
}

type CreatedChange = Extract<ObjectiveChange, { type: 'objective_created' }>;
type EventChange = Extract<ObjectiveChange, { type: 'objective_event' }>;

function createdRowOf(change: CreatedChange, info: ObjectiveInfoChange): Record<string, unknown> {
  const { metadata, spec, startKey, widgetSessionId } = change.start;
  return {
    id: change.objectiveId,
    account_id: change.accountId,
    workspace_id: change.workspaceId,
    agent_id: spec.agentId,
    variation_id: spec.variationId,
    profile_id: metadata.profileId || null,
    external_id: metadata.externalId ?? null,
    labels: metadata.labels ?? {},
    data: spec.data ?? null,
    initial_message: spec.initialMessage,
    episodic_key: spec.episodicKey,
    memory_layer_ids: spec.memoryLayerIds,
    tenant_id: spec.tenantId,
    subject_id: spec.subjectId,
    parent_objective_id: spec.parentObjectiveId,
    schedule_id: spec.scheduleId,
    schedule_fire_time: spec.scheduleFireTime ?? null,
    info,
    sequence: info.sequence,
    start_key: startKey,
    widget_session_id: widgetSessionId ?? null,
    created_at: metadata.createdAt,
  };
}

function eventRowOf(change: EventChange, withEnvelope: boolean): Record<string, unknown> {
  const { record } = change;
  const row: Record<string, unknown> = {
    id: record.id,
    objective_id: change.objectiveId,
    workspace_id: change.workspaceId,
    sequence: record.sequence,
    type: record.type,
    created_at: record.createdAt,
    data: record.data,
    webhook_type: change.webhookType,
  };
  if (withEnvelope) row.envelope = change.envelope;
  return row;
}

/**
 * The five JSON arrays of PROJECT: created rows (with their last info), info
 * updates (the last per objective), event rows (with their envelopes unless
 * `fromOutbox`: the batch statement takes them from its outbox rows), the
 * usage roll-ups' rows and keys.
 */
export function projectionParameters(changes: ReadonlyArray<{ change: ObjectiveChange }>, options: { fromOutbox?: boolean } = {}): [string, string, string, string, string] {
  const created = new Map<string, CreatedChange>();
  const infos = new Map<string, ObjectiveInfoChange>();
  const events: Array<Record<string, unknown>> = [];
  for (const { change } of changes) {
    switch (change.type) {
      case 'objective_created':
        if (!created.has(change.objectiveId)) created.set(change.objectiveId, change);
        break;
      case 'objective': {
        // Changes come in turn order: the last info of an objective is its newest.
        const previous = infos.get(change.objectiveId);
        if (!previous || previous.sequence <= change.info.sequence) infos.set(change.objectiveId, change.info);
        break;
      }
      case 'objective_event':
        events.push(eventRowOf(change, !options.fromOutbox));
        break;
      case 'objective_erased':
        // Written by eraseObjectives after the statement (rare; not on the hot path).
        break;
      case 'objective_usage':
        // Summed per roll-up row below (usageRollupParameters).
        break;
      default:
        // A change this projector does not know must fail its turn, not vanish.
        throw new Error(`objectives projector: unknown change type ${(change as { type: string }).type}`);
    }
  }
  const createdRows = [...created.values()].map((change) => {
    const info = infos.get(change.objectiveId) ?? pendingInfo(change.start);
    infos.delete(change.objectiveId);
    return createdRowOf(change, info);
  });
  const updates = [...infos].map(([id, info]) => ({ id, sequence: info.sequence, info }));
  return [JSON.stringify(createdRows), JSON.stringify(updates), JSON.stringify(events), ...usageRollupParameters(changes)];
}

export function objectiveRecordOf(row: ObjectiveRow): ObjectiveRecord {
  return {
    id: row.id,
    accountId: row.accountId,
    workspaceId: row.workspaceId,
    metadata: storedObjectiveMetadata(row),
    spec: {
      agentId: row.agentId,
      variationId: row.variationId,
      data: row.data ?? null,
      initialMessage: row.initialMessage,
      episodicKey: row.episodicKey,
      memoryLayerIds: row.memoryLayerIds ?? [],
      tenantId: row.tenantId,
      subjectId: row.subjectId,
      parentObjectiveId: row.parentObjectiveId,
      scheduleId: row.scheduleId,
      ...(row.scheduleFireTime ? { scheduleFireTime: row.scheduleFireTime.toISOString() } : {}),
    },
    info: row.info,
    startKey: row.startKey,
    widgetSessionId: row.widgetSessionId ?? null,
    updatedAt: row.updatedAt,
  };
}

/**
 * The row side of `objective_erased`: the spec's content and every event's
 * content fields become `[erased]` (eraseEventContent decides which fields);
 * ids, kinds, sequences and usage stay. Events the same call inserted are
 * already free of content (the actor erased its state before recording
 * them); passing them through again changes nothing.
 */
async function eraseObjectives(connection: ProjectionConnection, objectiveIds: string[]): Promise<void> {
  await connection.query(
    `UPDATE objectives SET data = CASE WHEN data IS NULL OR jsonb_typeof(data) = 'null' THEN data ELSE to_jsonb($2::text) END,
       initial_message = CASE WHEN initial_message IS NULL THEN NULL ELSE $2 END, updated_at = now()
     WHERE id = ANY($1::text[])`,
    [objectiveIds, ERASED],
  );
  const rows = (await connection.query('SELECT id, data, envelope FROM objective_events WHERE objective_id = ANY($1::text[])', [objectiveIds])) as Array<{
    id: string; data: unknown; envelope: unknown;
  }>;
  if (!rows.length) return;
  const erased = rows.map((row) => ({ id: row.id, data: eraseEventContent(row.data), envelope: eraseEventContent(row.envelope) }));
  await connection.query(
    `UPDATE objective_events e SET data = r.data, envelope = r.envelope
     FROM json_to_recordset($1::json) AS r(id text, data jsonb, envelope jsonb) WHERE e.id = r.id`,
    [JSON.stringify(erased)],
  );
}

export function createObjectivesStore(dataSource: DataSource): ObjectivesStore {
  const manager = dataSource.manager;
  const objectives = manager.getRepository(ObjectiveEntity);
  const columns = entityColumns(manager, ObjectiveEntity, 't');
  const eventColumns = entityColumns(manager, ObjectiveEventEntity, 'e', ['id', 'objectiveId', 'sequence', 'type', 'createdAt', 'data']);
  const byId = readStatement(`SELECT ${columns.json} AS r FROM objectives t WHERE t.id = $1`);
  const byStartKey = readStatement(`SELECT ${columns.json} AS r FROM objectives t WHERE t.workspace_id = $1 AND t.start_key = $2`);
  const eventsAfter = readStatement(
    // The context window id and the trace id are in the envelope the row keeps (absent in rows written before
    // windows existed, and without tracing).
    `SELECT ${eventColumns.json} AS r, e.envelope #>> '{data,objectiveEvent,contextWindowId}' AS w, e.envelope #>> '{data,objectiveEvent,traceId}' AS t
     FROM objective_events e WHERE e.objective_id = $1 AND e.sequence > $2 ORDER BY e.sequence LIMIT $3`,
  );

  async function readOne(statement: ReturnType<typeof readStatement>, values: unknown[]): Promise<ObjectiveRecord | null> {
    const row = (await readRows(manager, statement, values))[0];
    const decoded = row ? columns.decode(row.r) : null;
    return decoded ? objectiveRecordOf(decoded) : null;
  }

  return {
    projection(changes) {
      // An erasure rewrites stored rows after the statement: it takes the projector's round trips.
      if (!changes.length || changes.some(({ change }) => change.type === 'objective_erased')) return null;
      return { statements: PROJECTION_STATEMENTS, parameters: projectionParameters(changes, { fromOutbox: true }) };
    },

    async project(connection: ProjectionConnection, changes) {
      if (!changes.length) return;
      try {
        await connection.query(PROJECT, projectionParameters(changes));
        const erased = changes.flatMap(({ change }) => (change.type === 'objective_erased' ? [change.objectiveId] : []));
        if (erased.length) await eraseObjectives(connection, erased);
      } catch (error) {
        throw translateDriverError(error);
      }
    },

    async projectedEnvelopes(connection, eventIds) {
      if (!eventIds.length) return [];
      return (await connection.query(PROJECTED_ENVELOPES, [eventIds])) as Array<{ id: string; payload: unknown }>;
    },

    findById: (id) => readOne(byId, [id]),

    findByStartKey: (workspaceId, startKey) => readOne(byStartKey, [workspaceId, startKey]),

    async list(workspaceId, page, filter) {
      const query = objectives.createQueryBuilder('o').where('o.workspace_id = :workspaceId', { workspaceId });
      const equal: Array<[column: string, value: string | undefined]> = [
        ['agent_id', filter.agentId],
        ['status', filter.status],
        ['tenant_id', filter.tenantId],
        ['subject_id', filter.subjectId],
        ['schedule_id', filter.scheduleId],
        ['parent_objective_id', filter.parentObjectiveId],
        ['external_id', filter.externalId],
      ];
      for (const [column, value] of equal) {
        if (value !== undefined) query.andWhere(`o.${column} = :${column}`, { [column]: value });
      }
      // Objectives have no name: a prefix matches the id.
      const rows = await fetchPage(query, 'o', page, filter, 'id');
      return rows.map(objectiveRecordOf);
    },

    async listEvents(objectiveId, afterSequence, limit) {
      const rows = await readRows(manager, eventsAfter, [objectiveId, afterSequence, limit]);
      return rows.map((row): ObjectiveEventRecord => {
        const event = eventColumns.decode(row.r)!;
        return {
          id: event.id, objectiveId: event.objectiveId, sequence: event.sequence, type: event.type, createdAt: event.createdAt.toISOString(), data: event.data,
          ...(typeof row.w === 'string' ? { contextWindowId: row.w } : {}),
          ...(typeof row.t === 'string' ? { traceId: row.t } : {}),
        };
      });
    },

    countRunningByAgent: (agentId) => countRunningObjectives(manager, agentId),

    async openCounts() {
      const counts: OpenObjectiveCounts = { byStatus: {}, toolCallsAwaitingApproval: 0 };
      for (const row of await readRows(manager, OPEN_COUNTS, [])) {
        if (row.key === null) counts.toolCallsAwaitingApproval = Number(row.count);
        else counts.byStatus[row.key as ObjectiveStatus] = Number(row.count);
      }
      return counts;
    },

    async namedBy({ workspaceId, tenantId, subjectIds }, { after, limit }) {
      if (tenantId === undefined && !subjectIds.length) return [];
      const rows: Array<{ id: string; account_id: string; workspace_id: string; agent_id: string }> = await manager.query(
        `SELECT id, account_id, workspace_id, agent_id FROM objectives
          WHERE workspace_id = $1 AND (tenant_id = $2 OR subject_id = ANY($3::text[])) AND ($4::text IS NULL OR id > $4)
          ORDER BY id LIMIT $5`,
        [workspaceId, tenantId ?? null, subjectIds, after, limit],
      );
      return rows.map((row) => ({ objectiveId: row.id, accountId: row.account_id, workspaceId: row.workspace_id, agentId: row.agent_id }));
    },
  };
}
