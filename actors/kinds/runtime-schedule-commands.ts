// The ScheduleCommandPort over the actor runtime: configure and trigger are
// each one ask to the schedule's actor (kind SCHEDULE_KIND, actor id = schedule
// id), answered once its turn has committed. Bound after the runtime starts
// (the services it serves are built before the runtime); unbound, it answers UNAVAILABLE.
import { UnavailableError } from '../../src/errors';
import type { ScheduleCommandPort, ScheduleConfiguration, ScheduleTriggerReply } from '../../src/ports/schedule-commands';
import { SCHEDULE_KIND, type ScheduleRecord } from '../../src/schedules/schedule-record';
import type { ActorRuntime } from '../runtime/actor-runtime';

export class RuntimeScheduleCommands implements ScheduleCommandPort {
  private runtime: Pick<ActorRuntime, 'ask'> | null = null;

  bind(runtime: Pick<ActorRuntime, 'ask'>): void {
    this.runtime = runtime;
  }

  configure(schedule: ScheduleConfiguration, options: { commandId?: string } = {}): Promise<ScheduleRecord> {
    if (!this.runtime) return Promise.reject(new UnavailableError('the actor runtime is starting; retry shortly'));
    return this.runtime.ask<ScheduleRecord>(SCHEDULE_KIND, schedule.id, { type: 'configure', schedule }, options);
  }

  trigger(scheduleId: string, options: { commandId?: string } = {}): Promise<ScheduleTriggerReply> {
    if (!this.runtime) return Promise.reject(new UnavailableError('the actor runtime is starting; retry shortly'));
    return this.runtime.ask<ScheduleTriggerReply>(SCHEDULE_KIND, scheduleId, { type: 'trigger' }, options);
  }
}
