// One run of an erasure job (the `erasure.run` effect of erasure.behavior.ts):
// every step is idempotent, so a run that failed or was lost with its node is
// simply run again from the start.
//  1. each objective naming the tenant or a subject erases itself through its
//     actor (state, rows and events read `[erased]`; a running one stops);
//  2. once none of their events waits in the runtime's outbox any more (the
//     relay would publish the content again after a purge), their messages
//     are purged from OBJECTIVE_EVENTS by subject;
//  3. every webhook endpoint that queued deliveries of theirs, and the
//     current endpoint of each of their agents, erases the bodies it holds.
import { UnavailableError } from '../errors';
import { objectiveEventsFilter, type ObjectiveEventsAddress } from '../objectives/objective-events';
import type { ErasureRuntimePort } from '../ports/erasure-runtime';
import type { ErasureRunResult, ErasureTarget } from './erasure.behavior';

export interface ErasureRunDependencies {
  /** Erases each objective naming the target through its actor; answers the objectives erased. */
  eraseObjectivesOf(target: ErasureTarget): Promise<ObjectiveEventsAddress[]>;
  /** The endpoint actors holding deliveries of these objectives, and those of the agents' current webhook URLs. */
  webhookEndpointsOf(objectives: readonly ObjectiveEventsAddress[]): Promise<string[]>;
  runtime: Pick<ErasureRuntimePort, 'pendingObjectiveEvents' | 'purgeObjectiveEvents' | 'eraseOnWebhookEndpoint'>;
}

/**
 * @throws UnavailableError while events of the objectives still wait for publication (the job retries)
 */
export async function runErasure(erasureId: string, target: ErasureTarget, dependencies: ErasureRunDependencies): Promise<ErasureRunResult> {
  const objectives = await dependencies.eraseObjectivesOf(target);
  if (objectives.length === 0) return { objectiveCount: 0 };
  const ids = objectives.map((objective) => objective.objectiveId);
  const pending = await dependencies.runtime.pendingObjectiveEvents(ids);
  if (pending > 0) throw new UnavailableError(`${pending} events of the erased objectives are not published yet`);
  await dependencies.runtime.purgeObjectiveEvents(objectives.map(objectiveEventsFilter));
  for (const endpointId of await dependencies.webhookEndpointsOf(objectives)) {
    await dependencies.runtime.eraseOnWebhookEndpoint(endpointId, ids, `erase:${erasureId}`);
  }
  return { objectiveCount: objectives.length };
}
