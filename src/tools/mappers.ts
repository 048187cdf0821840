// Record → wire mappings of tools and tool sets.
import { toProfile } from '../accounts/mappers';
import type { ProfileRecord } from '../accounts/records';
import { toResourceMetadata } from '../resource/metadata';
import type { Tool, ToolSet } from '../schemas/tools.schema';
import { DEFAULT_TOOL_TIMEOUT_MS, type ToolRecord, type ToolSetRecord } from './records';
import { modelToolName } from './tool-name';

export interface ToolInfo {
  createdBy?: ProfileRecord | null;
  toolSets: ToolSetRecord[];
}

export function toTool(record: ToolRecord, info?: ToolInfo): Tool {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      ...(record.description !== null ? { description: record.description } : {}),
      ...(record.inputSchema ? { inputSchema: record.inputSchema } : {}),
      requiresApproval: record.requiresApproval,
      ...(record.kind === 'http'
        ? {
            http: {
              url: record.httpUrl ?? '',
              method: record.httpMethod ?? 'POST',
              ...(record.httpHeaders ? { headers: record.httpHeaders } : {}),
              timeoutMs: record.httpTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
            },
          }
        : { mcp: { serverUrl: record.mcpServerUrl ?? '', toolName: record.mcpToolName ?? '' } }),
    },
    ...(info
      ? {
          info: {
            ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}),
            modelToolName: modelToolName(record.name),
            toolSets: info.toolSets.map((set) => ({ id: set.id, name: set.name })),
            ...(record.sourceToolSetId ? { sourceToolSetId: record.sourceToolSetId } : {}),
          },
        }
      : {}),
  };
}

export interface ToolSetInfo {
  createdBy?: ProfileRecord | null;
  tools: ToolRecord[];
}

export function toToolSet(record: ToolSetRecord, info?: ToolSetInfo): ToolSet {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      ...(record.description !== null ? { description: record.description } : {}),
      managed: record.managed,
      ...(record.mcpServerUrl ? { mcpServerUrl: record.mcpServerUrl } : {}),
    },
    ...(info
      ? {
          info: {
            ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}),
            toolCount: info.tools.length,
            tools: info.tools.map((tool) => ({ id: tool.id, name: tool.name })),
            ...(record.lastSyncedAt ? { lastSyncedAt: record.lastSyncedAt.toISOString() } : {}),
          },
        }
      : {}),
  };
}
