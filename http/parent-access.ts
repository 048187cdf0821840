// The `checkAccess` of routes below a parent resource (an agent's variations
// and schedules, a variation's assignments, a layer's entries, a tool set's
// tools, an objective's messages): the parent the path names is looked up
// before the body is read, as the workspace is, so a caller for whom it is
// not there gets its 404 whatever the body, never the body schema's
// complaints. One checker per parent kind, shared by every route below it.
import type { AgentService } from '../src/agents/agent.service';
import type { VariationService } from '../src/agents/variation.service';
import type { WorkspaceRef } from '../src/auth/workspace-access';
import type { MemoryLayerService } from '../src/memory/memory-layer.service';
import type { ObjectiveService } from '../src/objectives/objective.service';
import type { ToolSetService } from '../src/tools/tool-set.service';
import type { AccessRequest } from './route';

type ParentCheck<Param extends string> = (request: AccessRequest<Record<Param, string>>) => Promise<void>;

/** Finds the parent named by the path parameter `param`; the finder throws its NotFoundError. */
function parentAccess<Param extends string>(param: Param, find: (workspace: WorkspaceRef, id: string) => Promise<unknown>): ParentCheck<Param> {
  return async ({ workspace, params }) => {
    await find(workspace, params[param]);
  };
}

/** The agent of `{agentId}`. */
export const agentAccess = (agents: Pick<AgentService, 'find'>) => parentAccess('agentId', (workspace, id) => agents.find(workspace, id));

/** The variation of `{variationParam}`, and of `{agentId}` when the path names the agent too. */
export function variationAccess(variations: Pick<VariationService, 'find'>, variationParam: string) {
  // The path schema made every parameter of the route's path present.
  return async ({ workspace, params }: AccessRequest<Record<string, string | undefined>>): Promise<void> => {
    await variations.find(workspace, params.agentId, params[variationParam] as string);
  };
}

/** The memory layer of `{memoryLayerId}`. */
export const memoryLayerAccess = (layers: Pick<MemoryLayerService, 'find'>) => parentAccess('memoryLayerId', (workspace, id) => layers.find(workspace, id));

/** The tool set of `{id}` (its tools). */
export const toolSetAccess = (toolSets: Pick<ToolSetService, 'find'>) => parentAccess('id', (workspace, id) => toolSets.find(workspace, id));

/** The objective of `{id}` (its messages, tool calls and feedback). */
export const objectiveAccess = (objectives: Pick<ObjectiveService, 'find'>) => parentAccess('id', (workspace, id) => objectives.find(workspace, id));
