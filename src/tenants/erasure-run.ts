// The three steps of one batch of an erasure job (the effects of
// erasure.behavior.ts, which journals the end of each, so no step is redone
// once done). Each step is idempotent: a step that failed, or was lost with
// its node, is simply run again.
//  1. the next objectives naming the tenant or a subject (after the job's
//     cursor, at most a batch) erase themselves through their actors (state,
//     rows and events read `[erased]`; a running one stops);
//  2. once none of their events waits in the runtime's outbox any more (the
//     relay would publish the content again after a purge), their messages
//     are purged from OBJECTIVE_EVENTS by subject;
//  3. every webhook endpoint that queued deliveries of theirs, and the
//     current endpoint of each of their agents, erases the bodies it holds.
// Once no objective is left, a tenant erasure moves the tenant's usage sums to
// the erased key (src/usage): its objectives have all stopped, so none adds
// under its id any more.
import { UnavailableError } from '../errors';
import { objectiveEventsFilter, type ObjectiveEventsAddress } from '../objectives/objective-events';
import type { ErasureRuntimePort } from '../ports/erasure-runtime';
import type { EraseObjectivesInput, EraseObjectivesResult, EraseWebhookBodiesInput, ErasureTarget, PurgeEventsInput } from './erasure.behavior';

export interface ErasureStepDependencies {
  /** Erases, through their actors, the target's objectives after `after` in id order, at most `limit`; answers them. */
  eraseObjectivesOf(target: ErasureTarget, page: { after: string | null; limit: number }): Promise<ObjectiveEventsAddress[]>;
  /** The endpoint actors holding deliveries of these objectives, and those of the agents' current webhook URLs. */
  webhookEndpointsOf(objectives: readonly ObjectiveEventsAddress[]): Promise<string[]>;
  runtime: Pick<ErasureRuntimePort, 'pendingObjectiveEvents' | 'purgeObjectiveEvents' | 'eraseOnWebhookEndpoint'>;
  /** Moves the tenant's usage roll-ups to the erased key (UsageStore.eraseTenant); idempotent. */
  eraseTenantUsage(workspaceId: string, tenantId: string): Promise<void>;
  /** Objectives per batch. */
  batchSize: number;
}

/**
 * Step 1: the next batch erases itself; an empty answer means the job has
 * erased every objective (and, for a tenant, moved its usage sums).
 */
export async function eraseObjectiveBatch(input: EraseObjectivesInput, dependencies: ErasureStepDependencies): Promise<EraseObjectivesResult> {
  const objectives = await dependencies.eraseObjectivesOf(input.target, { after: input.after, limit: dependencies.batchSize });
  const { workspaceId, tenantId } = input.target;
  if (!objectives.length && tenantId !== undefined) await dependencies.eraseTenantUsage(workspaceId, tenantId);
  return { objectives };
}

/**
 * Step 2.
 * @throws UnavailableError while events of the batch still wait for publication (the job retries)
 */
export async function purgeBatchEvents(input: PurgeEventsInput, dependencies: ErasureStepDependencies): Promise<Record<string, never>> {
  const pending = await dependencies.runtime.pendingObjectiveEvents(input.objectives.map((objective) => objective.objectiveId));
  if (pending > 0) throw new UnavailableError(`${pending} events of the erased objectives are not published yet`);
  await dependencies.runtime.purgeObjectiveEvents(input.objectives.map(objectiveEventsFilter));
  return {};
}

/** Step 3: one command per endpoint and batch (its id makes a run again apply it once). */
export async function eraseBatchOnWebhookEndpoints(erasureId: string, input: EraseWebhookBodiesInput, dependencies: ErasureStepDependencies): Promise<{ endpointCount: number }> {
  const ids = input.objectives.map((objective) => objective.objectiveId);
  const endpoints = await dependencies.webhookEndpointsOf(input.objectives);
  for (const endpointId of endpoints) await dependencies.runtime.eraseOnWebhookEndpoint(endpointId, ids, `erase:${erasureId}:${input.batch}`);
  return { endpointCount: endpoints.length };
}
