// Uploads (api-decisions.md "Tenants, subjects, uploads"): create, get and
// complete on the caller's workspace (workspaces:manage / workspaces:read), and
// the service's own signed PUT URL for local storage, authorised by its
// signature instead of a bearer token.
import { scopeAllows } from '../../src/auth/scopes';
import type { UploadService } from '../../src/uploads/upload.service';
import { Empty, PathIds } from '../../src/schemas/common.schema';
import { CreateUploadBody, SignedUploadQuery, Upload } from '../../src/schemas/uploads.schema';
import { readLimited } from '../middleware/json-body';
import { defineRoute, type RouteDefinition } from '../route';

const UploadPath = PathIds({ id: 'upload' });

export function uploadRoutes({ uploads }: { uploads: UploadService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'POST', path: '/v1/uploads', operationId: 'createUpload', summary: 'Create an upload and its signed PUT URL (valid 15 minutes)',
      scope: 'workspaces:manage', workspace: 'flat', body: CreateUploadBody, response: Upload, idempotent: true,
      handler: ({ principal, workspace, body }) => uploads.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: '/v1/uploads/{id}', operationId: 'getUpload', summary: 'Get an upload (its uploadUrl only for workspaces:manage)',
      scope: 'workspaces:read', workspace: 'flat', params: UploadPath, response: Upload,
      handler: ({ principal, workspace, params }) => uploads.get(workspace, params.id, scopeAllows(principal.scopes, 'workspaces:manage')),
    }),
    defineRoute({
      method: 'POST', path: '/v1/uploads/{id}/complete', operationId: 'completeUpload', summary: 'Check the uploaded size and mark the upload COMPLETE',
      scope: 'workspaces:manage', workspace: 'flat', params: UploadPath, response: Upload,
      handler: ({ workspace, params }) => uploads.complete(workspace, params.id),
    }),
    defineRoute({
      method: 'PUT', path: '/v1/uploads/{id}/content', operationId: 'putUploadContent',
      summary: 'Receive the bytes of an upload at its signed URL (local storage only; no bearer token)',
      scope: 'none', auth: 'none', workspace: 'none', params: UploadPath, query: SignedUploadQuery, response: Empty,
      handler: async ({ params, query, koa }) => (await uploads.receive(params.id, query, (limit) => readLimited(koa, limit)), {}),
    }),
  ];
}
