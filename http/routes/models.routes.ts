// Models (spec 4.6): flat paths on the caller's workspace; reads need
// `workspaces:read`, enabling and disabling `workspaces:manage`. Workspace
// models (api-decisions.md "Extensions"): the same reads on workspace-addressed
// paths, and create, update and delete there (`workspaces:manage`; catalog
// models refuse update and delete).
import type { ModelService } from '../../src/models/model.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds } from '../../src/schemas/common.schema';
import { CreateModelBody, ListModelsQuery, Model, SetModelStatusBody, UpdateModelBody, type ListModelsQuery as ListQuery } from '../../src/schemas/models.schema';
import { defineRoute, type RouteDefinition } from '../route';

const ModelPath = PathIds({ id: 'model' });
const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const WorkspaceModelPath = PathIds({ workspaceId: 'workspace', id: 'model' });
const BASE = '/v1/workspaces/{workspaceId}/models';
/** Server-set spec fields a client may send back from a read: ignored. */
const MODEL_READ_ONLY = ['spec.family', 'spec.provider', 'spec.status', 'spec.source'];

const listFilter = (query: ListQuery) => ({ prefix: query.prefix, labels: parseLabelSelector(query.labels), status: query.status, source: query.source });

export function modelRoutes({ models }: { models: ModelService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/models', operationId: 'listModels', summary: 'List the workspace models (catalog and workspace models)', scope: 'workspaces:read', workspace: 'flat',
      query: ListModelsQuery, response: ListOf(Model),
      handler: ({ workspace, query }) => models.list(workspace, pageRequest(query), listFilter(query)),
    }),
    defineRoute({
      method: 'GET', path: '/v1/models/{id}', operationId: 'getModel', summary: 'Get a model', scope: 'workspaces:read', workspace: 'flat',
      params: ModelPath, response: Model,
      handler: ({ workspace, params }) => models.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/models/{id}/status', operationId: 'setModelStatus', summary: 'Enable or disable a model', scope: 'workspaces:manage', workspace: 'flat',
      params: ModelPath, body: SetModelStatusBody, response: Model,
      handler: ({ workspace, params, body }) => models.setStatus(workspace, params.id, body.status),
    }),
    defineRoute({
      method: 'GET', path: BASE, operationId: 'listWorkspaceModels', summary: 'List the models of a workspace (catalog and workspace models)', scope: 'workspaces:read', workspace: 'path',
      params: WorkspacePath, query: ListModelsQuery, response: ListOf(Model),
      handler: ({ workspace, query }) => models.list(workspace, pageRequest(query), listFilter(query)),
    }),
    defineRoute({
      method: 'POST', path: BASE, operationId: 'createWorkspaceModel', summary: 'Add a model served through one of the workspace\'s AI provider keys', scope: 'workspaces:manage', workspace: 'path',
      params: WorkspacePath, body: CreateModelBody, readOnlyFields: MODEL_READ_ONLY, response: Model, idempotent: true,
      handler: ({ principal, workspace, body }) => models.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: `${BASE}/{id}`, operationId: 'getWorkspaceModel', summary: 'Get a model of a workspace', scope: 'workspaces:read', workspace: 'path',
      params: WorkspaceModelPath, response: Model,
      handler: ({ workspace, params }) => models.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: `${BASE}/{id}`, operationId: 'updateWorkspaceModel', summary: 'Update a workspace model (not a catalog model)', scope: 'workspaces:manage', workspace: 'path',
      params: WorkspaceModelPath, body: UpdateModelBody, readOnlyFields: MODEL_READ_ONLY, response: Model, conditional: true,
      handler: ({ workspace, params, body, headers }) => models.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: `${BASE}/{id}`, operationId: 'deleteWorkspaceModel', summary: 'Delete a workspace model no variation uses (not a catalog model)', scope: 'workspaces:manage', workspace: 'path',
      params: WorkspaceModelPath, response: Empty,
      handler: async ({ workspace, params }) => (await models.delete(workspace, params.id), {}),
    }),
  ];
}
