// IANA zone arithmetic for fire times, on the runtime's ICU data through Intl: offsets, and
// wall-clock times mapped to instants with the DST rules of api-decisions.md (Schedules).
// Pure: no clock; the only state is a memo of one formatter per zone.
//
// Units: an instant is whole seconds since the Unix epoch; a wall time is whole seconds since
// 1970-01-01T00:00:00 *local* (the local date-time read as if it were UTC), so
// wall = instant + offset.

/** How a wall-clock time maps to an instant in a zone. */
export type WallResolution =
  /** The time exists; `instant` is its only or (fall-back overlap) first occurrence. */
  | { kind: 'exists'; instant: number }
  /** The time falls in a spring-forward gap; `instant` is the first instant after the gap. */
  | { kind: 'gap'; instant: number; gapEndWall: number }
  /** The time's whole date is skipped (Pacific/Apia 2011-12-30): it never happens. */
  | { kind: 'skipped'; gapEndWall: number };

const DAY = 86_400;
const LOCAL = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

/** Offsets and wall-time resolution for one zone. Assumes at most one transition in any 48 hours. */
export class ZoneRules {
  private readonly format: Intl.DateTimeFormat;

  constructor(readonly name: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** The zone's UTC offset in seconds at `instant` (seconds), e.g. 3600 for CET. */
  offsetAt(instant: number): number {
    const match = LOCAL.exec(this.format.format(instant * 1000));
    if (!match) throw new Error(`unexpected local time format in ${this.name} at ${instant}`);
    const [, month, day, year, hour, minute, second] = match.map(Number);
    return Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - instant;
  }

  /** The local wall time of `instant`. */
  wallAt(instant: number): number {
    return instant + this.offsetAt(instant);
  }

  /**
   * Maps a wall time to its instant: the first occurrence when the clock shows it twice; the
   * first instant after the gap when the clock skips it; none when its whole date is skipped.
   */
  resolveWall(wall: number): WallResolution {
    // Every instant showing `wall` lies within 14 h of it (offsets span -12 h..+14 h), so the
    // offsets a day either side are the ones before and after any transition near it.
    const early = this.offsetAt(wall - DAY);
    const late = this.offsetAt(wall + DAY);
    const first = Math.min(wall - early, wall - late);
    if (this.wallAt(first) === wall) return { kind: 'exists', instant: first };
    const second = Math.max(wall - early, wall - late);
    if (this.wallAt(second) === wall) return { kind: 'exists', instant: second };
    if (early >= late) return { kind: 'skipped', gapEndWall: wall + 1 }; // two transitions: not modelled
    const transition = this.transitionIn(wall - late, wall - early);
    const gapEndWall = transition + late;
    const lastWallBefore = transition - 1 + early;
    // Only a wall time on a date the clock shows at all may fire after the gap; a date the
    // zone skipped entirely never matches, like Feb 30 (api-decisions.md, Schedules).
    const day = Math.floor(wall / DAY);
    const dateExists = day === Math.floor(lastWallBefore / DAY) || day === Math.floor(gapEndWall / DAY);
    return dateExists ? { kind: 'gap', instant: transition, gapEndWall } : { kind: 'skipped', gapEndWall };
  }

  /**
   * The first instant in (from, to] whose offset differs from the offset at `from`, by
   * bisection; `to` when the offsets at both ends are equal (no transition, or two).
   */
  transitionIn(from: number, to: number): number {
    const before = this.offsetAt(from);
    let low = from;
    let high = to;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (this.offsetAt(middle) === before) low = middle;
      else high = middle;
    }
    return high;
  }
}

const zones = new Map<string, ZoneRules>();

/** The memoised rules of a zone; one per name for the process (a few hundred at most). */
export function zoneRules(name: string): ZoneRules {
  let zone = zones.get(name);
  if (!zone) {
    zone = new ZoneRules(name);
    zones.set(name, zone);
  }
  return zone;
}
