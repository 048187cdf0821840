// The storage port of the objectives read model (issue 9): the `objectives`
// row and the `objective_events` rows the objective actor projects in its
// fenced turns, and the reads of the API. persistence/repositories/objectives.store.ts
// implements it. Nothing but the projector writes these tables, except
// erasure, which goes through the actor too (its `erase` command) so the
// actor's state and the rows agree.
import type { ProjectionStatement } from './actor-behavior';
import type { ObjectiveChange, ObjectiveEventsAddress } from '../objectives/objective-events';
import type { ObjectiveEventRecord, ObjectiveSpec, ObjectiveStatus } from '../objectives/objective-state';
import type { ObjectiveInfoChange } from '../objectives/objective-events';
import type { PageRequest } from '../resource/pagination';
import type { OperationMetadata } from '../schemas/common.schema';
import type { ListFilter } from './foundation-store';

/** One objectives row: what GET /objectives/{id} shows. */
export interface ObjectiveRecord {
  id: string;
  accountId: string;
  workspaceId: string;
  metadata: OperationMetadata;
  spec: ObjectiveSpec;
  /** `info` without the fields only the API adds; `sequence` is the last event's. */
  info: ObjectiveInfoChange;
  /** The scoped Idempotency-Key the objective was created with, if any. */
  startKey: string | null;
  /** The widget session (`wsess_…`) that created it, or null. */
  widgetSessionId: string | null;
  updatedAt: Date;
}

export interface ObjectiveListFilter extends ListFilter {
  agentId?: string;
  status?: ObjectiveStatus;
  tenantId?: string;
  subjectId?: string;
  scheduleId?: string;
  parentObjectiveId?: string;
  externalId?: string;
}

/** The objectives not in a final state, over the whole database (the node's metrics read them per scrape). */
export interface OpenObjectiveCounts {
  /** Objectives per status that is not final (a status none is in is absent). */
  byStatus: Partial<Record<ObjectiveStatus, number>>;
  /** Tool calls waiting for a decision: the pendingToolCallIds of the objectives AWAITING_APPROVAL. */
  toolCallsAwaitingApproval: number;
}

/** What a projector gets from the runtime: the turn's connection and the changes, in order. */
export interface ProjectionConnection {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export interface ObjectivesStore {
  /**
   * Writes the changes of one turn on the turn's own connection (inside its
   * fenced transaction): `objective_created` inserts the row (once),
   * `objective` updates its info unless a later sequence is already stored,
   * `objective_event` inserts an event row (once per id).
   */
  project(connection: ProjectionConnection, changes: ReadonlyArray<{ actorId: string; change: ObjectiveChange }>): Promise<void>;
  /** `project` as statements that join the batch's one statement; null for changes that need `project` (an erasure). */
  projection(changes: ReadonlyArray<{ actorId: string; change: ObjectiveChange }>): ProjectionStatement | null;
  /**
   * The webhook envelopes of these events as published, rebuilt from their
   * objective_events rows (erased content stays erased), on the runtime's
   * connection: the outbox rows of objective events keep none.
   */
  projectedEnvelopes(connection: ProjectionConnection, eventIds: string[]): Promise<Array<{ id: string; payload: unknown }>>;

  findById(id: string): Promise<ObjectiveRecord | null>;
  /** The objective a scoped Idempotency-Key created in the workspace, if any. */
  findByStartKey(workspaceId: string, startKey: string): Promise<ObjectiveRecord | null>;
  /** Rows of `limit + 1` in page order (see toPage). */
  list(workspaceId: string, page: PageRequest, filter: ObjectiveListFilter): Promise<ObjectiveRecord[]>;
  /** Events with `sequence > afterSequence`, ascending, at most `limit`. */
  listEvents(objectiveId: string, afterSequence: number, limit: number): Promise<ObjectiveEventRecord[]>;
  /** Objectives of the agent not in a terminal state. */
  countRunningByAgent(agentId: string): Promise<number>;
  /** The objectives not in a final state by status, and the tool calls awaiting approval, over every workspace. */
  openCounts(): Promise<OpenObjectiveCounts>;
  /**
   * The workspace's objectives naming the tenant or one of the subjects, in id
   * order, with where their events go (for erasure, a batch at a time): those
   * after `page.after` (from the first when null), at most `page.limit`.
   */
  namedBy(target: { workspaceId: string; tenantId?: string; subjectIds: readonly string[] }, page: { after: string | null; limit: number }): Promise<ObjectiveEventsAddress[]>;
}
