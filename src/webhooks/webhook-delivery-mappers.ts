// Record → wire mapping of a webhook delivery (spec 2.16), written once for
// the list and the retry: optional fields appear only when set, as everywhere
// in the API; the response length is a decimal string, as the spec types it.
import type { OperationMetadata } from '../schemas/common.schema';
import type { WebhookDelivery } from '../schemas/webhook-deliveries.schema';
import type { WebhookDeliveryRecord } from './webhook-delivery';

function present<K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/** The delivery's OperationMetadata: its objective's creator, externalId and labels. */
function metadataOf(record: WebhookDeliveryRecord): OperationMetadata {
  return {
    id: record.id,
    accountId: record.accountId,
    createdAt: record.createdAt,
    profileId: record.profileId,
    workspaceId: record.workspaceId,
    ...present('externalId', record.externalId),
    ...(record.labels && Object.keys(record.labels).length ? { labels: record.labels } : {}),
  };
}

export function toWebhookDelivery(record: WebhookDeliveryRecord): WebhookDelivery {
  return {
    metadata: metadataOf(record),
    data: {
      agentId: record.agentId,
      objectiveId: record.objectiveId,
      objectiveEventId: record.objectiveEventId,
      webhookId: record.id,
      webhookUrl: record.webhookUrl,
      eventType: record.eventType,
      status: record.status,
      attemptCount: record.attemptCount,
      ...present('lastAttemptAt', record.lastAttemptAt),
      ...present('nextAttemptAt', record.nextAttemptAt),
      ...present('latencyMs', record.latencyMs),
      ...present('httpStatusCode', record.httpStatusCode),
      ...present('responseContentLength', record.responseContentLength === null ? null : String(record.responseContentLength)),
      ...present('responseHeaders', record.responseHeaders),
      ...present('errorMessage', record.errorMessage),
    },
  };
}
