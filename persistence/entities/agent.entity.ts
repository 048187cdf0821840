// Agent rows (spec 2.13), plus the column set every bundle-ownable workspace
// resource of the agents and tools areas shares.
import { EntitySchema, type EntitySchemaColumnOptions } from 'typeorm';
import type { AgentRecord, WorkspaceResourceRecord } from '../../src/agents/records';
import { metadataColumns } from './columns';

export const workspaceResourceColumns = {
  ...metadataColumns,
  workspaceId: { type: 'text', name: 'workspace_id' },
  bundleKey: { type: 'text', name: 'bundle_key', nullable: true },
} satisfies Record<keyof WorkspaceResourceRecord, EntitySchemaColumnOptions>;

export const AgentEntity = new EntitySchema<AgentRecord>({
  name: 'Agent',
  tableName: 'agents',
  columns: {
    ...workspaceResourceColumns,
    status: { type: 'text' },
    variationSelectionMode: { type: 'text', name: 'variation_selection_mode' },
    description: { type: 'text', nullable: true },
    inputDataSchema: { type: 'jsonb', name: 'input_data_schema', nullable: true },
    outputDefinition: { type: 'jsonb', name: 'output_definition', nullable: true },
    webhookEventsUrl: { type: 'text', name: 'webhook_events_url', nullable: true },
  },
});
