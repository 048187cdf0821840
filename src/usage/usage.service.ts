// The usage report (GET /v1/workspaces/{workspaceId}/usage): the roll-ups'
// sums per key of one dimension over a range of whole hours, a page of keys
// at a time in key order. `from` and `to` are RFC 3339 instants, rounded out
// to whole hours (from down, to up); the default is the 30 days before `to`,
// which defaults to now.
import type { WorkspaceRef } from '../auth/workspace-access';
import { InvalidArgumentError } from '../errors';
import type { UsageStore } from '../ports/usage-store';
import { encodeCursor, pageRequest } from '../resource/pagination';
import type { UsageQuery, UsageReport } from '../schemas/usage.schema';
import { ceilToHour, DAY_MS, floorToHour, NO_TENANT_KEY, type UsageDimension, type UsageRange } from './usage-rollup';

/** The range when the query names none. */
export const DEFAULT_USAGE_RANGE_DAYS = 30;
/** The longest range: a year, a leap day included. */
export const MAX_USAGE_RANGE_DAYS = 366;

function instantOf(field: 'from' | 'to', value: string): number {
  const time = Date.parse(value);
  // The schema's date-time format passed it; a value it allows that Date cannot read (a leap second) lands here.
  if (Number.isNaN(time)) throw InvalidArgumentError.forField(field, 'must be an RFC 3339 date-time');
  return time;
}

/** The instants a range may take, rounded: years 0001 to 9999, the ones RFC 3339 writes (and `toISOString` without a sign). */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:00:00Z');

function withinYears(field: 'from' | 'to', time: number): number {
  if (time < EARLIEST || time > LATEST) throw InvalidArgumentError.forField(field, 'must be within the years 0001 to 9999 once rounded to the hour');
  return time;
}

/**
 * The query's range as whole hours.
 * @throws InvalidArgumentError naming `from` when it is after `to`, or the range is longer than MAX_USAGE_RANGE_DAYS;
 *   naming the field outside the years 0001 to 9999 once rounded
 */
export function usageRangeOf(query: Pick<UsageQuery, 'from' | 'to'>, now: Date): UsageRange {
  const to = query.to === undefined ? now.getTime() : instantOf('to', query.to);
  const roundedTo = withinYears('to', ceilToHour(to));
  // The default from stops at the first hour of year 0001 (a `to` in January 0001).
  const from = query.from === undefined ? Math.max(EARLIEST, to - DEFAULT_USAGE_RANGE_DAYS * DAY_MS) : instantOf('from', query.from);
  if (from > to) throw InvalidArgumentError.forField('from', `must not be after to (${new Date(to).toISOString()})`);
  const range = { from: new Date(withinYears('from', floorToHour(from))), to: new Date(roundedTo) };
  if (range.to.getTime() - range.from.getTime() > MAX_USAGE_RANGE_DAYS * DAY_MS) {
    throw InvalidArgumentError.forField('from', `the range from ${range.from.toISOString()} to ${range.to.toISOString()} is longer than ${MAX_USAGE_RANGE_DAYS} days`);
  }
  return range;
}

/** A cursor names its dimension: `<groupBy>:<key>`, so a cursor of another groupBy is refused. */
const cursorKeyOf = (groupBy: UsageDimension, key: string) => `${groupBy}:${key}`;

function keyAfter(groupBy: UsageDimension, after: string | undefined): string | undefined {
  if (after === undefined) return undefined;
  const prefix = `${groupBy}:`;
  if (!after.startsWith(prefix)) throw InvalidArgumentError.forField('cursor', 'was made for another groupBy');
  return after.slice(prefix.length);
}

export class UsageService {
  constructor(
    private readonly store: UsageStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * One page of the workspace's sums per key of `groupBy`: `limit` keys (in
   * key order) are looked at, those with nothing in the range are left out,
   * so a page may be short while `nextCursor` is set.
   * @throws InvalidArgumentError for a bad range, limit or cursor
   */
  async report(workspace: WorkspaceRef, query: UsageQuery): Promise<UsageReport> {
    const { groupBy } = query;
    const range = usageRangeOf(query, this.now());
    const page = pageRequest({ cursor: query.cursor, limit: query.limit });
    const result = await this.store.page({ workspaceId: workspace.id, dimension: groupBy, range, after: keyAfter(groupBy, page.after), limit: page.limit });
    return {
      groupBy,
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      items: result.items.map((item) => ({ ...item, key: groupBy === 'tenant' && item.key === NO_TENANT_KEY ? null : item.key })),
      pagination: { nextCursor: result.next === null ? '' : encodeCursor(cursorKeyOf(groupBy, result.next), page.sortOrder) },
    };
  }
}
