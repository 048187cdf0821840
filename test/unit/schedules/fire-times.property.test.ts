// Property tests of the fire-time math against a brute-force oracle on temporal-polyfill.
//
// The oracle (oracleFires) shares no code with src/schedules: it walks UTC instants one step
// at a time (a minute, or a second for rules with seconds), reads each instant's local wall
// time with Temporal, and decides whether the instant fires:
// 1. a wall rule (calendar, or interval of 1h or more) matches the wall time and the instant is
//    its first occurrence (Temporal's `earlier` disambiguation gives back this very instant), so
//    the second pass of a fall-back overlap never fires;
// 2. or the wall clock jumped forward since the previous step (a spring-forward gap) and a
//    skipped wall time matches a wall rule: the instant after the gap is the first valid one.
//    Skipped wall times count only on a date the clock shows at all (the previous step's date
//    or this one's); a date skipped whole (Apia 2011-12-30) never matches;
// 3. or a real-time interval (under 1h) lands on it: (instant - anchor - offset) is a multiple of
//    every, anchor being 1970-01-01T00:00 local resolved by Temporal.
// Every instant fires at most once, so rules sharing an instant fire once. The oracle lists all
// fires in a window of a few days (or hours for seconds); `upcomingFireTimes` must give the same
// list, and nothing else inside the window.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { upcomingFireTimes } from '../../../src/schedules/fire-times';
import type { ScheduleCalendar, ScheduleInterval, ScheduleRange, ScheduleRules } from '../../../src/schedules/schedule-spec';

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'Europe/London',
  'Europe/Dublin', // negative DST in tzdata
  'America/New_York',
  'America/Los_Angeles',
  'America/St_Johns', // -03:30
  'America/Santiago', // gap at midnight
  'Asia/Kolkata', // +05:30
  'Asia/Kathmandu', // +05:45
  'Asia/Tokyo',
  'Australia/Adelaide', // +09:30/+10:30
  'Australia/Lord_Howe', // 30-minute DST shift
  'Australia/Sydney',
  'Pacific/Chatham', // +12:45/+13:45
  'Pacific/Apia', // skipped 2011-12-30
];

const DAY = 86_400;

// ---- The oracle ----

function inRanges(value: number, ranges: ScheduleRange[] | undefined, whenEmpty: (value: number) => boolean): boolean {
  if (!ranges || ranges.length === 0) return whenEmpty(value);
  return ranges.some(({ start, end, step }) => value >= start && value <= (end ?? start) && (value - start) % (step ?? 1) === 0);
}

function calendarMatches(calendar: ScheduleCalendar, wall: Temporal.PlainDateTime): boolean {
  const zero = (value: number) => value === 0;
  const any = () => true;
  return (
    inRanges(wall.month, calendar.month, any) &&
    inRanges(wall.day, calendar.dayOfMonth, any) &&
    inRanges(wall.dayOfWeek % 7, calendar.dayOfWeek, any) &&
    inRanges(wall.hour, calendar.hour, zero) &&
    inRanges(wall.minute, calendar.minute, zero) &&
    inRanges(wall.second, calendar.second, zero)
  );
}

function seconds(text: string | undefined): number {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text ?? '0s')!;
  return Number(match[1] ?? 0) * DAY + Number(match[2] ?? 0) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4] ?? 0);
}

function modulo(value: number, divisor: number): number {
  return ((value % divisor) + divisor) % divisor;
}

