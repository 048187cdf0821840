// Wire shapes of workspace search (api-decisions.md "Search and bundles").
import { Type, type Static } from '@sinclair/typebox';
import { ResourceMetadata, Strict } from './common.schema';

export const SEARCH_QUERY_MAX = 1000;

export const SearchQuery = Strict({
  query: Type.Optional(Type.String({ maxLength: SEARCH_QUERY_MAX, description: 'Words, "quoted phrases", OR, and -excluded words' })),
  types: Type.Optional(Type.String({ description: 'Comma-separated: agents, tools, tool_sets, memory_entries, objectives (default all)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 20; values above 100 are clamped' })),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const SearchResultType = Type.Union([
  Type.Literal('agents'),
  Type.Literal('tools'),
  Type.Literal('tool_sets'),
  Type.Literal('memory_entries'),
  Type.Literal('objectives'),
]);

export const SearchResult = Type.Object({
  type: SearchResultType,
  metadata: ResourceMetadata,
  snippet: Type.String({ description: 'Matching fragments; each match is wrapped in **' }),
  score: Type.Number({ description: 'Relevance in [0, 1): ts_rank / (ts_rank + 1)' }),
});
export type SearchResult = Static<typeof SearchResult>;

export const SearchResponse = Type.Object({ items: Type.Array(SearchResult) });
export type SearchResponse = Static<typeof SearchResponse>;
