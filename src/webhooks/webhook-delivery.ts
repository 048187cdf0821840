// A webhook delivery (spec 2.16) as the endpoint actor keeps it and as the
// read model stores it: one per objective event sent to an agent's webhook
// URL, with the outcome of its last attempt. The actor owns every change to
// it and projects the whole row in its own turn (`WebhookDeliveryChange`);
// `revision` orders those writes, so a stale one never overwrites a newer one.

export const WEBHOOK_DELIVERY_STATUSES = [
  'WEBHOOK_DELIVERY_STATUS_PENDING',
  'WEBHOOK_DELIVERY_STATUS_COMPLETED',
  'WEBHOOK_DELIVERY_STATUS_FAILED',
  'WEBHOOK_DELIVERY_STATUS_DISABLED',
] as const;

export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One delivery: the row of webhook_deliveries, JSON-safe (dates as ISO strings). */
export interface WebhookDeliveryRecord {
  /** `whdel_<ulid of the event>`: also the `webhook-id` header, the same on every attempt. */
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  /** The objective's creator (OperationMetadata.profileId of the objective). */
  profileId: string;
  /** The objective's externalId and labels (OperationMetadata of the delivery). */
  externalId: string | null;
  labels: Record<string, string>;
  objectiveId: string;
  objectiveEventId: string;
  /** The event's sequence within its objective: deliveries of one objective leave in this order. */
  sequence: number;
  /** `OBJECTIVE_EVENT_TYPE_…` */
  eventType: string;
  /** The endpoint actor that owns the delivery now (one per agent and URL). */
  endpointId: string;
  webhookUrl: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  lastAttemptAt: string | null;
  /** When the next attempt is due (PENDING, waiting between attempts); null otherwise. */
  nextAttemptAt: string | null;
  latencyMs: number | null;
  /** 0 when no response came (network error, time-out, refused address). */
  httpStatusCode: number | null;
  /** Bytes of the last response body (the body is not kept). */
  responseContentLength: number | null;
  /** Headers of the last response, at most 8 KiB in all. */
  responseHeaders: Record<string, string> | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  /** Counts every change the actor made; a projector keeps the highest. */
  revision: number;
}

/** The read-model change of the endpoint actor: the delivery's whole row as it is now. */
export interface WebhookDeliveryChange {
  type: 'webhook_delivery';
  delivery: WebhookDeliveryRecord;
}

/** The delivery id of an event: one id per event, whatever the retries and redeliveries. */
export function deliveryIdOf(objectiveEventId: string): string {
  return `whdel_${objectiveEventId.slice(objectiveEventId.indexOf('_') + 1)}`;
}

/** Where a delivery goes. */
export interface WebhookTarget {
  endpointId: string;
  webhookUrl: string;
}

interface EnvelopeShape {
  data?: {
    agent?: { id?: unknown };
    objective?: { id?: unknown; accountId?: unknown; workspaceId?: unknown; profileId?: unknown; externalId?: unknown; labels?: unknown };
    objectiveEvent?: { metadata?: { id?: unknown }; sequence?: unknown; data?: { type?: unknown } };
  };
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`webhook envelope has no ${field}`);
  return value;
}

/**
 * The new delivery of an objective event, read from its webhook envelope (the
 * payload published on OBJECTIVE_EVENTS).
 * @throws Error naming the missing field when the body is not an objective event envelope.
 */
export function newDeliveryOf(body: string, target: WebhookTarget, now: Date): WebhookDeliveryRecord {
  const envelope = JSON.parse(body) as EnvelopeShape;
  const objective = envelope.data?.objective ?? {};
  const event = envelope.data?.objectiveEvent ?? {};
  const objectiveEventId = text(event.metadata?.id, 'data.objectiveEvent.metadata.id');
  const sequence = event.sequence;
  if (typeof sequence !== 'number' || !Number.isInteger(sequence) || sequence < 1) throw new Error('webhook envelope has no data.objectiveEvent.sequence');
  const at = now.toISOString();
  return {
    id: deliveryIdOf(objectiveEventId),
    accountId: text(objective.accountId, 'data.objective.accountId'),
    workspaceId: text(objective.workspaceId, 'data.objective.workspaceId'),
    agentId: text(envelope.data?.agent?.id, 'data.agent.id'),
    profileId: text(objective.profileId, 'data.objective.profileId'),
    externalId: typeof objective.externalId === 'string' ? objective.externalId : null,
    labels: objective.labels && typeof objective.labels === 'object' ? (objective.labels as Record<string, string>) : {},
    objectiveId: text(objective.id, 'data.objective.id'),
    objectiveEventId,
    sequence,
    eventType: text(event.data?.type, 'data.objectiveEvent.data.type'),
    endpointId: target.endpointId,
    webhookUrl: target.webhookUrl,
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
  };
}
