// Full-text search over a workspace's agents, tools, tool sets, memory entries
// and objectives (api-decisions.md "Search and bundles"), and progressive tool
// discovery (spec 2.14 `progressiveDiscovery`) over the same index.
import { InvalidArgumentError } from '../errors';
import type { WorkspaceRef } from '../auth/workspace-access';
import { SearchType, type SearchStore, type ToolHitRecord } from '../ports/search-store';
import { toResourceMetadata } from '../resource/metadata';
import { SEARCH_QUERY_MAX, type SearchResponse } from '../schemas/search.schema';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_MAX_TOOLS = 10;
export const MAX_DISCOVERED_TOOLS = 100;
const ALL_TYPES: string[] = Object.values(SearchType);

/** A search request as the route passes it. */
export interface SearchRequest {
  query?: string;
  /** Comma-separated type names; absent or empty means every type. */
  types?: string;
  limit?: number;
}

/** What progressive discovery asks for (a variation's `progressiveDiscovery` plus the model's query). */
export interface DiscoveryRequest {
  /** The model's `search_tools` query. */
  query?: string;
  /** The variation's hints, searched together with the query. */
  hints?: readonly string[];
  /** At most this many tools per search (default 10, at most 100). */
  maxTools?: number;
  /** Minimum score a tool must reach (scores are in [0, 1), so 1 or more keeps none); absent or 0 keeps every match. */
  rerankThreshold?: number;
}

/**
 * Parses the `types` parameter into the types to search.
 * @throws InvalidArgumentError naming `types` for an unknown type
 */
export function parseSearchTypes(raw: string | undefined): SearchType[] {
  const names = (raw ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (!names.length) return [...ALL_TYPES] as SearchType[];
  for (const name of names) {
    if (!ALL_TYPES.includes(name)) {
      throw InvalidArgumentError.forField('types', `unknown type "${name}" (one of ${ALL_TYPES.join(', ')})`);
    }
  }
  return [...new Set(names)] as SearchType[];
}

/**
 * The distinct words of discovery text (letters and digits only), so the OR
 * query built from them holds no query syntax.
 */
export function discoveryTerms(texts: readonly string[]): string[] {
  const words = texts.flatMap((text) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter((word) => word.length > 0 && word.length <= 64);
  return [...new Set(words)].slice(0, 64);
}

export class SearchService {
  constructor(private readonly store: SearchStore) {}

  /**
   * Ranked full-text search: best match first, with snippets.
   * @throws InvalidArgumentError naming `query` (empty) or `types` (unknown type)
   */
  async search(workspace: WorkspaceRef, request: SearchRequest): Promise<SearchResponse> {
    const query = (request.query ?? '').trim();
    if (!query) throw InvalidArgumentError.forField('query', 'must not be empty');
    if (query.length > SEARCH_QUERY_MAX) throw InvalidArgumentError.forField('query', `must be at most ${SEARCH_QUERY_MAX} characters`);
    if (query.includes('\u0000')) throw InvalidArgumentError.forField('query', 'must not contain NUL characters');
    const types = parseSearchTypes(request.types);
    const limit = Math.min(request.limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
    if (limit < 1) throw InvalidArgumentError.forField('limit', 'must be at least 1');
    const hits = await this.store.search(workspace.id, query, types, limit);
    return {
      items: hits.map((hit) => ({ type: hit.type, metadata: toResourceMetadata(hit.metadata, hit.metadata.workspaceId), snippet: hit.snippet, score: hit.score })),
    };
  }

  /**
   * Progressive tool discovery: the workspace's tools matching any word of the
   * query or the hints, best first, at most `maxTools`, each scoring at least
   * `rerankThreshold`. No words (empty query and hints) finds nothing.
   * @throws InvalidArgumentError naming `maxTools` (below 1) or `rerankThreshold` (negative)
   */
  async discoverTools(workspaceId: string, request: DiscoveryRequest): Promise<ToolHitRecord[]> {
    const maxTools = request.maxTools ?? DEFAULT_MAX_TOOLS;
    if (!Number.isInteger(maxTools) || maxTools < 1) throw InvalidArgumentError.forField('maxTools', 'must be a positive integer');
    const threshold = request.rerankThreshold ?? 0;
    if (!(Number.isFinite(threshold) && threshold >= 0)) throw InvalidArgumentError.forField('rerankThreshold', 'must be a number of at least 0');
    const terms = discoveryTerms([request.query ?? '', ...(request.hints ?? [])]);
    if (!terms.length) return [];
    return this.store.rankTools(workspaceId, terms, Math.min(maxTools, MAX_DISCOVERED_TOOLS), threshold);
  }
}
