// Entity schemas of the objectives read model (migration Objectives): the rows
// the objective actor's projector writes. The store
// (persistence/repositories/objectives.store.ts) writes them with plain SQL and
// maps a row to the port's ObjectiveRecord; these schemas register the tables
// with the data source, type each row and serve the list's query builder.
import { EntitySchema } from 'typeorm';
import type { ObjectiveInfoChange } from '../../src/objectives/objective-events';
import type { ObjectiveEventType, ObjectiveStatus } from '../../src/objectives/objective-state';

export interface ObjectiveRow {
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  variationId: string;
  profileId: string | null;
  externalId: string | null;
  labels: Record<string, string>;
  data: unknown;
  initialMessage: string | null;
  episodicKey: string | null;
  memoryLayerIds: string[];
  tenantId: string | null;
  subjectId: string | null;
  parentObjectiveId: string | null;
  scheduleId: string | null;
  scheduleFireTime: Date | null;
  /** `info.status`, as a column for the filters. */
  status: ObjectiveStatus;
  info: ObjectiveInfoChange;
  /** The sequence of the last event `info` reflects. */
  sequence: number;
  startKey: string | null;
  /** The widget session (`wsess_…`) that created it, or null: the widget host shows a session only its own objectives. */
  widgetSessionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const ObjectiveEntity = new EntitySchema<ObjectiveRow>({
  name: 'Objective',
  tableName: 'objectives',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    agentId: { type: 'text', name: 'agent_id' },
    variationId: { type: 'text', name: 'variation_id' },
    profileId: { type: 'text', name: 'profile_id', nullable: true },
    externalId: { type: 'text', name: 'external_id', nullable: true },
    labels: { type: 'jsonb', default: {} },
    data: { type: 'jsonb', nullable: true },
    initialMessage: { type: 'text', name: 'initial_message', nullable: true },
    episodicKey: { type: 'text', name: 'episodic_key', nullable: true },
    memoryLayerIds: { type: 'jsonb', name: 'memory_layer_ids', default: [] },
    tenantId: { type: 'text', name: 'tenant_id', nullable: true },
    subjectId: { type: 'text', name: 'subject_id', nullable: true },
    parentObjectiveId: { type: 'text', name: 'parent_objective_id', nullable: true },
    scheduleId: { type: 'text', name: 'schedule_id', nullable: true },
    scheduleFireTime: { type: 'timestamptz', name: 'schedule_fire_time', nullable: true },
    status: { type: 'text' },
    info: { type: 'jsonb' },
    sequence: { type: 'integer' },
    startKey: { type: 'text', name: 'start_key', nullable: true },
    widgetSessionId: { type: 'text', name: 'widget_session_id', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
  },
});

export interface ObjectiveEventRow {
  id: string;
  objectiveId: string;
  workspaceId: string;
  sequence: number;
  type: ObjectiveEventType;
  createdAt: Date;
  data: Record<string, unknown>;
  /** The webhook `type` (objective_event.tool_result). */
  webhookType: string;
  /** The webhook envelope `{timestamp, type, data}`, as published. */
  envelope: Record<string, unknown>;
}

export const ObjectiveEventEntity = new EntitySchema<ObjectiveEventRow>({
  name: 'ObjectiveEvent',
  tableName: 'objective_events',
  columns: {
    id: { type: 'text', primary: true },
    objectiveId: { type: 'text', name: 'objective_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    sequence: { type: 'integer' },
    type: { type: 'text' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    data: { type: 'jsonb' },
    webhookType: { type: 'text', name: 'webhook_type' },
    envelope: { type: 'jsonb' },
  },
});
