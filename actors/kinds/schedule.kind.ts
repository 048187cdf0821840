// The `schedule` actor kind as the runtime registers it: the pure behaviour of
// src/schedules with its one effect bound to the objective service (the
// objective a fire creates, resolved from the database now under the id the
// actor drew) and its projector writing the agent_schedules read model in the
// actor's own turn.
import type { ActorKind } from '../../src/ports/actor-behavior';
import type { SchedulesStore } from '../../src/ports/schedules-store';
import type { ObjectiveStart } from '../../src/objectives/objective-state';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import type { ScheduleChange } from '../../src/schedules/schedule-record';
import { PREPARE_SCHEDULED_OBJECTIVE_EFFECT, scheduleBehavior, type PrepareScheduledObjectiveInput } from '../../src/schedules/schedule.behavior';
import { traceScheduleFire } from '../../src/tracing/spans';
import { tracingEnabled } from '../../src/tracing/tracing';
import { observeSchedule } from '../domain-metrics';

export interface ScheduleKindDependencies {
  objectives: Pick<ObjectiveService, 'resolve' | 'warm'>;
  store: Pick<SchedulesStore, 'project' | 'projection'>;
}

/** The start key of a scheduled objective: with the unique index on it, one objective per (schedule, fire time). */
export function scheduledStartKey(scheduleId: string, fireTime: string): string {
  return `schedule:${scheduleId}:${fireTime}`;
}

export function createScheduleKind(dependencies: ScheduleKindDependencies): ActorKind {
  const { objectives, store } = dependencies;
  /** The fire's objective, resolved under the id the actor drew and warmed ahead of its fire time. */
  const prepareObjective = async (input: PrepareScheduledObjectiveInput): Promise<ObjectiveStart> => {
    const start = await objectives.resolve({ id: input.workspaceId, accountId: input.accountId }, input.profileId, {
      agentId: input.agentId,
      initialMessage: input.initialMessage,
      data: input.data,
      variationId: input.variationId,
      scheduleId: input.scheduleId,
      scheduleFireTime: input.fireTime,
      startKey: scheduledStartKey(input.scheduleId, input.fireTime),
      objectiveId: input.objectiveId,
    });
    // Prepared ahead of the fire: the objective's actor reads its (empty) journal now, not at the fire time.
    objectives.warm(start.objectiveId);
    return start;
  };
  return {
    behavior: scheduleBehavior,
    effects: {
      // The objective is resolved inside the fire's span (tracing on): its own spans continue it.
      [PREPARE_SCHEDULED_OBJECTIVE_EFFECT]: (input: PrepareScheduledObjectiveInput): Promise<ObjectiveStart> =>
        (tracingEnabled() ? traceScheduleFire(input, () => prepareObjective(input)) : prepareObjective(input)),
    },
    projector: (sql, changes) => store.project(sql, changes as Array<{ actorId: string; change: ScheduleChange }>),
    projection: (changes) => store.projection(changes as Array<{ actorId: string; change: ScheduleChange }>),
    observe: observeSchedule,
  };
}
