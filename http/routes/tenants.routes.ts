// Tenants and subjects (api-decisions.md "Tenants, subjects, uploads"): read and
// erase only; they are created by assertion on objectives and widget sessions.
// An erasure answers its durable job, which GET …/erasures/{id} follows.
import { Type } from '@sinclair/typebox';
import type { TenantService } from '../../src/tenants/tenant.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { ExternalId, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { Erasure, Subject, Tenant } from '../../src/schemas/tenants.schema';
import { defineRoute, type RouteDefinition } from '../route';

const ListQuery = Strict({ ...listParamProperties, externalId: Type.Optional(ExternalId) });
const filterOf = (query: { prefix?: string; labels?: string; externalId?: string }) => ({
  prefix: query.prefix,
  labels: parseLabelSelector(query.labels),
  externalId: query.externalId,
});

export function tenantRoutes({ tenants }: { tenants: TenantService }): RouteDefinition[] {
  const read = { scope: 'workspaces:read', workspace: 'path' } as const;
  const manage = { scope: 'workspaces:manage', workspace: 'path' } as const;
  const TenantPath = PathIds({ workspaceId: 'workspace', id: 'tenant' });
  const SubjectPath = PathIds({ workspaceId: 'workspace', id: 'subject' });
  return [
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/tenants', operationId: 'listTenants', summary: 'List tenants', ...read,
      params: PathIds({ workspaceId: 'workspace' }), query: ListQuery, response: ListOf(Tenant),
      handler: ({ workspace, query }) => tenants.listTenants(workspace, pageRequest(query), filterOf(query), query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/tenants/{id}', operationId: 'getTenant', summary: 'Get a tenant', ...read,
      params: TenantPath, response: Tenant,
      handler: ({ workspace, params }) => tenants.getTenant(workspace, params.id),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/workspaces/{workspaceId}/tenants/{id}', operationId: 'deleteTenant',
      summary: 'Erase a tenant, its subjects and the content of their objectives', ...manage,
      params: TenantPath, response: Erasure,
      handler: ({ workspace, params }) => tenants.deleteTenant(workspace, params.id),
    }),
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/tenants/{tenantId}/subjects', operationId: 'listTenantSubjects', summary: 'List a tenant\'s subjects', ...read,
      params: PathIds({ workspaceId: 'workspace', tenantId: 'tenant' }), query: ListQuery, response: ListOf(Subject),
      handler: ({ workspace, params, query }) => tenants.listSubjects(workspace, params.tenantId, pageRequest(query), filterOf(query)),
    }),
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/subjects/{id}', operationId: 'getSubject', summary: 'Get a subject', ...read,
      params: SubjectPath, response: Subject,
      handler: ({ workspace, params }) => tenants.getSubject(workspace, params.id),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/workspaces/{workspaceId}/subjects/{id}', operationId: 'deleteSubject',
      summary: 'Erase a subject and the content of its objectives', ...manage,
      params: SubjectPath, response: Erasure,
      handler: ({ workspace, params }) => tenants.deleteSubject(workspace, params.id),
    }),
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/erasures/{id}', operationId: 'getErasure', summary: 'Follow a tenant or subject erasure', ...read,
      params: PathIds({ workspaceId: 'workspace', id: 'erasure' }), response: Erasure,
      handler: ({ workspace, params }) => tenants.getErasure(workspace, params.id),
    }),
  ];
}