function oracleFires(rules: ScheduleRules, from: number, window: number, step: number): number[] {
  const zone = rules.timezone;
  const intervals = (rules.intervals ?? []).map((interval) => ({ every: seconds(interval.every), offset: seconds(interval.offset) }));
  const wallIntervals = intervals.filter(({ every }) => every >= 3600);
  const realIntervals = intervals.filter(({ every }) => every < 3600);
  const anchor = Temporal.PlainDateTime.from('1970-01-01T00:00:00').toZonedDateTime(zone).epochMilliseconds / 1000;
  const wallOf = (instant: number) => Temporal.Instant.fromEpochMilliseconds(instant * 1000).toZonedDateTimeISO(zone).toPlainDateTime();
  // The wall time read as if it were UTC: seconds since 1970-01-01T00:00 local.
  const naiveSeconds = (wall: Temporal.PlainDateTime) =>
    Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) / 1000;
  const wallMatches = (wall: Temporal.PlainDateTime) =>
    (rules.calendars ?? []).some((calendar) => calendarMatches(calendar, wall)) ||
    wallIntervals.some(({ every, offset }) => modulo(naiveSeconds(wall) - offset, every) === 0);

  const fires: number[] = [];
  let instant = (Math.floor(from / step) + 1) * step;
  let previous = wallOf(instant - step);
  for (; instant <= from + window; instant += step) {
    const wall = wallOf(instant);
    let fires_ = realIntervals.some(({ every, offset }) => modulo(instant - anchor - offset, every) === 0);
    if (!fires_ && wallMatches(wall)) {
      fires_ = wall.toZonedDateTime(zone, { disambiguation: 'earlier' }).epochMilliseconds === instant * 1000;
    }
    if (!fires_ && naiveSeconds(wall) - naiveSeconds(previous) > step) {
      // A spring-forward gap: the wall times strictly between the previous step's and this one's.
      for (let skipped = previous.add({ seconds: step }); Temporal.PlainDateTime.compare(skipped, wall) < 0; skipped = skipped.add({ seconds: step })) {
        const dateShown = skipped.toPlainDate().equals(previous.toPlainDate()) || skipped.toPlainDate().equals(wall.toPlainDate());
        if (dateShown && wallMatches(skipped)) {
          fires_ = true;
          break;
        }
      }
    }
    if (fires_) fires.push(instant);
    previous = wall;
  }
  return fires;
}

// ---- Generators ----

/** DST transitions of each zone in 2024-2026 (and 2011, for Apia's skipped day), in seconds. */
const TRANSITIONS = new Map(
  ZONES.map((zone) => {
    const found: number[] = [];
    for (const [start, end] of [
      ['2011-01-01', '2012-01-01'],
      ['2024-01-01', '2027-01-01'],
    ]) {
      let at: Temporal.ZonedDateTime | null = Temporal.PlainDate.from(start).toZonedDateTime(zone);
      const limit = Temporal.PlainDate.from(end).toZonedDateTime(zone);
      while ((at = at.getTimeZoneTransition('next')) && Temporal.ZonedDateTime.compare(at, limit) < 0) found.push(at.epochMilliseconds / 1000);
    }
    return [zone, found];
  }),
);

function rangeArb(min: number, max: number, maxLength: number): fc.Arbitrary<ScheduleRange> {
  return fc
    .record({
      start: fc.integer({ min, max }),
      length: fc.option(fc.integer({ min: 0, max: maxLength }), { nil: undefined }),
      step: fc.option(fc.integer({ min: 1, max: Math.max(1, Math.floor(maxLength / 2)) }), { nil: undefined }),
    })
    .map(({ start, length, step }) => ({
      start,
      ...(length === undefined ? {} : { end: Math.min(max, start + length) }),
      ...(step === undefined ? {} : { step }),
    }));
}

function fieldArb(min: number, max: number, maxLength: number, weightAbsent = 1): fc.Arbitrary<ScheduleRange[] | undefined> {
  return fc.oneof(
    { weight: weightAbsent, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.array(rangeArb(min, max, maxLength), { minLength: 1, maxLength: 2 }) },
  );
}

function calendarArb(withSeconds: boolean): fc.Arbitrary<ScheduleCalendar> {
  return fc
    .record({
      second: withSeconds ? fieldArb(0, 59, 59, 0) : fc.constant(undefined),
      minute: fieldArb(0, 59, 59),
      // Transitions happen between 00:00 and 03:00 local in most zones: favour those hours.
      hour: fc.oneof(fieldArb(0, 23, 23), fieldArb(0, 4, 3, 0)),
      dayOfMonth: fieldArb(1, 31, 10, 6),
      month: fieldArb(1, 12, 6, 6),
      dayOfWeek: fieldArb(0, 6, 6, 3),
    })
    .map((calendar) => Object.fromEntries(Object.entries(calendar).filter(([, value]) => value !== undefined)));
}

function duration(total: number): string {
  const parts: Array<[number, string]> = [
    [Math.floor(total / DAY), 'd'],
    [Math.floor((total % DAY) / 3600), 'h'],
    [Math.floor((total % 3600) / 60), 'm'],
    [total % 60, 's'],
  ];
  return parts.filter(([count]) => count > 0).map(([count, unit]) => `${count}${unit}`).join('') || '0s';
}

