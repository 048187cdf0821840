// Usage roll-ups (issue 27 item 2): the workspace's model usage summed per
// agent, variation, tenant or model over a range of hours, read from the
// roll-ups the objectives' turns maintain (src/usage). Reads need the
// objectives' scope: the sums are of their model calls.
import type { UsageService } from '../../src/usage/usage.service';
import { PathIds } from '../../src/schemas/common.schema';
import { UsageQuery, UsageReport } from '../../src/schemas/usage.schema';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });

export function usageRoutes({ usage }: { usage: UsageService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/usage', operationId: 'getUsage',
      summary: 'Model usage and objectives per agent, variation, tenant or model over a range of hours (a page of keys in key order)',
      scope: 'objectives:read', workspace: 'path', params: WorkspacePath, query: UsageQuery, response: UsageReport,
      handler: ({ workspace, query }) => usage.report(workspace, query),
    }),
  ];
}
