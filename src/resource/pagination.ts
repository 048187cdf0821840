// Cursor pagination shared by every list: limit clamping, sort order and opaque
// cursors. A cursor is the id of the last item returned (ids are ULIDs, so id
// order is creation order), encoded so clients treat it as opaque.
import { InvalidArgumentError } from '../errors';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export type SortOrder = 'asc' | 'desc';

export interface PageRequest {
  limit: number;
  sortOrder: SortOrder;
  /** Id after which (in sortOrder) the page starts; undefined for the first page. */
  after?: string;
}

export interface Page<T> {
  items: T[];
  pagination: { nextCursor: string };
}

interface CursorPayload {
  a: string; // the last id returned
  s: SortOrder; // the order the cursor was made for
}

/** Makes the opaque cursor that continues after `lastId`. */
export function encodeCursor(lastId: string, sortOrder: SortOrder): string {
  const payload: CursorPayload = { a: lastId, s: sortOrder };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/**
 * The longest `a` a list makes: an id, an event sequence, or a usage report's
 * `<groupBy>:<key>` (a model id is at most 256 characters).
 */
export const MAX_CURSOR_POSITION_LENGTH = 512;

/**
 * Whether `a` could have come from a list: a string of a sane length without
 * NUL (no stored text holds one; Postgres refuses it in a parameter).
 */
function isPosition(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_CURSOR_POSITION_LENGTH && !value.includes('\u0000');
}

function decodeCursor(cursor: string): CursorPayload {
  try {
    const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof payload === 'object' && payload !== null) {
      const { a, s } = payload as Record<string, unknown>;
      if (isPosition(a) && (s === 'asc' || s === 'desc')) return { a, s };
    }
  } catch {
    // fall through to the error below
  }
  throw InvalidArgumentError.forField('cursor', 'is not a cursor returned by this list');
}

/**
 * Turns list query parameters into a page request: `limit` defaults to 50 and is
 * clamped to 1000; a cursor must come from a list with the same sort order.
 */
export function pageRequest(query: { cursor?: string; limit?: number; sortOrder?: string }): PageRequest {
  const sortOrder: SortOrder = query.sortOrder === 'desc' ? 'desc' : 'asc';
  if (query.sortOrder !== undefined && query.sortOrder !== 'asc' && query.sortOrder !== 'desc') {
    throw InvalidArgumentError.forField('sortOrder', 'must be "asc" or "desc"');
  }
  let limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (limit < 1) throw InvalidArgumentError.forField('limit', 'must be at least 1');
  limit = Math.min(limit, MAX_PAGE_SIZE);
  if (!query.cursor) return { limit, sortOrder };
  const cursor = decodeCursor(query.cursor);
  if (cursor.s !== sortOrder) throw InvalidArgumentError.forField('cursor', 'was made for the other sortOrder');
  return { limit, sortOrder, after: cursor.a };
}

/**
 * Builds a page from up to `limit + 1` rows fetched in order: the extra row only
 * tells that a next page exists.
 */
export function toPage<Row extends { id: string }, Item>(rows: Row[], request: PageRequest, map: (row: Row) => Item): Page<Item> {
  const hasMore = rows.length > request.limit;
  const pageRows = hasMore ? rows.slice(0, request.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(map),
    pagination: { nextCursor: hasMore && last ? encodeCursor(last.id, request.sortOrder) : '' },
  };
}