function intervalArb(unit: number): fc.Arbitrary<ScheduleInterval> {
  const every = fc.oneof(
    fc.integer({ min: 1, max: Math.floor(3599 / unit) }).map((count) => count * unit), // real time
    fc.constantFrom(3600, 5400, 7200, 10_800, 18_000, 21_600, 43_200, DAY), // wall clock
    fc.integer({ min: 3600 / unit, max: (2 * DAY) / unit }).map((count) => count * unit),
  );
  return every.chain((everySeconds) =>
    fc.integer({ min: 0, max: everySeconds / unit - 1 }).map((offset) => ({
      every: duration(everySeconds),
      ...(offset === 0 ? {} : { offset: duration(offset * unit) }),
    })),
  );
}

function rulesArb(withSeconds: boolean): fc.Arbitrary<ScheduleRules> {
  const unit = withSeconds ? 1 : 60;
  return fc
    .record({
      timezone: fc.constantFrom(...ZONES),
      calendars: fc.array(calendarArb(withSeconds), { maxLength: 2 }),
      intervals: fc.array(intervalArb(unit), { maxLength: 2 }),
    })
    .filter(({ calendars, intervals }) => calendars.length + intervals.length > 0);
}

/** A start second near one of the zone's transitions (within `before`/`after`), or anywhere in 2024-2026. */
function startArb(zone: string, before: number, after: number): fc.Arbitrary<number> {
  const transitions = TRANSITIONS.get(zone) ?? [];
  const anywhere = fc.integer({ min: Date.UTC(2024, 0, 1) / 1000, max: Date.UTC(2027, 0, 1) / 1000 });
  if (transitions.length === 0) return anywhere;
  const near = fc.tuple(fc.constantFrom(...transitions), fc.integer({ min: -before, max: after })).map(([at, delta]) => at + delta);
  return fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: anywhere });
}

function checkAgainstOracle(rules: ScheduleRules, from: number, window: number, step: number, count: number): void {
  const expected = oracleFires(rules, from, window, step).slice(0, count);
  const actual = upcomingFireTimes(rules, new Date(from * 1000), count).map((date) => date.getTime() / 1000);
  const inWindow = actual.filter((instant) => instant <= from + window);
  const show = (instants: number[]) => instants.map((instant) => new Date(instant * 1000).toISOString());
  // Both lists ascend, so equal in-window prefixes mean the same first `count` fires, and
  // anything further that upcomingFireTimes gives lies beyond the oracle's window.
  assert.deepEqual(show(inWindow), show(expected), `${JSON.stringify(rules)} from ${show([from])[0]}`);
}

describe('nextFireTime against a brute-force Temporal oracle (properties)', function () {
  this.timeout(60_000);

  it('agrees minute by minute over 3 days around DST transitions', () => {
    fc.assert(
      fc.property(
        rulesArb(false).chain((rules) => fc.tuple(fc.constant(rules), startArb(rules.timezone, 2 * DAY, 6 * 3600))),
        ([rules, from]) => checkAgainstOracle(rules, from, 3 * DAY, 60, 8),
      ),
      { numRuns: 120 },
    );
  });

  it('agrees second by second over 3 hours around DST transitions for rules with seconds', () => {
    fc.assert(
      fc.property(
        rulesArb(true).chain((rules) => fc.tuple(fc.constant(rules), startArb(rules.timezone, 2 * 3600, 1800))),
        ([rules, from]) => checkAgainstOracle(rules, from, 3 * 3600, 1, 12),
      ),
      { numRuns: 25 },
    );
  });

  it('agrees minute by minute around the day Pacific/Apia skipped (2011-12-30)', () => {
    const skippedDayStart = Date.UTC(2011, 11, 29, 10) / 1000; // 2011-12-29T24:00-10:00 became 2011-12-31T00:00+14:00
    fc.assert(
      fc.property(
        rulesArb(false).map((rules) => ({ ...rules, timezone: 'Pacific/Apia' })),
        fc.integer({ min: -DAY, max: 3600 }),
        (rules, delta) => checkAgainstOracle(rules, skippedDayStart + delta, 2 * DAY, 60, 8),
      ),
      { numRuns: 20 },
    );
  });
});
