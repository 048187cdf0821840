// The `erasure` actor kind as the runtime registers it: the pure job of
// src/tenants/erasure.behavior.ts with the three steps of a batch
// (src/tenants/erasure-run.ts), bound to the objective service (each
// objective erases itself through its actor), the webhook deliveries read
// model and the agents' current webhook URLs (which endpoints hold bodies),
// the runtime (outbox, OBJECTIVE_EVENTS purge, endpoint actors) and the usage
// roll-ups (an erased tenant's sums).
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import type { ErasureRuntimePort } from '../../src/ports/erasure-runtime';
import type { WebhookDeliveriesStore } from '../../src/ports/webhook-deliveries-store';
import type { UsageStore } from '../../src/ports/usage-store';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import {
  ERASE_OBJECTIVES_EFFECT, ERASE_WEBHOOK_BODIES_EFFECT, erasureBehavior, PURGE_EVENTS_EFFECT,
  type EraseObjectivesInput, type EraseWebhookBodiesInput, type PurgeEventsInput,
} from '../../src/tenants/erasure.behavior';
import { eraseBatchOnWebhookEndpoints, eraseObjectiveBatch, purgeBatchEvents, type ErasureStepDependencies } from '../../src/tenants/erasure-run';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';

/**
 * Objectives per batch: a batch's steps end well within a planned move's
 * drain time (AGENTRT_DRAIN_TIMEOUT_MS), so a handoff does not abandon them.
 */
export const DEFAULT_ERASURE_BATCH_SIZE = 50;

export interface ErasureKindDependencies {
  objectives: Pick<ObjectiveService, 'eraseObjectivesOf'>;
  deliveries: Pick<WebhookDeliveriesStore, 'endpointIdsOf'>;
  webhookUrlOf(agentId: string): Promise<string | null>;
  runtime: Pick<ErasureRuntimePort, 'pendingObjectiveEvents' | 'purgeObjectiveEvents' | 'eraseOnWebhookEndpoint'>;
  /** Takes an erased tenant's usage sums once its objectives are erased. */
  usage: Pick<UsageStore, 'eraseTenant'>;
  /** @default DEFAULT_ERASURE_BATCH_SIZE */
  batchSize?: number;
}

export function createErasureKind(dependencies: ErasureKindDependencies): ActorKind {
  const { objectives, deliveries, webhookUrlOf, runtime, usage } = dependencies;
  const steps: ErasureStepDependencies = {
    eraseObjectivesOf: (target, page) => objectives.eraseObjectivesOf(target, page),
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
    eraseTenantUsage: (workspaceId, tenantId) => usage.eraseTenant(workspaceId, tenantId),
    batchSize: dependencies.batchSize ?? DEFAULT_ERASURE_BATCH_SIZE,
  };
  return {
    behavior: erasureBehavior,
    effects: {
      [ERASE_OBJECTIVES_EFFECT]: (input: EraseObjectivesInput) => eraseObjectiveBatch(input, steps),
      [PURGE_EVENTS_EFFECT]: (input: PurgeEventsInput) => purgeBatchEvents(input, steps),
      [ERASE_WEBHOOK_BODIES_EFFECT]: (input: EraseWebhookBodiesInput, context: EffectContext) => eraseBatchOnWebhookEndpoints(context.actorId, input, steps),
    },
  };
}
