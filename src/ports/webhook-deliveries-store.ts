// The storage port of the webhook deliveries read model (spec 2.16): the rows
// the webhook endpoint actor projects in its fenced turns, and the reads of
// the API. persistence/repositories/webhook-deliveries.store.ts implements it;
// nothing but the projector writes the table (a retry goes through the actor).
import type { PageRequest } from '../resource/pagination';
import type { WebhookDeliveryChange, WebhookDeliveryRecord, WebhookDeliveryStatus } from '../webhooks/webhook-delivery';
import type { ProjectionStatement, SqlRunner } from './actor-behavior';
import type { ListFilter } from './foundation-store';

export interface WebhookDeliveryListFilter extends ListFilter {
  status?: WebhookDeliveryStatus;
  objectiveId?: string;
  /** `OBJECTIVE_EVENT_TYPE_…` */
  eventType?: string;
}

export interface WebhookDeliveriesStore {
  /**
   * Writes the changes of a batch of turns on the turn's connection, as one
   * statement: each delivery's row is inserted or replaced, unless the stored
   * revision is already as new; within one call the last change of an id wins.
   */
  project(sql: SqlRunner, changes: ReadonlyArray<{ actorId: string; change: WebhookDeliveryChange }>): Promise<void>;
  /** `project` as a statement that joins the batch's one statement. */
  projection(changes: ReadonlyArray<{ actorId: string; change: WebhookDeliveryChange }>): ProjectionStatement | null;
  /** The delivery when it is the agent's in the workspace, else null. */
  get(workspaceId: string, agentId: string, id: string): Promise<WebhookDeliveryRecord | null>;
  /** Rows of `limit + 1` in page order (see toPage). */
  list(workspaceId: string, agentId: string, filter: WebhookDeliveryListFilter, page: PageRequest): Promise<WebhookDeliveryRecord[]>;
  /** The endpoint actors that took deliveries of these objectives (an erasure erases what they hold). */
  endpointIdsOf(objectiveIds: readonly string[]): Promise<string[]>;
  /** The event's webhook envelope as JSON (what a delivery of it sends), or null when the event is gone. */
  eventBody(objectiveEventId: string): Promise<string | null>;
}
