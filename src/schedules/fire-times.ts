// Fire-time math of schedules (spec 2.15, api-decisions.md Schedules): the next instants at
// which a schedule's calendar and interval rules fire in its IANA zone. Pure: the caller
// passes every instant in; no clock, no storage.
//
// Rules as implemented (whole seconds throughout; an `after` with milliseconds is read as
// its whole second, since fire times are whole seconds):
// - A calendar matches a local wall time when every field matches (day of month AND day of
//   week). A date that does not exist (Feb 30, Apia's 2011-12-30) never matches.
// - DST: a wall time in a spring-forward gap fires at the first instant after the gap (NY
//   02:30 on the spring-forward day fires at 03:00 EDT); a wall time shown twice fires once, at
//   its first occurrence. Rules that map to the same instant fire once.
// - An interval of at least one hour fires at the wall times k * every + offset counted from
//   1970-01-01T00:00:00 local, each mapped to an instant by the DST rule above (every 2h in
//   Berlin fires at even local hours all year round).
// - An interval under one hour follows real elapsed time: it fires at the instants
//   anchor + k * every + offset, where anchor is the instant of 1970-01-01T00:00:00 local in
//   the zone (by the zone's 1970 offset). Every 15m so fires every 15 real minutes through both
//   DST changes, at :00/:15/:30/:45 local in any zone whose offsets are whole quarter hours.
import { parseScheduleDuration } from './schedule-duration';
import type { ScheduleCalendar, ScheduleRange, ScheduleRules } from './schedule-spec';
import { CALENDAR_FIELD_BOUNDS } from './schedule-spec';
import { type ZoneRules, zoneRules } from './time-zone';

const DAY = 86_400;
const HOUR = 3_600;
/** A calendar rule whose (month, day, weekday) can occur at all occurs within one Gregorian cycle. */
const SEARCH_YEARS = 400;
const MAX_STEPS = 10_000;

/**
 * The first instant strictly after `after` at which any rule fires; null when none ever will
 * (e.g. only Feb 30). Instants several rules share count once. `rules` must have passed
 * validateScheduleRules; an unknown zone throws RangeError.
 */
export function nextFireTime(rules: ScheduleRules, after: Date): Date | null {
  const next = nextFireSecond(compileRules(rules), Math.floor(after.getTime() / 1000));
  return next === null ? null : new Date(next * 1000);
}

/**
 * The next `count` fire instants strictly after `from`, ascending and distinct; fewer when
 * the rules stop firing.
 */
