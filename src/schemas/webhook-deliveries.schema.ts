// Wire shapes of webhook deliveries (interface-spec 2.16, api-decisions.md
// "Webhooks"): the WebhookDelivery of the list and the retry, the list's
// filters, and the objective event type enum of section 6.3.
import { Type, type Static } from '@sinclair/typebox';
import { idPattern } from '../ids';
import { ObjectiveEventType } from '../objectives/objective-state';
import { DateTime, OperationMetadata, Strict } from './common.schema';

export const WebhookDeliveryStatusSchema = Type.Union([
  Type.Literal('WEBHOOK_DELIVERY_STATUS_UNSPECIFIED'),
  Type.Literal('WEBHOOK_DELIVERY_STATUS_PENDING'),
  Type.Literal('WEBHOOK_DELIVERY_STATUS_COMPLETED'),
  Type.Literal('WEBHOOK_DELIVERY_STATUS_FAILED'),
  Type.Literal('WEBHOOK_DELIVERY_STATUS_DISABLED'),
]);

/** Section 6.3's values: UNSPECIFIED and every type the runtime records. */
export const OBJECTIVE_EVENT_TYPES: readonly string[] = [...new Set([
  'OBJECTIVE_EVENT_TYPE_UNSPECIFIED',
  ...Object.values(ObjectiveEventType),
])];

export const ObjectiveEventTypeSchema = Type.Union(OBJECTIVE_EVENT_TYPES.map((type) => Type.Literal(type)));

export const WebhookDelivery = Type.Object({
  metadata: OperationMetadata,
  data: Type.Object({
    agentId: Type.String(),
    objectiveId: Type.String(),
    objectiveEventId: Type.String(),
    webhookId: Type.String({ description: 'The `webhook-id` header: the delivery id, the same on every attempt' }),
    webhookUrl: Type.String(),
    eventType: ObjectiveEventTypeSchema,
    status: WebhookDeliveryStatusSchema,
    attemptCount: Type.Integer(),
    lastAttemptAt: Type.Optional(DateTime),
    nextAttemptAt: Type.Optional(Type.String({
      format: 'date-time', readOnly: true, description: 'When the next attempt is due (PENDING, between attempts); absent otherwise. Not in the spec.',
    })),
    latencyMs: Type.Optional(Type.Integer()),
    httpStatusCode: Type.Optional(Type.Integer({ description: '0 when no response came; the response body is not retained' })),
    responseContentLength: Type.Optional(Type.String({ description: 'Bytes of the last response body, as a decimal string' })),
    responseHeaders: Type.Optional(Type.Record(Type.String(), Type.String())),
    errorMessage: Type.Optional(Type.String()),
  }),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryListFilters = {
  status: Type.Optional(Type.Union(WebhookDeliveryStatusSchema.anyOf, { description: 'WEBHOOK_DELIVERY_STATUS_UNSPECIFIED or absent: every status' })),
  objectiveId: Type.Optional(Type.String({ pattern: idPattern('objective'), description: 'obj_ id' })),
  eventType: Type.Optional(Type.Union(ObjectiveEventTypeSchema.anyOf, { description: 'OBJECTIVE_EVENT_TYPE_UNSPECIFIED or absent: every type' })),
};

export const RetryWebhookDeliveryBody = Strict({});
