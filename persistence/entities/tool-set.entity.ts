// Tool set rows and their membership table.
import { EntitySchema } from 'typeorm';
import type { ToolSetRecord } from '../../src/tools/records';
import { workspaceResourceColumns } from './agent.entity';

export const ToolSetEntity = new EntitySchema<ToolSetRecord>({
  name: 'ToolSet',
  tableName: 'tool_sets',
  columns: {
    ...workspaceResourceColumns,
    description: { type: 'text', nullable: true },
    managed: { type: 'boolean' },
    mcpServerUrl: { type: 'text', name: 'mcp_server_url', nullable: true },
    lastSyncedAt: { type: 'timestamptz', name: 'last_synced_at', nullable: true },
  },
});

export interface ToolSetToolRow {
  toolSetId: string;
  toolId: string;
  addedAt: Date;
}

export const ToolSetToolEntity = new EntitySchema<ToolSetToolRow>({
  name: 'ToolSetTool',
  tableName: 'tool_set_tools',
  columns: {
    toolSetId: { type: 'text', name: 'tool_set_id', primary: true },
    toolId: { type: 'text', name: 'tool_id', primary: true },
    addedAt: { type: 'timestamptz', name: 'added_at' },
  },
});
