// The rules of a schedule (spec 2.15) and their validation. Pure: no clock, no storage;
// the time-zone check asks the runtime's ICU data through Intl and nothing else.
import { InvalidArgumentError } from '../errors';
import { formatScheduleDuration, parseScheduleDuration } from './schedule-duration';

/** An inclusive range of values; `end` defaults to `start`, `step` to 1. No wrap-around. */
export interface ScheduleRange {
  start: number;
  end?: number;
  step?: number;
}

/**
 * A wall-clock rule: a time matches when every field matches (day of month AND day of week).
 * Empty or absent `second`, `minute`, `hour` mean 0; empty or absent `dayOfMonth`, `month`,
 * `dayOfWeek` mean any value.
 */
export interface ScheduleCalendar {
  comment?: string;
  second?: ScheduleRange[];
  minute?: ScheduleRange[];
  hour?: ScheduleRange[];
  dayOfMonth?: ScheduleRange[];
  month?: ScheduleRange[];
  /** 0 = Sunday … 6 = Saturday. */
  dayOfWeek?: ScheduleRange[];
}

/** A duration rule: fires every `every` from the anchor, shifted by `offset` (see fire-times.ts). */
export interface ScheduleInterval {
  every: string;
  offset?: string;
}

/** All rules of one schedule, OR-ed, evaluated in one IANA time zone. */
export interface ScheduleRules {
  calendars?: ScheduleCalendar[];
  intervals?: ScheduleInterval[];
  timezone: string;
}

/** The calendar fields holding ranges, with their valid values (api-decisions.md, Schedules). */
export const CALENDAR_FIELD_BOUNDS = {
  second: { min: 0, max: 59 },
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  dayOfMonth: { min: 1, max: 31 },
  month: { min: 1, max: 12 },
  dayOfWeek: { min: 0, max: 6 },
} as const;
export type CalendarField = keyof typeof CALENDAR_FIELD_BOUNDS;

const CALENDAR_FIELDS = Object.keys(CALENDAR_FIELD_BOUNDS) as CalendarField[];
const MAX_COMMENT_LENGTH = 200;
// An IANA name (`Europe/Berlin`, `UTC`, `Etc/GMT+5`), never an offset such as `+01:00`,
// which newer ICU versions accept as a zone but which has no DST rules to follow.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/**
 * Checks the rules of a schedule and returns a copy with durations in canonical form
 * (`90m` becomes `1h30m`) and ranges as given.
 * @param fieldPrefix the path of the rules in the request, used in field names.
 * @throws InvalidArgumentError naming the first offending field, e.g.
 *   `spec.schedule.calendars[0].hour[1].end`.
 */
export function validateScheduleRules(rules: unknown, fieldPrefix = 'spec.schedule'): ScheduleRules {
  if (!isObject(rules)) throw InvalidArgumentError.forField(fieldPrefix, 'must be an object');
  const timezone = validateTimeZone(rules.timezone, `${fieldPrefix}.timezone`);
  const calendars = optionalArray(rules.calendars, `${fieldPrefix}.calendars`).map((calendar, index) =>
    validateCalendar(calendar, `${fieldPrefix}.calendars[${index}]`),
  );
  const intervals = optionalArray(rules.intervals, `${fieldPrefix}.intervals`).map((interval, index) =>
    validateInterval(interval, `${fieldPrefix}.intervals[${index}]`),
  );
  if (calendars.length + intervals.length === 0) {
    throw InvalidArgumentError.forField(fieldPrefix, 'needs at least one rule in calendars or intervals');
  }
  return {
    ...(rules.calendars !== undefined ? { calendars } : {}),
    ...(rules.intervals !== undefined ? { intervals } : {}),
    timezone,
  };
}

/**
 * True when the runtime's ICU data knows `name` as an IANA zone (canonical names, links such as
 * `US/Pacific` and `UTC`). `Intl.supportedValuesOf('timeZone')` is not used: it lists only
 * ICU's canonical ids, without `UTC` and with `Asia/Calcutta` instead of `Asia/Kolkata`.
 */
export function isIanaTimeZone(name: string): boolean {
  if (!ZONE_NAME.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function validateTimeZone(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw InvalidArgumentError.forField(field, 'is required');
  if (!isIanaTimeZone(value)) {
    throw InvalidArgumentError.forField(field, `"${value}" is not an IANA time-zone name such as Europe/Berlin`);
  }
  return value;
}

function validateCalendar(value: unknown, field: string): ScheduleCalendar {
  if (!isObject(value)) throw InvalidArgumentError.forField(field, 'must be an object');
  const calendar: ScheduleCalendar = {};
  if (value.comment !== undefined) {
    if (typeof value.comment !== 'string') throw InvalidArgumentError.forField(`${field}.comment`, 'must be a string');
    if (value.comment.length > MAX_COMMENT_LENGTH) {
      throw InvalidArgumentError.forField(`${field}.comment`, `must be at most ${MAX_COMMENT_LENGTH} characters`);
    }
    calendar.comment = value.comment;
  }
  for (const name of CALENDAR_FIELDS) {
    if (value[name] === undefined) continue;
    calendar[name] = optionalArray(value[name], `${field}.${name}`).map((range, index) =>
      validateRange(range, `${field}.${name}[${index}]`, CALENDAR_FIELD_BOUNDS[name]),
    );
  }
  return calendar;
}

function validateRange(value: unknown, field: string, bounds: { min: number; max: number }): ScheduleRange {
  if (!isObject(value)) throw InvalidArgumentError.forField(field, 'must be an object with start, end and step');
  const inBounds = `must be an integer from ${bounds.min} to ${bounds.max}`;
  const start = value.start;
  if (!isIntegerIn(start, bounds.min, bounds.max)) throw InvalidArgumentError.forField(`${field}.start`, inBounds);
  const range: ScheduleRange = { start };
  if (value.end !== undefined) {
    if (!isIntegerIn(value.end, bounds.min, bounds.max)) throw InvalidArgumentError.forField(`${field}.end`, inBounds);
    if (value.end < start) throw InvalidArgumentError.forField(`${field}.end`, `must not be less than start (${start})`);
    range.end = value.end;
  }
  if (value.step !== undefined) {
    if (!isIntegerIn(value.step, 1, Number.MAX_SAFE_INTEGER)) {
      throw InvalidArgumentError.forField(`${field}.step`, 'must be an integer of at least 1');
    }
    range.step = value.step;
  }
  return range;
}

function validateInterval(value: unknown, field: string): ScheduleInterval {
  if (!isObject(value)) throw InvalidArgumentError.forField(field, 'must be an object with every and offset');
  if (value.every === undefined) throw InvalidArgumentError.forField(`${field}.every`, 'is required');
  const every = parseScheduleDuration(value.every, `${field}.every`);
  if (every < 1) throw InvalidArgumentError.forField(`${field}.every`, 'must be at least 1s');
  const interval: ScheduleInterval = { every: formatScheduleDuration(every) };
  if (value.offset !== undefined) {
    const offset = parseScheduleDuration(value.offset, `${field}.offset`);
    if (offset >= every) {
      throw InvalidArgumentError.forField(`${field}.offset`, `must be less than every (${interval.every})`);
    }
    interval.offset = formatScheduleDuration(offset);
  }
  return interval;
}

function optionalArray(value: unknown, field: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw InvalidArgumentError.forField(field, 'must be an array');
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
