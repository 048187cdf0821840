// Tool rows: HTTP or MCP tools, flattened to kind-prefixed columns.
import { EntitySchema } from 'typeorm';
import type { ToolRecord } from '../../src/tools/records';
import { workspaceResourceColumns } from './agent.entity';

export const ToolEntity = new EntitySchema<ToolRecord>({
  name: 'Tool',
  tableName: 'tools',
  columns: {
    ...workspaceResourceColumns,
    description: { type: 'text', nullable: true },
    inputSchema: { type: 'jsonb', name: 'input_schema', nullable: true },
    requiresApproval: { type: 'boolean', name: 'requires_approval' },
    kind: { type: 'text' },
    httpUrl: { type: 'text', name: 'http_url', nullable: true },
    httpMethod: { type: 'text', name: 'http_method', nullable: true },
    httpHeaders: { type: 'jsonb', name: 'http_headers', nullable: true },
    httpTimeoutMs: { type: 'integer', name: 'http_timeout_ms', nullable: true },
    mcpServerUrl: { type: 'text', name: 'mcp_server_url', nullable: true },
    mcpToolName: { type: 'text', name: 'mcp_tool_name', nullable: true },
    sourceToolSetId: { type: 'text', name: 'source_tool_set_id', nullable: true },
  },
});
