// How tenant and subject erasure reaches the actor runtime (api-decisions.md
// "Tenants, subjects, uploads"): the API hands an erasure job to its durable
// `erasure` actor and reads it back; the job's effect asks the runtime what
// only it knows (events still in its outbox), purges the event stream and
// erases the bodies webhook endpoint actors hold. The composition root
// implements it over the runtime; a process without one answers UNAVAILABLE.
import type { ErasureJob, ErasureTarget } from '../tenants/erasure.behavior';

export interface ErasureRuntimePort {
  /** Stores the job (its actor's first turn) and answers it once that turn has committed. */
  start(erasureId: string, target: ErasureTarget): Promise<ErasureJob>;
  /** The job as its actor holds it, or null for an id no job has. */
  get(erasureId: string): Promise<ErasureJob | null>;
  /** How many events of these objectives still wait in the runtime's outbox (unpublished). */
  pendingObjectiveEvents(objectiveIds: readonly string[]): Promise<number>;
  /** Removes the messages these subject filters take from OBJECTIVE_EVENTS (JetStream, or the embedded event log). */
  purgeObjectiveEvents(subjectFilters: readonly string[]): Promise<void>;
  /** Erases what one webhook endpoint actor holds of these objectives; applied once per command id. */
  eraseOnWebhookEndpoint(endpointId: string, objectiveIds: readonly string[], commandId: string): Promise<void>;
}
