// How the API reaches schedule actors: a create or update hands the validated
// record to the actor, which projects it in its fenced turn and sets its timer;
// `trigger` fires once now. Answered once the turn has committed. The
// composition root implements it over the actor runtime; a process without a
// runtime answers UNAVAILABLE.
import type { ScheduleRecord } from '../schedules/schedule-record';

export type ScheduleCommand =
  /** Create (revision 0 in the actor) or replace metadata, spec and status; info is the actor's. */
  | { type: 'configure'; schedule: Omit<ScheduleRecord, 'info' | 'revision'> }
  /** One fire now, honouring the overlap policy. */
  | { type: 'trigger' }
  | { type: 'get' };

export interface ScheduleTriggerReply {
  schedule: ScheduleRecord;
  /** The objective created, or absent when the fire was skipped (overlap) or failed (lastError says why). */
  objectiveId?: string;
}

export interface ScheduleCommandPort {
  send(scheduleId: string, command: ScheduleCommand, options?: { commandId?: string }): Promise<ScheduleRecord | ScheduleTriggerReply>;
}
