// The storage port of full-text search (api-decisions.md "Search and bundles").
// persistence/repositories/search.store.ts implements it over the generated
// `search_tsv` columns and GIN indexes of the searchable tables.
import type { MetadataRecord } from '../accounts/records';

/** The searchable resource types, as named by the `types` query parameter. */
export const SearchType = {
  AGENTS: 'agents',
  TOOLS: 'tools',
  TOOL_SETS: 'tool_sets',
  MEMORY_ENTRIES: 'memory_entries',
  OBJECTIVES: 'objectives',
} as const;
export type SearchType = (typeof SearchType)[keyof typeof SearchType];

/**
 * One ranked match with the metadata of the resource it found. An objective,
 * which has no name, is named by its id (its OperationMetadata plus `name` and
 * `updatedAt`).
 */
export interface SearchHitRecord {
  type: SearchType;
  metadata: MetadataRecord & { workspaceId: string; bundleKey: string | null };
  /** Matching fragments, each match wrapped in `**`. */
  snippet: string;
  /** ts_rank normalised to [0, 1) (rank / (rank + 1)); higher is better. */
  score: number;
}

/** A tool found by discovery. */
export interface ToolHitRecord {
  id: string;
  name: string;
  description: string | null;
  score: number;
}

export interface SearchStore {
  /**
   * Ranks the workspace's resources of `types` against a web-search style
   * query (words, "phrases", OR, -exclusion), best first, at most `limit`.
   */
  search(workspaceId: string, query: string, types: readonly SearchType[], limit: number): Promise<SearchHitRecord[]>;
  /**
   * Ranks the workspace's tools matching any of `terms` (OR), best first,
   * keeping those scoring at least `minScore`, at most `limit`.
   */
  rankTools(workspaceId: string, terms: readonly string[], limit: number, minScore: number): Promise<ToolHitRecord[]>;
}
