// Tool sets: CRUD, membership and MCP sync (api-decisions.md "Tools and tool sets").
import { Type } from '@sinclair/typebox';
import type { ToolSetService } from '../../src/tools/tool-set.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { AddToolBody, CreateToolSetBody, ToolSet, ToolSetSyncResult, UpdateToolSetBody } from '../../src/schemas/tools.schema';
import { toolSetAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const SetPath = PathIds({ workspaceId: 'workspace', id: 'toolSet' });
const MemberPath = PathIds({ workspaceId: 'workspace', id: 'toolSet', toolId: 'tool' });
const ListQuery = Strict(listParamProperties);
const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false }));

export function toolSetRoutes({ toolSets }: { toolSets: ToolSetService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/tool_sets';
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listToolSets', summary: 'List tool sets', scope: 'tools:read', workspace: 'path',
      params: WorkspacePath, query: ListQuery, response: ListOf(ToolSet),
      handler: ({ workspace, query }) => toolSets.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: base, operationId: 'createToolSet', summary: 'Create a tool set', scope: 'tools:manage', workspace: 'path',
      params: WorkspacePath, body: CreateToolSetBody, response: ToolSet, idempotent: true,
      handler: ({ principal, workspace, body }) => toolSets.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}`, operationId: 'getToolSet', summary: 'Get a tool set', scope: 'tools:read', workspace: 'path',
      params: SetPath, response: ToolSet,
      handler: ({ workspace, params }) => toolSets.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: `${base}/{id}`, operationId: 'updateToolSet', summary: 'Update a tool set', scope: 'tools:manage', workspace: 'path',
      params: SetPath, body: UpdateToolSetBody, response: ToolSet, conditional: true,
      handler: ({ principal, workspace, params, body, headers }) => toolSets.update(principal, workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: `${base}/{id}`, operationId: 'deleteToolSet', summary: 'Delete a tool set', scope: 'tools:manage', workspace: 'path',
      params: SetPath, response: Empty,
      handler: async ({ principal, workspace, params }) => (await toolSets.delete(principal, workspace, params.id), {}),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/tools`, operationId: 'addToolSetTool', summary: 'Add a tool to a tool set', scope: 'tools:manage', workspace: 'path',
      params: SetPath, checkAccess: toolSetAccess(toolSets), body: AddToolBody, response: ToolSet, idempotent: true,
      handler: ({ principal, workspace, params, body }) => toolSets.addTool(principal, workspace, params.id, body.toolId),
    }),
    defineRoute({
      method: 'DELETE', path: `${base}/{id}/tools/{toolId}`, operationId: 'removeToolSetTool', summary: 'Remove a tool from a tool set',
      scope: 'tools:manage', workspace: 'path', params: MemberPath, response: Empty,
      handler: async ({ principal, workspace, params }) => (await toolSets.removeTool(principal, workspace, params.id, params.toolId), {}),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/sync`, operationId: 'syncToolSet', summary: "Mirror the MCP server's tool list into the set",
      scope: 'tools:manage', workspace: 'path', params: SetPath, body: NoBody, response: ToolSetSyncResult,
      handler: ({ principal, workspace, params }) => toolSets.sync(principal, workspace, params.id),
    }),
  ];
}
