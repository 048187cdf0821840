// Public surface of the search area: workspace search and tool discovery.
export { SearchService, parseSearchTypes, discoveryTerms, type DiscoveryRequest, type SearchRequest } from './search.service';
export { SearchType, type ToolHitRecord } from '../ports/search-store';
