// Tools (api-decisions.md "Tools and tool sets").
import type { ToolService } from '../../src/tools/tool.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { CreateToolBody, Tool, UpdateToolBody } from '../../src/schemas/tools.schema';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const ToolPath = PathIds({ workspaceId: 'workspace', id: 'tool' });
const ListQuery = Strict(listParamProperties);

export function toolRoutes({ tools }: { tools: ToolService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/tools';
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listTools', summary: 'List tools', scope: 'tools:read', workspace: 'path',
      params: WorkspacePath, query: ListQuery, response: ListOf(Tool),
      handler: ({ workspace, query }) => tools.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: base, operationId: 'createTool', summary: 'Create an HTTP or MCP tool', scope: 'tools:manage', workspace: 'path',
      params: WorkspacePath, body: CreateToolBody, response: Tool, idempotent: true,
      handler: ({ principal, workspace, body }) => tools.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}`, operationId: 'getTool', summary: 'Get a tool', scope: 'tools:read', workspace: 'path',
      params: ToolPath, response: Tool,
      handler: ({ workspace, params }) => tools.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: `${base}/{id}`, operationId: 'updateTool', summary: 'Update a tool', scope: 'tools:manage', workspace: 'path',
      params: ToolPath, body: UpdateToolBody, response: Tool, conditional: true,
      handler: ({ principal, workspace, params, body, headers }) => tools.update(principal, workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: `${base}/{id}`, operationId: 'deleteTool', summary: 'Delete a tool', scope: 'tools:manage', workspace: 'path',
      params: ToolPath, response: Empty,
      handler: async ({ principal, workspace, params }) => (await tools.delete(principal, workspace, params.id), {}),
    }),
  ];
}
