// The `webhook_endpoint` actor kind as the runtime registers it: the pure
// behaviour of src/webhooks with its one effect bound to the real sender (a
// signed POST through the keep-alive pool) and its projector writing the
// webhook_deliveries read model in the actor's own turn. The signing secrets
// are loaded by the effect, per attempt, so they never enter the journal. An
// attempt runs inside its span only while tracing is on (checked first, so a
// node not tracing builds nothing for it).
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import type { WebhookDeliveriesStore } from '../../src/ports/webhook-deliveries-store';
import type { WebhookConnectWarnings } from '../../src/webhooks/webhook-connect-warnings';
import type { WebhookDeliveryChange } from '../../src/webhooks/webhook-delivery';
import { observeWebhookEndpoint } from '../domain-metrics';
import {
  attemptNumberOf, createWebhookEndpointBehavior, DELIVER_WEBHOOK_EFFECT, type DeliverWebhookInput, type DeliverWebhookTransientInput, type DeliveryAttemptOutcome,
  type WebhookEndpointOptions,
} from '../../src/webhooks/webhook-endpoint.behavior';
import { traceWebhookDelivery } from '../../src/tracing/spans';
import { tracingEnabled } from '../../src/tracing/tracing';

export interface WebhookEndpointKindDependencies {
  sender: { send(request: { url: string; id: string; body: string; secrets: string[]; signal?: AbortSignal }): Promise<DeliveryAttemptOutcome> };
  /** The account's signing secrets, current first (two for 24 h after a rotation). */
  signingSecrets(accountId: string): Promise<string[]>;
  store: Pick<WebhookDeliveriesStore, 'project' | 'projection'>;
  options: WebhookEndpointOptions;
  /** Told every attempt's outcome: warns the operator once per endpoint whose receiver cannot be reached. */
  connectWarnings: Pick<WebhookConnectWarnings, 'record'>;
}

export function createWebhookEndpointKind(dependencies: WebhookEndpointKindDependencies): ActorKind {
  const { sender, signingSecrets, store, options, connectWarnings } = dependencies;
  /** One attempt: the body signed with the account's current secrets and POSTed. */
  const deliver = async (input: DeliverWebhookInput, body: string, context: EffectContext) => {
    const outcome = await sender.send({ url: input.url, id: input.deliveryId, body, secrets: await signingSecrets(input.accountId), signal: context.signal });
    connectWarnings.record(context.actorId, input.url, outcome);
    return outcome;
  };
  return {
    behavior: createWebhookEndpointBehavior(options),
    effects: {
      [DELIVER_WEBHOOK_EFFECT]: async (input: DeliverWebhookInput, context: EffectContext) => {
        // Attempts started before the body became transient carry it in their input.
        const body = (context.transientInput as DeliverWebhookTransientInput | undefined)?.body ?? input.body;
        if (body === undefined) throw new Error(`webhook attempt ${context.effectId} has no body`);
        return tracingEnabled()
          ? traceWebhookDelivery(
            { url: input.url, deliveryId: input.deliveryId, attempt: attemptNumberOf(context.effectId), traceparent: input.traceparent },
            () => deliver(input, body, context),
          )
          : deliver(input, body, context);
      },
    },
    projector: (sql, changes) => store.project(sql, changes as Array<{ actorId: string; change: WebhookDeliveryChange }>),
    projection: (changes) => store.projection(changes as Array<{ actorId: string; change: WebhookDeliveryChange }>),
    observe: observeWebhookEndpoint,
  };
}
