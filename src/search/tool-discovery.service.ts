// The discovery side of the service tools (issue 25 item 5): `search_tools`
// over the workspace's tools through the search index. SKELETON: filled in
// by the discovery work of issue 25.
import type { ServiceToolContext, ServiceToolOutcome, ToolDiscovery } from '../ports/service-tools';
import type { SearchService } from './search.service';

export class ToolDiscoveryService implements ToolDiscovery {
  constructor(private readonly search: SearchService) {}

  async searchTools(_context: ServiceToolContext, _query: string): Promise<ServiceToolOutcome> {
    void this.search;
    return { ok: false, content: 'search_tools is not available yet' };
  }
}
