// The WebhookEndpointCommandPort over the actor runtime: a retry is one ask to
// the endpoint actor of the agent and its current URL, answered once that
// turn has committed. Bound after the runtime starts (the services it serves
// are built before the runtime); unbound, it answers UNAVAILABLE.
import { UnavailableError } from '../../src/errors';
import type { WebhookEndpointCommandPort, WebhookRetryRequest } from '../../src/ports/webhook-endpoint-commands';
import type { WebhookDeliveryRecord } from '../../src/webhooks/webhook-delivery';
import { WEBHOOK_ENDPOINT_KIND, webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';
import { activeTraceparentField } from '../../src/tracing/tracing';
import type { ActorRuntime } from '../runtime/actor-runtime';

export class RuntimeWebhookEndpointCommands implements WebhookEndpointCommandPort {
  private runtime: Pick<ActorRuntime, 'ask'> | null = null;

  bind(runtime: Pick<ActorRuntime, 'ask'>): void {
    this.runtime = runtime;
  }

  retry({ delivery, webhookUrl, body }: WebhookRetryRequest): Promise<WebhookDeliveryRecord> {
    if (!this.runtime) return Promise.reject(new UnavailableError('the actor runtime is starting; retry shortly'));
    // The endpoint of the URL now, not the delivery's: a DISABLED endpoint stays so until the URL changes.
    // One command id per stored revision: a request repeated before the row moves applies once.
    return this.runtime.ask<WebhookDeliveryRecord>(
      WEBHOOK_ENDPOINT_KIND, webhookEndpointIdOf(delivery.agentId, webhookUrl), { type: 'retry', delivery, webhookUrl, body, ...activeTraceparentField() },
      { commandId: `retry:${delivery.id}:${delivery.revision}` },
    );
  }
}