export function upcomingFireTimes(rules: ScheduleRules, from: Date, count: number): Date[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer: ${count}`);
  const compiled = compileRules(rules);
  const times: Date[] = [];
  let cursor = Math.floor(from.getTime() / 1000);
  while (times.length < count) {
    const next = nextFireSecond(compiled, cursor);
    if (next === null) break;
    times.push(new Date(next * 1000));
    cursor = next;
  }
  return times;
}

interface CompiledCalendar {
  seconds: number[];
  minutes: number[];
  hours: number[];
  days: number[];
  months: number[];
  weekdays: boolean[];
  possible: boolean;
}

interface CompiledInterval {
  every: number;
  offset: number;
}

interface CompiledRules {
  zone: ZoneRules;
  calendars: CompiledCalendar[];
  intervals: CompiledInterval[];
}

function compileRules(rules: ScheduleRules): CompiledRules {
  return {
    zone: zoneRules(rules.timezone),
    calendars: (rules.calendars ?? []).map(compileCalendar),
    intervals: (rules.intervals ?? []).map((interval) => ({
      every: parseScheduleDuration(interval.every, 'every'),
      offset: interval.offset === undefined ? 0 : parseScheduleDuration(interval.offset, 'offset'),
    })),
  };
}

function nextFireSecond(rules: CompiledRules, after: number): number | null {
  let best: number | null = null;
  const consider = (instant: number | null) => {
    if (instant !== null && (best === null || instant < best)) best = instant;
  };
  for (const calendar of rules.calendars) consider(nextCalendarFire(rules.zone, calendar, after));
  for (const interval of rules.intervals) consider(nextIntervalFire(rules.zone, interval, after));
  return best;
}

// ---- Calendars ----

function compileCalendar(calendar: ScheduleCalendar): CompiledCalendar {
  const months = expand(calendar.month, 'month', false);
  const days = expand(calendar.dayOfMonth, 'dayOfMonth', false);
  const weekdays = Array.from({ length: 7 }, () => false);
  for (const weekday of expand(calendar.dayOfWeek, 'dayOfWeek', false)) weekdays[weekday] = true;
  // Feb 30 and the like: no (month, day) pair exists in any year, so the rule never fires.
  const possible = months.some((month) => days.some((day) => day <= daysInMonth(2000, month)));
  return {
    seconds: expand(calendar.second, 'second', true),
    minutes: expand(calendar.minute, 'minute', true),
    hours: expand(calendar.hour, 'hour', true),
    days,
    months,
    weekdays,
    possible,
  };
}

/** The sorted distinct values of some ranges; no ranges mean 0 (time fields) or every value. */
function expand(ranges: ScheduleRange[] | undefined, field: keyof typeof CALENDAR_FIELD_BOUNDS, zeroWhenEmpty: boolean): number[] {
  const { min, max } = CALENDAR_FIELD_BOUNDS[field];
  if (!ranges || ranges.length === 0) return zeroWhenEmpty ? [0] : range(min, max, 1);
  const values = new Set<number>();
  for (const { start, end, step } of ranges) for (const value of range(start, Math.min(end ?? start, max), step ?? 1)) values.add(value);
  return [...values].sort((a, b) => a - b);
}

function range(start: number, end: number, step: number): number[] {
  const values: number[] = [];
  for (let value = start; value <= end; value += step) values.push(value);
  return values;
}

function nextCalendarFire(zone: ZoneRules, calendar: CompiledCalendar, after: number): number | null {
  if (!calendar.possible) return null;
  // Wall times at or before the wall time of `after` map to instants at or before it.
  let wall = zone.wallAt(after);
  for (let step = 0; step < MAX_STEPS; step++) {
    const candidate = nextCalendarWall(calendar, wall);
    if (candidate === null) return null;
    const fire = fireInstant(zone, candidate, after);
    if (typeof fire === 'number') return fire;
    wall = Math.max(candidate, fire.resumeAfterWall);
  }
  throw new Error(`no calendar fire time found in ${MAX_STEPS} steps after ${after} in ${zone.name}`);
}

/** The first wall time strictly after `wall` matching every field, jumping field by field. */
function nextCalendarWall(calendar: CompiledCalendar, wall: number): number | null {
  const start = wall + 1;
  const startDay = Math.floor(start / DAY);
  const startDate = new Date(startDay * DAY * 1000);
  const year = startDate.getUTCFullYear();
  const month = startDate.getUTCMonth() + 1;
  const day = startDate.getUTCDate();
  const secondOfDay = start - startDay * DAY;
  for (let y = year; y <= year + SEARCH_YEARS; y++) {
    for (const m of calendar.months) {
      if (y === year && m < month) continue;
      const sameMonth = y === year && m === month;
      const length = daysInMonth(y, m);
      for (const d of calendar.days) {
        if (d > length) break;
        if (sameMonth && d < day) continue;
        const date = Date.UTC(y, m - 1, d) / 1000;
        if (!calendar.weekdays[new Date(date * 1000).getUTCDay()]) continue;
        const time = firstTimeFrom(calendar, sameMonth && d === day ? secondOfDay : 0);
        if (time !== null) return date + time;
      }
    }
  }
  return null;
}

/** The first matching second of the day at or after `from` (seconds since midnight). */
function firstTimeFrom(calendar: CompiledCalendar, from: number): number | null {
  const hour = Math.floor(from / HOUR);
  const minute = Math.floor((from % HOUR) / 60);
  const second = from % 60;
  for (const h of calendar.hours) {
    if (h < hour) continue;
    if (h > hour) return h * HOUR + calendar.minutes[0] * 60 + calendar.seconds[0];
    for (const m of calendar.minutes) {
      if (m < minute) continue;
      if (m > minute) return h * HOUR + m * 60 + calendar.seconds[0];
      const s = calendar.seconds.find((value) => value >= second);
      if (s !== undefined) return h * HOUR + m * 60 + s;
    }
  }
  return null;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// ---- Intervals ----

function nextIntervalFire(zone: ZoneRules, interval: CompiledInterval, after: number): number | null {
  const { every, offset } = interval;
  if (every < HOUR) {
    const anchor = anchorInstant(zone) + offset;
    return anchor + every * (Math.floor((after - anchor) / every) + 1);
  }
  let k = Math.floor((zone.wallAt(after) - offset) / every) + 1;
  for (let step = 0; step < MAX_STEPS; step++) {
    const wall = k * every + offset;
    const fire = fireInstant(zone, wall, after);
    if (typeof fire === 'number') return fire;
    k = Math.max(k + 1, Math.floor((fire.resumeAfterWall - offset) / every) + 1);
  }
  throw new Error(`no interval fire time found in ${MAX_STEPS} steps after ${after} in ${zone.name}`);
}

/** The instant of 1970-01-01T00:00:00 local: the origin of real-time intervals in the zone. */
function anchorInstant(zone: ZoneRules): number {
  const resolution = zone.resolveWall(0);
  return resolution.kind === 'skipped' ? -zone.offsetAt(0) : resolution.instant;
}

// ---- Wall time to fire instant ----

/**
 * The instant a matching wall time fires at, when that is after `after`; otherwise the wall
 * time after which the next candidate must lie (past a skipped date, or past the end of a
 * fall-back overlap whose first pass is already over).
 */
function fireInstant(zone: ZoneRules, wall: number, after: number): number | { resumeAfterWall: number } {
  const resolution = zone.resolveWall(wall);
  if (resolution.kind === 'skipped') return { resumeAfterWall: resolution.gapEndWall - 1 };
  if (resolution.instant > after) return resolution.instant;
  if (resolution.kind === 'gap') return { resumeAfterWall: resolution.gapEndWall - 1 };
  // `wall` was shown before `after` and again later: `after` lies in the second pass of an
  // overlap. Wall times up to the overlap's end were all first shown before `after`.
  const firstOffset = zone.offsetAt(resolution.instant);
  const transition = zone.transitionIn(resolution.instant, after);
  return { resumeAfterWall: Math.max(wall, transition + firstOffset - 1) };
}
