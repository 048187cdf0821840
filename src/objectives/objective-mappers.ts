// Row → wire mapping of an objective, written once for the API, search and
// webhooks: optional fields appear only when set, as everywhere in the API.
import type { ObjectiveRecord } from '../ports/objectives-store';
import type { Objective } from '../schemas/objectives.schema';
import type { OperationMetadata } from '../schemas/common.schema';
import type { ObjectiveInfoChange } from './objective-events';
import type { ObjectiveStart } from './objective-state';

function present<K extends string, V>(key: K, value: V | null | undefined): Partial<Record<K, V>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

export function toObjective(record: ObjectiveRecord): Objective {
  const { spec, info } = record;
  return {
    metadata: record.metadata,
    spec: {
      agentId: spec.agentId,
      variationId: spec.variationId,
      ...present('data', spec.data),
      ...present('initialMessage', spec.initialMessage),
      ...present('episodicKey', spec.episodicKey),
      memoryLayerIds: spec.memoryLayerIds,
      ...present('tenantId', spec.tenantId),
      ...present('subjectId', spec.subjectId),
      ...present('parentObjectiveId', spec.parentObjectiveId),
      ...present('scheduleId', spec.scheduleId),
      ...present('scheduleFireTime', spec.scheduleFireTime),
    },
    info: {
      status: info.status,
      createdAt: info.createdAt ?? record.metadata.createdAt,
      ...present('startedAt', info.startedAt),
      ...present('finishedAt', info.finishedAt),
      ...present('output', info.output),
      ...present('lastMessage', info.lastMessage),
      ...present('error', info.error),
      usage: { promptTokens: info.usage.promptTokens, completionTokens: info.usage.completionTokens, costCents: info.usage.costCents },
      toolCallCount: info.toolCallCount,
      subObjectiveCount: info.subObjectiveCount,
      pendingToolCallIds: info.pendingToolCallIds,
    },
  };
}

/** An objective's metadata as its row keeps it: `profileId` '' when none, `externalId` and `labels` only when set. */
export function storedObjectiveMetadata(fields: {
  id: string; accountId: string; workspaceId: string; profileId: string | null; createdAt: Date | string;
  externalId?: string | null; labels?: Record<string, string> | null;
}): OperationMetadata {
  return {
    id: fields.id,
    accountId: fields.accountId,
    workspaceId: fields.workspaceId,
    profileId: fields.profileId || '',
    createdAt: new Date(fields.createdAt).toISOString(),
    ...present('externalId', fields.externalId),
    ...(fields.labels && Object.keys(fields.labels).length ? { labels: fields.labels } : {}),
  };
}

/**
 * The objective as its start turn wrote its row: the start's metadata and
 * spec with the info the actor replied, normalised as a read of the row is
 * (so create answers without reading back what it just wrote).
 */
export function startedObjective(start: ObjectiveStart, info: ObjectiveInfoChange): Objective {
  const metadata = start.metadata.objective;
  const { spec } = start;
  return toObjective({
    id: start.objectiveId,
    accountId: start.accountId,
    workspaceId: start.workspaceId,
    metadata: storedObjectiveMetadata(metadata),
    spec: {
      ...spec,
      data: spec.data ?? null,
      memoryLayerIds: spec.memoryLayerIds ?? [],
      ...(spec.scheduleFireTime ? { scheduleFireTime: new Date(spec.scheduleFireTime).toISOString() } : {}),
    },
    info,
    startKey: start.startKey ?? null,
    widgetSessionId: start.widgetSessionId ?? null,
    updatedAt: new Date(metadata.createdAt),
  });
}
