// Record → wire mapping of an agent schedule (spec 2.15), written once for every
// answer: `{metadata, spec, info}`, optional fields only when set, as everywhere
// in the API.
import { toResourceMetadata } from '../resource/metadata';
import type { AgentSchedule } from '../schemas/schedules.schema';
import type { ScheduleRecord } from './schedule-record';

function present<K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

export function toAgentSchedule(record: ScheduleRecord): AgentSchedule {
  const { spec, info } = record;
  return {
    metadata: toResourceMetadata(
      { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) },
      record.workspaceId,
    ),
    spec: {
      initialMessage: spec.initialMessage,
      schedule: spec.schedule,
      ...(spec.data !== undefined ? { data: spec.data } : {}),
      overlapPolicy: spec.overlapPolicy,
      status: spec.status,
      ...present('variationId', spec.variationId),
      catchupWindow: spec.catchupWindow,
    },
    info: {
      ...present('nextFireAt', info.nextFireAt),
      ...present('lastFiredAt', info.lastFiredAt),
      ...present('lastObjectiveId', info.lastObjectiveId),
      fireCount: info.fireCount,
      skipCount: info.skipCount,
      ...present('lastError', info.lastError),
    },
  };
}

/** A fire time as api-decisions.md writes them: UTC, whole seconds (`2027-03-14T07:00:00Z`). */
export function toFireTime(instant: Date): string {
  return instant.toISOString().replace(/\.000Z$/, 'Z');
}
