// Entity schema of the agent schedules read model (migration Schedules): the
// rows the schedule actor's projector writes. The store
// (persistence/repositories/schedules.store.ts) writes them with plain SQL; this
// schema registers the table, types each row and serves the list's query builder.
import { EntitySchema } from 'typeorm';
import type { ScheduleInfo, ScheduleSpec, ScheduleStatus } from '../../src/schedules/schedule-record';

export interface ScheduleRow {
  id: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  profileId: string;
  name: string;
  externalId: string | null;
  labels: Record<string, string>;
  bundleKey: string | null;
  spec: ScheduleSpec;
  status: ScheduleStatus;
  info: ScheduleInfo;
  createdAt: Date;
  updatedAt: Date;
  revision: number;
}

export const ScheduleEntity = new EntitySchema<ScheduleRow>({
  name: 'AgentSchedule',
  tableName: 'agent_schedules',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    agentId: { type: 'text', name: 'agent_id' },
    profileId: { type: 'text', name: 'profile_id' },
    name: { type: 'text' },
    externalId: { type: 'text', name: 'external_id', nullable: true },
    labels: { type: 'jsonb', default: {} },
    bundleKey: { type: 'text', name: 'bundle_key', nullable: true },
    spec: { type: 'jsonb' },
    status: { type: 'text' },
    info: { type: 'jsonb' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
    revision: { type: 'integer' },
  },
});
