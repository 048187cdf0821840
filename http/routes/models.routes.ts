// Models (spec 4.6): flat paths on the caller's workspace; reads need
// `workspaces:read`, enabling and disabling `workspaces:manage`.
import type { ModelService } from '../../src/models/model.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { ListOf, PathIds } from '../../src/schemas/common.schema';
import { ListModelsQuery, Model, SetModelStatusBody } from '../../src/schemas/models.schema';
import { defineRoute, type RouteDefinition } from '../route';

const ModelPath = PathIds({ id: 'model' });

export function modelRoutes({ models }: { models: ModelService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/models', operationId: 'listModels', summary: 'List the workspace models', scope: 'workspaces:read', workspace: 'flat',
      query: ListModelsQuery, response: ListOf(Model),
      handler: ({ workspace, query }) =>
        models.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), status: query.status }),
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
  ];
}
