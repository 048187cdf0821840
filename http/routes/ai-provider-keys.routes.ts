// AI provider keys (spec 4.5): workspace-addressed paths; every route needs
// `secrets:manage`. `spec.apiKey` is write-only (returned empty).
import type { AiProviderKeyService } from '../../src/secrets/ai-provider-key.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { AiProviderKey, CreateAiProviderKeyBody, UpdateAiProviderKeyBody } from '../../src/schemas/ai-provider-keys.schema';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const KeyPath = PathIds({ workspaceId: 'workspace', id: 'aiProviderKey' });
const manage = { scope: 'secrets:manage', workspace: 'path' } as const;
const BASE = '/v1/workspaces/{workspaceId}/ai_provider_keys';

export function aiProviderKeyRoutes({ providerKeys }: { providerKeys: AiProviderKeyService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: BASE, operationId: 'listAiProviderKeys', summary: 'List AI provider keys', ...manage,
      params: WorkspacePath, query: Strict(listParamProperties), response: ListOf(AiProviderKey),
      handler: ({ workspace, query }) =>
        providerKeys.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: BASE, operationId: 'createAiProviderKey', summary: 'Create an AI provider key; spec.apiKey is write-only', ...manage,
      params: WorkspacePath, body: CreateAiProviderKeyBody, response: AiProviderKey, idempotent: true,
      handler: ({ principal, workspace, body }) => providerKeys.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: `${BASE}/{id}`, operationId: 'getAiProviderKey', summary: 'Get an AI provider key (spec.apiKey empty)', ...manage,
      params: KeyPath, response: AiProviderKey,
      handler: ({ workspace, params }) => providerKeys.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: `${BASE}/{id}`, operationId: 'updateAiProviderKey', summary: 'Update an AI provider key (not a promotional one)', ...manage,
      params: KeyPath, body: UpdateAiProviderKeyBody, response: AiProviderKey, conditional: true,
      handler: ({ workspace, params, body, headers }) => providerKeys.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: `${BASE}/{id}`, operationId: 'deleteAiProviderKey', summary: 'Delete an AI provider key (not a promotional one)', ...manage,
      params: KeyPath, response: Empty,
      handler: async ({ workspace, params }) => (await providerKeys.delete(workspace, params.id), {}),
    }),
  ];
}
