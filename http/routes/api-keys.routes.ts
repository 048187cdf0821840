// API keys (spec 4.3, api-decisions.md): flat paths on the caller's workspace,
// the workspace-addressed list/create, and enable/disable/rotate.
import { Type } from '@sinclair/typebox';
import type { ApiKeyService } from '../../src/accounts/api-key.service';
import { ApiKeyState } from '../../src/accounts/records';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { ApiKey, CreateApiKeyBody, UpdateApiKeyBody } from '../../src/schemas/account.schema';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { defineRoute, type RouteDefinition } from '../route';

const KeyPath = PathIds({ id: 'apiKey' });
const ListQuery = Strict({ ...listParamProperties, query: Type.Optional(Type.String({ maxLength: 256 })) });
const API_KEY_READ_ONLY = ['state', 'spec.token', 'spec.system'];
const NoBody = Type.Optional(Type.Object({}, { additionalProperties: false }));

export function apiKeyRoutes({ apiKeys }: { apiKeys: ApiKeyService }): RouteDefinition[] {
  const setState = (verb: 'enable' | 'disable', state: ApiKeyState) =>
    defineRoute({
      method: 'PUT', path: `/v1/api_keys/{id}/${verb}`, operationId: `${verb}ApiKey`, summary: `${verb === 'enable' ? 'Enable' : 'Disable'} an API key`,
      scope: 'api_keys:manage', workspace: 'flat', params: KeyPath, body: NoBody, response: ApiKey,
      handler: ({ principal, workspace, params }) => apiKeys.setState(principal, workspace, params.id, state),
    });
  const list = (path: string, operationId: string, workspace: 'flat' | 'path') =>
    defineRoute({
      method: 'GET', path, operationId, summary: 'List API keys', scope: 'api_keys:read', workspace,
      params: workspace === 'path' ? PathIds({ workspaceId: 'workspace' }) : undefined, query: ListQuery, response: ListOf(ApiKey),
      handler: ({ workspace: ws, query }) =>
        apiKeys.list(ws, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), query: query.query }, query.includeInfo ?? false),
    });
  const create = (path: string, operationId: string, workspace: 'flat' | 'path') =>
    defineRoute({
      method: 'POST', path, operationId, summary: 'Create an API key; the token is returned only now', scope: 'api_keys:manage', workspace,
      params: workspace === 'path' ? PathIds({ workspaceId: 'workspace' }) : undefined, body: CreateApiKeyBody, readOnlyFields: API_KEY_READ_ONLY, response: ApiKey, idempotent: true,
      handler: ({ principal, workspace: ws, body }) => apiKeys.create(principal, ws, body),
    });
  return [
    list('/v1/api_keys', 'listApiKeys', 'flat'),
    create('/v1/api_keys', 'createApiKey', 'flat'),
    defineRoute({
      method: 'GET', path: '/v1/api_keys/{id}', operationId: 'getApiKey', summary: 'Get an API key (without its token)',
      scope: 'api_keys:read', workspace: 'flat', params: KeyPath, response: ApiKey,
      handler: ({ workspace, params }) => apiKeys.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/api_keys/{id}', operationId: 'updateApiKey', summary: 'Update an API key',
      scope: 'api_keys:manage', workspace: 'flat', params: KeyPath, body: UpdateApiKeyBody, readOnlyFields: API_KEY_READ_ONLY, response: ApiKey, conditional: true,
      handler: ({ principal, workspace, params, body, headers }) => apiKeys.update(principal, workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/api_keys/{id}', operationId: 'deleteApiKey', summary: 'Delete an API key (never the system key)',
      scope: 'api_keys:manage', workspace: 'flat', params: KeyPath, response: Empty,
      handler: async ({ principal, workspace, params }) => (await apiKeys.delete(principal, workspace, params.id), {}),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/api_keys/{id}/rotate', operationId: 'rotateApiKey', summary: 'Rotate an API key: a new token, every earlier token invalid',
      scope: 'api_keys:manage', workspace: 'flat', params: KeyPath, body: NoBody, response: ApiKey,
      handler: ({ principal, workspace, params }) => apiKeys.rotate(principal, workspace, params.id),
    }),
    setState('enable', ApiKeyState.ENABLED),
    setState('disable', ApiKeyState.DISABLED),
    list('/v1/workspaces/{workspaceId}/api_keys', 'listWorkspaceApiKeys', 'path'),
    create('/v1/workspaces/{workspaceId}/api_keys', 'createWorkspaceApiKey', 'path'),
  ];
}
