// How the API reaches webhook endpoint actors: the `retry` endpoint re-queues
// a FAILED or DISABLED delivery on the endpoint of the agent's current URL,
// answered once the actor's turn has committed (the read model shows the
// delivery PENDING again). The composition root implements it over the actor
// runtime; a process without a runtime answers UNAVAILABLE.
import type { WebhookDeliveryRecord } from '../webhooks/webhook-delivery';

export interface WebhookRetryRequest {
  /** The delivery as stored (FAILED or DISABLED). */
  delivery: WebhookDeliveryRecord;
  /** The agent's webhookEventsUrl now: the delivery goes there, under the same id. */
  webhookUrl: string;
  /** The body to send: the event's webhook envelope as JSON. */
  body: string;
}

export interface WebhookEndpointCommandPort {
  /** @returns the delivery as re-queued (PENDING). */
  retry(request: WebhookRetryRequest): Promise<WebhookDeliveryRecord>;
}
