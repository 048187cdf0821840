// The ErasureRuntimePort over the actor runtime: erasure jobs are `erasure`
// actors (a start is their first turn, answered once committed), and a job's
// run reaches the outbox, the OBJECTIVE_EVENTS stream and the webhook
// endpoint actors through the runtime. Bound after the runtime starts (the
// services it serves are built before the runtime); unbound, it answers UNAVAILABLE.
import { UnavailableError } from '../../src/errors';
import { OBJECTIVE_KIND } from '../../src/objectives/objective-state';
import { OBJECTIVE_EVENTS_STREAM } from '../../src/objectives/objective-events';
import type { ErasureRuntimePort } from '../../src/ports/erasure-runtime';
import { ERASURE_KIND, type ErasureJob, type ErasureTarget } from '../../src/tenants/erasure.behavior';
import type { WebhookEndpointCommand } from '../../src/webhooks/webhook-endpoint.behavior';
import { WEBHOOK_ENDPOINT_KIND } from '../../src/webhooks/webhook-endpoint-id';
import type { ActorRuntime } from '../runtime/actor-runtime';

type ErasureRuntime = Pick<ActorRuntime, 'ask' | 'unpublishedEventCount' | 'purgeEvents'>;

export class RuntimeErasure implements ErasureRuntimePort {
  private runtime: ErasureRuntime | null = null;

  bind(runtime: ErasureRuntime): void {
    this.runtime = runtime;
  }

  start(erasureId: string, target: ErasureTarget): Promise<ErasureJob> {
    // The id is new: its actor has nothing to recover; the command id makes a retried ask apply once.
    return this.bound().ask<ErasureJob>(ERASURE_KIND, erasureId, { type: 'start', target }, { commandId: `start:${erasureId}`, newActor: true });
  }

  async get(erasureId: string): Promise<ErasureJob | null> {
    try {
      return await this.bound().ask<ErasureJob>(ERASURE_KIND, erasureId, { type: 'get' });
    } catch (error) {
      if ((error as { code?: string }).code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  pendingObjectiveEvents(objectiveIds: readonly string[]): Promise<number> {
    return this.bound().unpublishedEventCount(OBJECTIVE_KIND, objectiveIds);
  }

  purgeObjectiveEvents(subjectFilters: readonly string[]): Promise<void> {
    return this.bound().purgeEvents(OBJECTIVE_EVENTS_STREAM.name, subjectFilters);
  }

  async eraseOnWebhookEndpoint(endpointId: string, objectiveIds: readonly string[], commandId: string): Promise<void> {
    const command: WebhookEndpointCommand = { type: 'erase', objectiveIds: [...objectiveIds] };
    await this.bound().ask(WEBHOOK_ENDPOINT_KIND, endpointId, command, { commandId });
  }

  private bound(): ErasureRuntime {
    if (!this.runtime) throw new UnavailableError('the actor runtime is starting; retry shortly');
    return this.runtime;
  }
}
