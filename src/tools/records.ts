// Stored records of the tools area (tools, tool sets, their membership), as the
// domain sees them (api-decisions.md "Tools and tool sets").
import type { WorkspaceResourceRecord } from '../agents/records';

export const ToolKind = { HTTP: 'http', MCP: 'mcp' } as const;
export type ToolKind = (typeof ToolKind)[keyof typeof ToolKind];

export const HttpMethod = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HttpMethod)[number];

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

export interface ToolRecord extends WorkspaceResourceRecord {
  description: string | null;
  inputSchema: Record<string, unknown> | null;
  requiresApproval: boolean;
  kind: ToolKind;
  httpUrl: string | null;
  httpMethod: HttpMethod | null;
  /** Header values may hold `{{secrets.NAME}}` placeholders, resolved at call time. */
  httpHeaders: Record<string, string> | null;
  httpTimeoutMs: number | null;
  mcpServerUrl: string | null;
  mcpToolName: string | null;
  /** The MCP-mirroring tool set whose sync created this tool (and removes it). */
  sourceToolSetId: string | null;
}

export interface ToolSetRecord extends WorkspaceResourceRecord {
  description: string | null;
  /** Only API-key principals may change a managed set (spec section 5 item 6). */
  managed: boolean;
  /** The MCP server whose tool list this set mirrors. */
  mcpServerUrl: string | null;
  lastSyncedAt: Date | null;
}
