// The storage port of the agent schedules read model (spec 2.15): the rows the
// schedule actor projects in its fenced turns, and the reads of the API.
// persistence/repositories/schedules.store.ts implements it; nothing but the
// projector writes the table (every change goes through the actor).
import type { PageRequest } from '../resource/pagination';
import type { ScheduleChange, ScheduleRecord, ScheduleStatus } from '../schedules/schedule-record';
import type { ProjectionStatement, SqlRunner } from './actor-behavior';
import type { ListFilter } from './foundation-store';

export interface ScheduleListFilter extends ListFilter {
  status?: ScheduleStatus;
}

export interface SchedulesStore {
  /**
   * Writes the changes of a batch of turns on the turn's connection, as one
   * statement: each schedule's row is inserted or replaced, unless the stored
   * revision is already as new; within one call the last change of an id wins.
   */
  project(sql: SqlRunner, changes: ReadonlyArray<{ actorId: string; change: ScheduleChange }>): Promise<void>;
  /** `project` as a statement that joins the batch's one statement. */
  projection(changes: ReadonlyArray<{ actorId: string; change: ScheduleChange }>): ProjectionStatement | null;
  /** The schedule when it is the agent's in the workspace, else null. */
  get(workspaceId: string, agentId: string, id: string): Promise<ScheduleRecord | null>;
  /** Rows of `limit + 1` in page order (see toPage). */
  list(workspaceId: string, agentId: string, filter: ScheduleListFilter, page: PageRequest): Promise<ScheduleRecord[]>;
  /** The workspace's schedules carrying the bundleKey that are not ARCHIVED, in creation (id) order. */
  listOfBundle(workspaceId: string, bundleKey: string): Promise<ScheduleRecord[]>;
  /** The schedules of these agents of the workspace named one of `names` that are not ARCHIVED, whatever their bundle, in creation (id) order. */
  listNamed(workspaceId: string, agentIds: readonly string[], names: readonly string[]): Promise<ScheduleRecord[]>;
  /** Every schedule of the agent in the workspace that is not ARCHIVED, in creation (id) order. */
  listLiveOfAgent(workspaceId: string, agentId: string): Promise<ScheduleRecord[]>;
}
