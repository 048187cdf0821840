// The `erasure` actor kind as the runtime registers it: the pure job of
// src/tenants/erasure.behavior.ts with its one effect, a run of the erasure
// (src/tenants/erasure-run.ts), bound to the objective service (each
// objective erases itself through its actor), the webhook deliveries read
// model and the agents' current webhook URLs (which endpoints hold bodies),
// and the runtime (outbox, OBJECTIVE_EVENTS purge, endpoint actors).
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import type { ErasureRuntimePort } from '../../src/ports/erasure-runtime';
import type { WebhookDeliveriesStore } from '../../src/ports/webhook-deliveries-store';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import { erasureBehavior, RUN_ERASURE_EFFECT, type ErasureTarget } from '../../src/tenants/erasure.behavior';
import { runErasure } from '../../src/tenants/erasure-run';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';

export interface ErasureKindDependencies {
  objectives: Pick<ObjectiveService, 'eraseObjectivesOf'>;
  deliveries: Pick<WebhookDeliveriesStore, 'endpointIdsOf'>;
  webhookUrlOf(agentId: string): Promise<string | null>;
  runtime: Pick<ErasureRuntimePort, 'pendingObjectiveEvents' | 'purgeObjectiveEvents' | 'eraseOnWebhookEndpoint'>;
}

export function createErasureKind(dependencies: ErasureKindDependencies): ActorKind {
  const { objectives, deliveries, webhookUrlOf, runtime } = dependencies;
  return {
    behavior: erasureBehavior,
    effects: {
      [RUN_ERASURE_EFFECT]: (target: ErasureTarget, context: EffectContext) =>
        runErasure(context.actorId, target, {
          eraseObjectivesOf: (named) => objectives.eraseObjectivesOf(named),
          async webhookEndpointsOf(erased) {
            const endpoints = new Set(await deliveries.endpointIdsOf(erased.map((objective) => objective.objectiveId)));
            // An agent's current endpoint too: an event of theirs may still be on its way to it.
            for (const agentId of new Set(erased.map((objective) => objective.agentId))) {
              const url = await webhookUrlOf(agentId);
              if (url) endpoints.add(webhookEndpointIdOf(agentId, url));
            }
            return [...endpoints];
          },
          runtime,
        }),
    },
  };
}
