// Entity schema of the webhook deliveries read model (migration
// WebhookDeliveries): the rows the webhook endpoint actor's projector writes.
// The store (persistence/repositories/webhook-deliveries.store.ts) writes them
// with plain SQL; this schema registers the table, types each row and serves
// the list's query builder and the prepared reads.
import { EntitySchema } from 'typeorm';
import type { WebhookDeliveryStatus } from '../../src/webhooks/webhook-delivery';

export interface WebhookDeliveryRow {
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  profileId: string;
  externalId: string | null;
  labels: Record<string, string>;
  objectiveId: string;
  objectiveEventId: string;
  sequence: number;
  eventType: string;
  endpointId: string;
  webhookUrl: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  latencyMs: number | null;
  httpStatusCode: number | null;
  responseContentLength: number | null;
  responseHeaders: Record<string, string> | null;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  revision: number;
}

/** bigint arrives as a string from pg and as a number from json_build_array. */
const bigintNumber = {
  to: (value: number | null) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

export const WebhookDeliveryEntity = new EntitySchema<WebhookDeliveryRow>({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    agentId: { type: 'text', name: 'agent_id' },
    profileId: { type: 'text', name: 'profile_id' },
    externalId: { type: 'text', name: 'external_id', nullable: true },
    labels: { type: 'jsonb', default: {} },
    objectiveId: { type: 'text', name: 'objective_id' },
    objectiveEventId: { type: 'text', name: 'objective_event_id' },
    sequence: { type: 'integer' },
    eventType: { type: 'text', name: 'event_type' },
    endpointId: { type: 'text', name: 'endpoint_id' },
    webhookUrl: { type: 'text', name: 'webhook_url' },
    status: { type: 'text' },
    attemptCount: { type: 'integer', name: 'attempt_count' },
    lastAttemptAt: { type: 'timestamptz', name: 'last_attempt_at', nullable: true },
    nextAttemptAt: { type: 'timestamptz', name: 'next_attempt_at', nullable: true },
    latencyMs: { type: 'integer', name: 'latency_ms', nullable: true },
    httpStatusCode: { type: 'integer', name: 'http_status_code', nullable: true },
    responseContentLength: { type: 'bigint', name: 'response_content_length', nullable: true, transformer: bigintNumber },
    responseHeaders: { type: 'jsonb', name: 'response_headers', nullable: true },
    errorMessage: { type: 'text', name: 'error_message', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
    revision: { type: 'integer' },
  },
});
