// How a workspace tool becomes a tool an objective offers the model (an
// ObjectiveTool): the one place this is decided, for tools assigned to the
// variation (directly or through tool sets, objective.service.ts) and for
// tools `search_tools` finds (src/search/tool-discovery.service.ts), so a
// found tool runs exactly as an assigned one does.
import { toResourceMetadata } from '../resource/metadata';
import { executableTool } from '../tools/tool-call-outcome';
import { effectTimeoutMsFor } from '../tools/tool-executor';
import type { ToolRecord } from '../tools/records';
import { modelToolName } from '../tools/tool-name';
import type { ObjectiveTool } from './objective-state';

/**
 * The tool as offered, under its model name (not yet made unique among the
 * objective's other tools: the caller does that, knowing what else is offered).
 * @param requiresApproval an assignment's override, else the tool's own
 */
export function objectiveToolOf(tool: ToolRecord, requiresApproval: boolean): ObjectiveTool {
  return {
    name: modelToolName(tool.name),
    description: tool.description ?? tool.name,
    inputSchema: tool.inputSchema ?? { type: 'object', properties: {} },
    requiresApproval,
    effectTimeoutMs: effectTimeoutMsFor(tool),
    executable: executableTool(tool),
    metadata: toResourceMetadata(tool, tool.workspaceId),
  };
}
