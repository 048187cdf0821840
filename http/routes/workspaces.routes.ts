// Workspace administration (spec 4.2): admin role, account-scoped.
import { Type } from '@sinclair/typebox';
import type { WorkspaceService } from '../../src/accounts/workspace.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { AddMemberBody, CreateWorkspaceBody, UpdateWorkspaceBody, Workspace, WorkspaceMember } from '../../src/schemas/account.schema';
import { Empty, ListOf, PathIds, Profile, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { defineRoute, type AccessRequest, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });

export function workspaceRoutes({ workspaces }: { workspaces: WorkspaceService }): RouteDefinition[] {
  const admin = { scope: 'account:manage', admin: true, workspace: 'none' } as const;
  // The account's workspace is checked before the body (the ladder resolves only workspace-bound routes' own).
  const ownWorkspace = async ({ principal, params }: AccessRequest<{ workspaceId: string }>) => void (await workspaces.get(principal, params.workspaceId));
  return [
    defineRoute({
      method: 'GET', path: '/v1/account/workspaces', operationId: 'listWorkspaces', summary: 'List workspaces', ...admin,
      query: Strict({ ...listParamProperties, includeArchived: Type.Optional(Type.Boolean()) }),
      response: ListOf(Workspace),
      handler: ({ principal, query }) =>
        workspaces.list(principal, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), includeArchived: query.includeArchived ?? false }),
    }),
    defineRoute({
      method: 'POST', path: '/v1/account/workspaces', operationId: 'createWorkspace', summary: 'Create a workspace', ...admin,
      body: CreateWorkspaceBody, readOnlyFields: ['status'], response: Workspace, idempotent: true,
      handler: ({ principal, body }) => workspaces.create(principal, body),
    }),
    defineRoute({
      method: 'GET', path: '/v1/account/workspaces/{workspaceId}', operationId: 'getWorkspace', summary: 'Get a workspace', ...admin,
      params: WorkspacePath, response: Workspace,
      handler: ({ principal, params }) => workspaces.get(principal, params.workspaceId),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/account/workspaces/{workspaceId}', operationId: 'updateWorkspace', summary: 'Update a workspace', ...admin,
      params: WorkspacePath, body: UpdateWorkspaceBody, readOnlyFields: ['status'], response: Workspace, conditional: true, checkAccess: ownWorkspace,
      handler: ({ principal, params, body, headers }) => workspaces.update(principal, params.workspaceId, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/account/workspaces/{workspaceId}', operationId: 'archiveWorkspace', summary: 'Archive a workspace (soft delete)', ...admin,
      params: WorkspacePath, response: Empty,
      handler: async ({ principal, params }) => (await workspaces.archive(principal, params.workspaceId), {}),
    }),
    defineRoute({
      method: 'GET', path: '/v1/account/workspaces/{workspaceId}/members', operationId: 'listWorkspaceMembers', summary: 'List workspace members', ...admin,
      params: WorkspacePath, query: Strict({ cursor: listParamProperties.cursor, limit: listParamProperties.limit }), response: ListOf(WorkspaceMember),
      handler: ({ principal, params, query }) => workspaces.listMembers(principal, params.workspaceId, pageRequest(query)),
    }),
    defineRoute({
      method: 'POST', path: '/v1/account/workspaces/{workspaceId}/members', operationId: 'addWorkspaceMember', summary: 'Add a member by email (resolve or invite) or profile id', ...admin,
      params: WorkspacePath, body: AddMemberBody, response: WorkspaceMember, idempotent: true, checkAccess: ownWorkspace,
      handler: ({ principal, params, body }) => workspaces.addMember(principal, params.workspaceId, body),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/account/workspaces/{workspaceId}/members/{profileId}', operationId: 'removeWorkspaceMember', summary: 'Remove a member; access ends at once', ...admin,
      params: PathIds({ workspaceId: 'workspace', profileId: 'profile' }), response: Empty,
      handler: async ({ principal, params }) => (await workspaces.removeMember(principal, params.workspaceId, params.profileId), {}),
    }),
    defineRoute({
      method: 'GET', path: '/v1/account/profiles', operationId: 'searchProfiles', summary: 'Search the account\'s profiles by name or email', ...admin,
      query: Strict({ cursor: listParamProperties.cursor, limit: listParamProperties.limit, query: Type.Optional(Type.String({ maxLength: 256 })) }),
      response: ListOf(Profile),
      handler: ({ principal, query }) => workspaces.searchProfiles(principal, query.query, pageRequest(query)),
    }),
  ];
}
