// Agent variations, their assignments and memory layer assignments (spec 4.9):
// the workspace-addressed and the flat path styles, declared once each by the
// same builders and served by the same service calls.
import type { AgentService } from '../../src/agents/agent.service';
import type { AssignmentService } from '../../src/agents/assignment.service';
import type { VariationService } from '../../src/agents/variation.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import {
  AgentVariation,
  CreateAssignmentBody,
  CreateMemoryLayerAssignmentBody,
  CreateVariationBody,
  MemoryLayerAssignment,
  UpdateMemoryLayerAssignmentBody,
  UpdateVariationBody,
  VariationAssignment,
} from '../../src/schemas/agents.schema';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import type { IdKind } from '../../src/ids';
import { agentAccess, variationAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';

const ListQuery = Strict(listParamProperties);

interface PathStyle {
  /** Prefix up to the agent's variations collection. */
  variations: string;
  /** Prefix of one variation's sub-resources, with `{variationParam}` in it. */
  variation: string;
  variationParam: 'variationId' | 'agentVariationId';
  workspace: 'path' | 'flat';
  suffix: string;
  /** True when the variation paths carry `{agentId}`. */
  assignmentsHaveAgent: boolean;
}

const WORKSPACE_STYLE: PathStyle = {
  variations: '/v1/workspaces/{workspaceId}/agents/{agentId}/variations',
  variation: '/v1/workspaces/{workspaceId}/agents/{agentId}/variations/{variationId}',
  variationParam: 'variationId',
  workspace: 'path',
  suffix: '',
  assignmentsHaveAgent: true,
};
const FLAT_STYLE: PathStyle = {
  variations: '/v1/agents/{agentId}/variations',
  variation: '/v1/agent_variations/{agentVariationId}',
  variationParam: 'agentVariationId',
  workspace: 'flat',
  suffix: 'Flat',
  assignmentsHaveAgent: false,
};

/** Path parameter schema for a style: adds workspaceId on workspace-addressed paths. */
function params<T extends Record<string, IdKind>>(style: PathStyle, ids: T) {
  return PathIds(style.workspace === 'path' ? { workspaceId: 'workspace' as const, ...ids } : ids);
}

function variationRoutesFor(style: PathStyle, variations: VariationService, agents: AgentService): RouteDefinition[] {
  const agentFound = agentAccess(agents);
  const one = `${style.variations}/{id}`;
  const collection = params(style, { agentId: 'agent' });
  const item = params(style, { agentId: 'agent', id: 'agentVariation' });
  return [
    defineRoute({
      method: 'GET', path: style.variations, operationId: `listAgentVariations${style.suffix}`, summary: "List an agent's variations",
      scope: 'agents:read', workspace: style.workspace, params: collection, query: ListQuery, response: ListOf(AgentVariation),
      handler: ({ workspace, params: path, query }) =>
        variations.list(workspace, path.agentId, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: style.variations, operationId: `createAgentVariation${style.suffix}`, summary: 'Create a variation',
      scope: 'agents:manage', workspace: style.workspace, params: collection, body: CreateVariationBody, response: AgentVariation, idempotent: true, checkAccess: agentFound,
      handler: ({ principal, workspace, params: path, body }) => variations.create(principal, workspace, path.agentId, body),
    }),
    defineRoute({
      method: 'GET', path: one, operationId: `getAgentVariation${style.suffix}`, summary: 'Get a variation',
      scope: 'agents:read', workspace: style.workspace, params: item, response: AgentVariation,
      handler: ({ workspace, params: path }) => variations.get(workspace, path.agentId, path.id),
    }),
    defineRoute({
      method: 'PATCH', path: one, operationId: `updateAgentVariation${style.suffix}`, summary: 'Update a variation',
      scope: 'agents:manage', workspace: style.workspace, params: item, body: UpdateVariationBody, response: AgentVariation, conditional: true, checkAccess: agentFound,
      handler: ({ workspace, params: path, body, headers }) => variations.update(workspace, path.agentId, path.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: one, operationId: `deleteAgentVariation${style.suffix}`, summary: 'Delete a variation',
      scope: 'agents:manage', workspace: style.workspace, params: item, response: Empty,
      handler: async ({ workspace, params: path }) => (await variations.delete(workspace, path.agentId, path.id), {}),
    }),
  ];
}

function assignmentRoutesFor(style: PathStyle, assignments: AssignmentService, variations: VariationService): RouteDefinition[] {
  const variationFound = variationAccess(variations, style.variationParam);
  const owner: Record<string, IdKind> = style.assignmentsHaveAgent ? { agentId: 'agent' } : {};
  const collection = params(style, { ...owner, [style.variationParam]: 'agentVariation' } as Record<string, IdKind>);
  const item = (kind: IdKind) => params(style, { ...owner, [style.variationParam]: 'agentVariation', id: kind } as Record<string, IdKind>);
  const ids = (path: Record<string, string>) => ({ agentId: path.agentId as string | undefined, variationId: path[style.variationParam] });
  return [
    defineRoute({
      method: 'POST', path: `${style.variation}/assignments`, operationId: `createVariationAssignment${style.suffix}`,
      summary: 'Assign a tool, tool set or sub-agent to a variation', scope: 'agents:manage', workspace: style.workspace,
      params: collection, body: CreateAssignmentBody, response: VariationAssignment, idempotent: true, checkAccess: variationFound,
      handler: ({ principal, workspace, params: path, body }) => {
        const { agentId, variationId } = ids(path as Record<string, string>);
        return assignments.create(principal, workspace, agentId, variationId, body);
      },
    }),
    defineRoute({
      method: 'DELETE', path: `${style.variation}/assignments/{id}`, operationId: `deleteVariationAssignment${style.suffix}`,
      summary: 'Remove an assignment from a variation', scope: 'agents:manage', workspace: style.workspace,
      params: item('variationAssignment'), response: Empty,
      handler: async ({ workspace, params: path }) => {
        const { agentId, variationId } = ids(path as Record<string, string>);
        return (await assignments.delete(workspace, agentId, variationId, (path as { id: string }).id), {});
      },
    }),
    defineRoute({
      method: 'POST', path: `${style.variation}/memory_layer_assignments`, operationId: `createMemoryLayerAssignment${style.suffix}`,
      summary: "Attach a memory layer to a variation's stack", scope: 'agents:manage', workspace: style.workspace,
      params: collection, body: CreateMemoryLayerAssignmentBody, response: MemoryLayerAssignment, idempotent: true, checkAccess: variationFound,
      handler: ({ principal, workspace, params: path, body }) => {
        const { agentId, variationId } = ids(path as Record<string, string>);
        return assignments.createMemoryLayerAssignment(principal, workspace, agentId, variationId, body);
      },
    }),
    defineRoute({
      method: 'PATCH', path: `${style.variation}/memory_layer_assignments/{id}`, operationId: `updateMemoryLayerAssignment${style.suffix}`,
      summary: "Move a memory layer in a variation's stack", scope: 'agents:manage', workspace: style.workspace,
      params: item('memoryLayerAssignment'), body: UpdateMemoryLayerAssignmentBody, response: MemoryLayerAssignment, checkAccess: variationFound,
      handler: ({ workspace, params: path, body }) => {
        const { agentId, variationId } = ids(path as Record<string, string>);
        return assignments.updateMemoryLayerAssignment(workspace, agentId, variationId, (path as { id: string }).id, body);
      },
    }),
    defineRoute({
      method: 'DELETE', path: `${style.variation}/memory_layer_assignments/{id}`, operationId: `deleteMemoryLayerAssignment${style.suffix}`,
      summary: "Detach a memory layer from a variation's stack", scope: 'agents:manage', workspace: style.workspace,
      params: item('memoryLayerAssignment'), response: Empty,
      handler: async ({ workspace, params: path }) => {
        const { agentId, variationId } = ids(path as Record<string, string>);
        return (await assignments.deleteMemoryLayerAssignment(workspace, agentId, variationId, (path as { id: string }).id), {});
      },
    }),
  ];
}

export function variationRoutes({ variations, assignments, agents }: { variations: VariationService; assignments: AssignmentService; agents: AgentService }): RouteDefinition[] {
  return [WORKSPACE_STYLE, FLAT_STYLE].flatMap((style) => [...variationRoutesFor(style, variations, agents), ...assignmentRoutesFor(style, assignments, variations)]);
}
