// The one implementation of list paging over TypeORM: keyset on the ULID id in
// the requested order, `limit + 1` rows, id-or-name prefix and label filters.
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { ListFilter } from '../../src/ports/foundation-store';
import type { PageRequest } from '../../src/resource/pagination';

/** Escapes LIKE wildcards so a user prefix matches literally. */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * Applies paging and the standard filters to a query on `alias` and fetches
 * `limit + 1` rows.
 * @param nameColumn the column `prefix` matches besides the id (default `name`)
 */
export async function fetchPage<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  alias: string,
  page: PageRequest,
  filter: ListFilter = {},
  nameColumn = 'name',
): Promise<T[]> {
  if (filter.prefix) {
    query.andWhere(`(${alias}.id LIKE :listPrefix OR ${alias}.${nameColumn} LIKE :listPrefix)`, { listPrefix: likePrefix(filter.prefix) });
  }
  if (filter.labels && Object.keys(filter.labels).length) {
    query.andWhere(`${alias}.labels @> :listLabels::jsonb`, { listLabels: JSON.stringify(filter.labels) });
  }
  const ascending = page.sortOrder === 'asc';
  if (page.after) query.andWhere(`${alias}.id ${ascending ? '>' : '<'} :listAfter`, { listAfter: page.after });
  return query
    .orderBy(`${alias}.id`, ascending ? 'ASC' : 'DESC')
    .take(page.limit + 1)
    .getMany();
}
