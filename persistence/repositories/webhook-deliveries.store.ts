// WebhookDeliveriesStore over Postgres: the webhook deliveries read model
// (migration WebhookDeliveries). The projector writes on the actor runtime's
// connection, inside the fenced transaction of a batch of turns, and runs for
// every attempt of every delivery: a call is ONE revision-guarded upsert
// (whole-row-projection.ts), one round trip whatever its size. Reads by id and of
// an event's envelope are prepared-when-possible statements (record-table.ts);
// the list pages through fetchPage like every other store.
import type { DataSource } from 'typeorm';
import type { WebhookDeliveriesStore } from '../../src/ports/webhook-deliveries-store';
import type { WebhookDeliveryChange, WebhookDeliveryRecord } from '../../src/webhooks/webhook-delivery';
import { WebhookDeliveryEntity, type WebhookDeliveryRow } from '../entities/webhook-delivery.entity';
import { fetchPage } from './list-query';
import { EVENT_ENVELOPE_SQL } from './objectives.store';
import { entityColumns, readRows, readStatement } from './record-table';
import { wholeRowProjection, type ProjectedColumns } from './whole-row-projection';

/** Column name → json_to_recordset type, in the order of the INSERT. */
const COLUMNS: ProjectedColumns = [
  ['id', 'text'], ['account_id', 'text'], ['workspace_id', 'text'], ['agent_id', 'text'], ['profile_id', 'text'],
  ['external_id', 'text'], ['labels', 'jsonb'], ['objective_id', 'text'], ['objective_event_id', 'text'], ['sequence', 'integer'],
  ['event_type', 'text'], ['endpoint_id', 'text'], ['webhook_url', 'text'], ['status', 'text'], ['attempt_count', 'integer'],
  ['last_attempt_at', 'timestamptz'], ['next_attempt_at', 'timestamptz'], ['latency_ms', 'integer'], ['http_status_code', 'integer'],
  ['response_content_length', 'bigint'], ['response_headers', 'jsonb'], ['error_message', 'text'], ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'], ['revision', 'integer'],
];

const EVENT_ENVELOPE = readStatement(`SELECT ${EVENT_ENVELOPE_SQL} AS envelope FROM objective_events e WHERE e.id = $1`);

function rowOf(delivery: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    id: delivery.id,
    account_id: delivery.accountId,
    workspace_id: delivery.workspaceId,
    agent_id: delivery.agentId,
    profile_id: delivery.profileId,
    external_id: delivery.externalId,
    labels: delivery.labels ?? {},
    objective_id: delivery.objectiveId,
    objective_event_id: delivery.objectiveEventId,
    sequence: delivery.sequence,
    event_type: delivery.eventType,
    endpoint_id: delivery.endpointId,
    webhook_url: delivery.webhookUrl,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    last_attempt_at: delivery.lastAttemptAt,
    next_attempt_at: delivery.nextAttemptAt,
    latency_ms: delivery.latencyMs,
    http_status_code: delivery.httpStatusCode,
    response_content_length: delivery.responseContentLength,
    response_headers: delivery.responseHeaders,
    error_message: delivery.errorMessage,
    created_at: delivery.createdAt,
    updated_at: delivery.updatedAt,
    revision: delivery.revision,
  };
}


const iso = (value: Date | null): string | null => (value ? value.toISOString() : null);

function recordOf(row: WebhookDeliveryRow): WebhookDeliveryRecord {
  return {
    ...row,
    labels: row.labels ?? {},
    lastAttemptAt: iso(row.lastAttemptAt),
    nextAttemptAt: iso(row.nextAttemptAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The envelope as the actor first sent it: `{timestamp, type, data}` first (jsonb keeps keys in its own order). */
function envelopeJson(envelope: Record<string, unknown>): string {
  const { timestamp, type, data, ...rest } = envelope;
  return JSON.stringify({ timestamp, type, data, ...rest });
}

const projection = wholeRowProjection<WebhookDeliveryChange, WebhookDeliveryRecord>({
  table: 'webhook_deliveries',
  columns: COLUMNS,
  rowOf(change) {
    // A change this projector does not know must fail its turn, not vanish.
    if (change.type !== 'webhook_delivery') throw new Error(`webhook deliveries projector: unknown change type ${(change as { type: string }).type}`);
    return change.delivery;
  },
  columnsOf: rowOf,
});

/** The JSON array the projection writes (tests). */
export const projectionParameter = projection.parameter;

export function createWebhookDeliveriesStore(dataSource: DataSource): WebhookDeliveriesStore {
  const manager = dataSource.manager;
  const deliveries = manager.getRepository(WebhookDeliveryEntity);
  const columns = entityColumns(manager, WebhookDeliveryEntity, 't');
  const byId = readStatement(`SELECT ${columns.json} AS r FROM webhook_deliveries t WHERE t.id = $1 AND t.workspace_id = $2 AND t.agent_id = $3`);

  return {
    projection: projection.projection,
    project: projection.project,

    async get(workspaceId, agentId, id) {
      const row = (await readRows(manager, byId, [id, workspaceId, agentId]))[0];
      const decoded = row ? columns.decode(row.r) : null;
      return decoded ? recordOf(decoded) : null;
    },

    async list(workspaceId, agentId, filter, page) {
      const query = deliveries.createQueryBuilder('d')
        .where('d.workspace_id = :workspaceId', { workspaceId })
        .andWhere('d.agent_id = :agentId', { agentId });
      const equal: Array<[column: string, value: string | undefined]> = [
        ['status', filter.status],
        ['objective_id', filter.objectiveId],
        ['event_type', filter.eventType],
      ];
      for (const [column, value] of equal) {
        if (value !== undefined) query.andWhere(`d.${column} = :${column}`, { [column]: value });
      }
      // Deliveries have no name: a prefix matches the id.
      const rows = await fetchPage(query, 'd', page, filter, 'id');
      return rows.map(recordOf);
    },

    async endpointIdsOf(objectiveIds) {
      if (!objectiveIds.length) return [];
      const rows: Array<{ endpoint_id: string }> = await manager.query(
        'SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE objective_id = ANY($1::text[]) ORDER BY endpoint_id',
        [objectiveIds],
      );
      return rows.map((row) => row.endpoint_id);
    },

    async eventBody(objectiveEventId) {
      const row = (await readRows(manager, EVENT_ENVELOPE, [objectiveEventId]))[0];
      return row ? envelopeJson(row.envelope as Record<string, unknown>) : null;
    },
  };
}
