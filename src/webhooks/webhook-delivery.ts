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
