// Configuration bundles (api-decisions.md "Search and bundles"): apply a
// document declaratively, read it back, delete what it owns.
import type { BundleService } from '../../src/bundles/bundle.service';
import { Empty } from '../../src/schemas/common.schema';
import { ApplyBundleQuery, BundleDocument, BundlePath, BundlePlan } from '../../src/schemas/bundles.schema';
import { defineRoute, type RouteDefinition } from '../route';

export function bundleRoutes({ bundles }: { bundles: BundleService }): RouteDefinition[] {
  const path = '/v1/workspaces/{workspaceId}/bundles/{bundleKey}';
  return [
    defineRoute({
      method: 'PUT', path, operationId: 'applyBundle',
      summary: 'Apply a bundle document in one transaction (also needs tools:manage / memory:manage when it holds those); answers the plan',
      scope: 'agents:manage', workspace: 'path', params: BundlePath, query: ApplyBundleQuery, body: BundleDocument, response: BundlePlan,
      handler: ({ principal, workspace, params, query, body }) => bundles.apply(principal, workspace, params.bundleKey, body, { dryRun: query.dryRun, adopt: query.adopt }),
    }),
    defineRoute({
      method: 'GET', path, operationId: 'getBundle', summary: 'Get the bundle document rebuilt from the resources it owns',
      scope: 'agents:read', workspace: 'path', params: BundlePath, response: BundleDocument,
      handler: ({ principal, workspace, params }) => bundles.get(principal, workspace, params.bundleKey),
    }),
    defineRoute({
      method: 'DELETE', path, operationId: 'deleteBundle', summary: 'Delete every resource the bundle owns',
      scope: 'agents:manage', workspace: 'path', params: BundlePath, response: Empty,
      handler: async ({ principal, workspace, params }) => (await bundles.delete(principal, workspace, params.bundleKey), {}),
    }),
  ];
}
