// Workspace secrets (spec 4.4): flat paths on the caller's workspace; every
// route needs `secrets:manage` (`secrets` has only the manage verb).
import type { WorkspaceSecretService } from '../../src/secrets/workspace-secret.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { CreateWorkspaceSecretBody, UpdateWorkspaceSecretBody, WorkspaceSecret } from '../../src/schemas/secrets.schema';
import { defineRoute, type RouteDefinition } from '../route';

const SecretPath = PathIds({ id: 'workspaceSecret' });
const manage = { scope: 'secrets:manage', workspace: 'flat' } as const;

export function workspaceSecretRoutes({ secrets }: { secrets: WorkspaceSecretService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/workspace_secrets', operationId: 'listWorkspaceSecrets', summary: 'List workspace secrets (values are never returned)', ...manage,
      query: Strict(listParamProperties), response: ListOf(WorkspaceSecret),
      handler: ({ workspace, query }) =>
        secrets.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: '/v1/workspace_secrets', operationId: 'createWorkspaceSecret', summary: 'Create a workspace secret; its value is write-only', ...manage,
      body: CreateWorkspaceSecretBody, response: WorkspaceSecret, idempotent: true,
      handler: ({ principal, workspace, body }) => secrets.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: '/v1/workspace_secrets/{id}', operationId: 'getWorkspaceSecret', summary: 'Get a workspace secret (without its value)', ...manage,
      params: SecretPath, response: WorkspaceSecret,
      handler: ({ workspace, params }) => secrets.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/workspace_secrets/{id}', operationId: 'updateWorkspaceSecret', summary: 'Update a workspace secret', ...manage,
      params: SecretPath, body: UpdateWorkspaceSecretBody, response: WorkspaceSecret, conditional: true,
      handler: ({ workspace, params, body, headers }) => secrets.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/workspace_secrets/{id}', operationId: 'deleteWorkspaceSecret', summary: 'Delete a workspace secret', ...manage,
      params: SecretPath, response: Empty,
      handler: async ({ workspace, params }) => (await secrets.delete(workspace, params.id), {}),
    }),
  ];
}
