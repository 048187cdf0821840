// Workspace search (api-decisions.md "Search and bundles"): ranked full-text
// search over agents, tools, tool sets and memory entries.
import type { SearchService } from '../../src/search/search.service';
import { PathIds } from '../../src/schemas/common.schema';
import { SearchQuery, SearchResponse } from '../../src/schemas/search.schema';
import { defineRoute, type RouteDefinition } from '../route';

export function searchRoutes({ search }: { search: SearchService }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/workspaces/{workspaceId}/search', operationId: 'searchWorkspace',
      summary: 'Full-text search over agents, tools, tool sets and memory entries, best match first',
      scope: 'workspaces:read', workspace: 'path', params: PathIds({ workspaceId: 'workspace' }), query: SearchQuery, response: SearchResponse,
      handler: ({ workspace, query }) => search.search(workspace, query),
    }),
  ];
}
