// SearchStore over Postgres full-text search. Every searchable table carries a
// generated, weighted `search_tsv` column with a GIN index (migrations
// 1763794800000-TenantsSearchBundles and 1763816400000-Objectives), so whatever
// writes a row keeps the index current in the same transaction. A search is one UNION ALL over the tables of
// the requested types, ranked by ts_rank and cut to the limit before the
// (costlier) ts_headline snippets are computed.
import type { DataSource } from 'typeorm';
import { SearchType, type SearchHitRecord, type SearchStore, type ToolHitRecord } from '../../src/ports/search-store';

/** The text configuration of the generated columns; queries must use the same one. */
export const SEARCH_CONFIG = 'english';
/** Characters beyond this in a memory entry's content are not indexed. */
export const INDEXED_CONTENT_CHARS = 100_000;
const HEADLINE_OPTIONS = 'MaxFragments=2, MaxWords=24, MinWords=6, FragmentDelimiter=" … ", StartSel=**, StopSel=**';

interface Source {
  table: string;
  /** The owning bundle's key (memory entries and objectives have none of their own). */
  bundleKey: string;
  /** The text snippets are cut from; the same fields the generated column indexes. */
  document: string;
  /** The hit's `metadata.name` (objectives have no name: their id). @default t.name */
  name?: string;
}

const SOURCES: Record<SearchType, Source> = {
  [SearchType.AGENTS]: { table: 'agents', bundleKey: 't.bundle_key', document: "concat_ws(' ', t.name, t.description)" },
  [SearchType.TOOLS]: { table: 'tools', bundleKey: 't.bundle_key', document: "concat_ws(' ', t.name, t.description)" },
  [SearchType.TOOL_SETS]: { table: 'tool_sets', bundleKey: 't.bundle_key', document: "concat_ws(' ', t.name, t.description)" },
  [SearchType.MEMORY_ENTRIES]: {
    table: 'memory_entries',
    bundleKey: 'NULL::text',
    document: `concat_ws(' ', t.key, t.title, t.description, left(t.content, ${INDEXED_CONTENT_CHARS}))`,
  },
  // External id (split like the index splits it, so its matches are highlighted), label values, and the
  // first user message (initialMessage, else data as JSON).
  [SearchType.OBJECTIVES]: {
    table: 'objectives',
    bundleKey: 'NULL::text',
    name: 't.id',
    document: `concat_ws(' ', translate(t.external_id, '/_.:', '    '), (SELECT string_agg(l.value, ' ') FROM jsonb_each_text(t.labels) l),
      left(coalesce(t.initial_message, t.data::text), ${INDEXED_CONTENT_CHARS}))`,
  },
};

interface HitRow {
  type: SearchType;
  id: string;
  account_id: string;
  workspace_id: string;
  name: string;
  external_id: string | null;
  labels: Record<string, string> | null;
  profile_id: string | null;
  bundle_key: string | null;
  created_at: Date;
  updated_at: Date;
  score: number;
  snippet: string;
}

function branch(type: SearchType): string {
  const source = SOURCES[type];
  return `(SELECT '${type}'::text AS type, t.id, t.account_id, t.workspace_id, ${source.name ?? 't.name'} AS name, t.external_id, t.labels, t.profile_id,
      ${source.bundleKey} AS bundle_key, t.created_at, t.updated_at, ${source.document} AS document,
      ts_rank(t.search_tsv, q.query, 32) AS score
    FROM ${source.table} t, q WHERE t.workspace_id = $1 AND t.search_tsv @@ q.query)`;
}

function searchSql(types: readonly SearchType[]): string {
  return `
    WITH q AS (SELECT websearch_to_tsquery('${SEARCH_CONFIG}', $2) AS query),
    hits AS (${types.map(branch).join(' UNION ALL ')} ORDER BY score DESC, id LIMIT $3)
    SELECT hits.type, hits.id, hits.account_id, hits.workspace_id, hits.name, hits.external_id, hits.labels, hits.profile_id,
      hits.bundle_key, hits.created_at, hits.updated_at, hits.score,
      ts_headline('${SEARCH_CONFIG}', hits.document, q.query, '${HEADLINE_OPTIONS}') AS snippet
    FROM hits, q ORDER BY hits.score DESC, hits.id`;
}

function toHit(row: HitRow): SearchHitRecord {
  return {
    type: row.type,
    metadata: {
      id: row.id,
      accountId: row.account_id,
      workspaceId: row.workspace_id,
      name: row.name,
      externalId: row.external_id,
      labels: row.labels ?? {},
      profileId: row.profile_id,
      bundleKey: row.bundle_key,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
    },
    snippet: row.snippet,
    score: Number(row.score),
  };
}

export function createSearchStore(dataSource: DataSource): SearchStore {
  return {
    async search(workspaceId, query, types, limit) {
      if (!types.length) return [];
      const rows: HitRow[] = await dataSource.query(searchSql(types), [workspaceId, query, limit]);
      return rows.map(toHit);
    },
    async rankTools(workspaceId, terms, limit, minScore) {
      if (!terms.length) return [];
      // Terms are letters and digits only (discoveryTerms), so joining them with
      // `|` builds an OR query with no other syntax in it.
      const rows: Array<{ id: string; name: string; description: string | null; score: number }> = await dataSource.query(
        `SELECT t.id, t.name, t.description, ts_rank(t.search_tsv, q.query, 32) AS score
         FROM tools t, to_tsquery('${SEARCH_CONFIG}', $2) AS q(query)
         WHERE t.workspace_id = $1 AND t.search_tsv @@ q.query AND ts_rank(t.search_tsv, q.query, 32) >= $3
         ORDER BY score DESC, t.id LIMIT $4`,
        [workspaceId, terms.join(' | '), minScore, limit],
      );
      return rows.map((row): ToolHitRecord => ({ id: row.id, name: row.name, description: row.description, score: Number(row.score) }));
    },
  };
}
