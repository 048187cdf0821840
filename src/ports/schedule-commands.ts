// How the API reaches schedule actors: a create or update hands the validated
// record to the actor, which projects it in its fenced turn and sets its timer;
// `trigger` fires once now. Answered once the turn has committed. The
// composition root implements it over the actor runtime; a process without a
// runtime answers UNAVAILABLE.
import type { ScheduleRecord } from '../schedules/schedule-record';

export type ScheduleCommand =
  /** Create (the first configure) or replace metadata, spec and status; info is the actor's. Answers the record. */
  | { type: 'configure'; schedule: ScheduleConfiguration }
  /** One fire now, honouring the overlap policy. Answers a ScheduleTriggerReply once the fire is decided. */
  | { type: 'trigger' }
  /** Answers the record. */
  | { type: 'get' };

/** What the API decides of a schedule: everything but the actor's counters. */
export type ScheduleConfiguration = Omit<ScheduleRecord, 'info' | 'revision'>;

export interface ScheduleTriggerReply {
  schedule: ScheduleRecord;
  /** The objective created, or absent when the fire was skipped (overlap) or failed (info.lastError says why). */
  objectiveId?: string;
}

export interface ScheduleCommandPort {
  /** Creates or updates the schedule through its actor. @param commandId makes a retried request apply once */
  configure(schedule: ScheduleConfiguration, options?: { commandId?: string }): Promise<ScheduleRecord>;
  trigger(scheduleId: string, options?: { commandId?: string }): Promise<ScheduleTriggerReply>;
}
