// Fixtures for the webhook deliveries suites until the endpoint actor exists:
// the objective and event rows a delivery belongs to (plain SQL, as the
// objective projector would leave them) and delivery records to project.
import { newId } from '../../src/ids';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import { deliveryIdOf, type WebhookDeliveryRecord } from '../../src/webhooks/webhook-delivery';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';

export interface SeededObjective {
  objectiveId: string;
  /** Event ids by sequence - 1. */
  eventIds: string[];
  /** The envelope of each event, as stored. */
  envelopes: Array<Record<string, unknown>>;
}

/** An objectives row of the agent and `events` objective_events rows with webhook envelopes. */
export async function seedObjective(
  sql: SqlRunner, owner: { accountId: string; workspaceId: string; agentId: string }, events = 3,
): Promise<SeededObjective> {
  const objectiveId = newId('objective');
  await sql.query(
    `INSERT INTO objectives (id, account_id, workspace_id, agent_id, variation_id, profile_id, status, info, sequence)
     VALUES ($1, $2, $3, $4, 'agentvar_seed', 'prof_seed', 'OBJECTIVE_STATUS_RUNNING', '{}', $5)`,
    [objectiveId, owner.accountId, owner.workspaceId, owner.agentId, events],
  );
  const eventIds: string[] = [];
  const envelopes: Array<Record<string, unknown>> = [];
  for (let sequence = 1; sequence <= events; sequence++) {
    const id = newId('objectiveEvent');
    const createdAt = new Date(Date.UTC(2025, 0, 1, 0, 0, sequence)).toISOString();
    const envelope = {
      timestamp: createdAt,
      type: 'objective_event.user_message',
      data: { agent: { id: owner.agentId }, objectiveEvent: { metadata: { id }, sequence, data: { type: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE' } } },
    };
    await sql.query(
      `INSERT INTO objective_events (id, objective_id, workspace_id, sequence, type, created_at, data, webhook_type, envelope)
       VALUES ($1, $2, $3, $4, 'USER_MESSAGE', $5, '{}', 'objective_event.user_message', $6)`,
      [id, objectiveId, owner.workspaceId, sequence, createdAt, JSON.stringify(envelope)],
    );
    eventIds.push(id);
    envelopes.push(envelope);
  }
  return { objectiveId, eventIds, envelopes };
}

/** A PENDING first-attempt delivery of the event, with `overrides` applied. */
export function deliveryRecord(
  owner: { accountId: string; workspaceId: string; agentId: string }, objectiveId: string, objectiveEventId: string,
  overrides: Partial<WebhookDeliveryRecord> = {},
): WebhookDeliveryRecord {
  const webhookUrl = overrides.webhookUrl ?? 'https://hooks.example.com/agentrt';
  const at = '2025-01-01T00:00:10.000Z';
  return {
    id: deliveryIdOf(objectiveEventId),
    accountId: owner.accountId,
    workspaceId: owner.workspaceId,
    agentId: owner.agentId,
    profileId: 'prof_seed',
    externalId: null,
    labels: {},
    objectiveId,
    objectiveEventId,
    sequence: 1,
    eventType: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE',
    endpointId: webhookEndpointIdOf(owner.agentId, webhookUrl),
    webhookUrl,
    status: 'WEBHOOK_DELIVERY_STATUS_PENDING',
    attemptCount: 0,
    lastAttemptAt: null,
    nextAttemptAt: null,
    latencyMs: null,
    httpStatusCode: null,
    responseContentLength: null,
    responseHeaders: null,
    errorMessage: null,
    createdAt: at,
    updatedAt: at,
    revision: 1,
    ...overrides,
  };
}

/** The projector's input for `records` (each change named after its endpoint actor). */
export function deliveryChanges(records: WebhookDeliveryRecord[]): Array<{ actorId: string; change: { type: 'webhook_delivery'; delivery: WebhookDeliveryRecord } }> {
  return records.map((delivery) => ({ actorId: delivery.endpointId, change: { type: 'webhook_delivery', delivery } }));
}
