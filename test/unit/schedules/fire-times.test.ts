import assert from 'node:assert/strict';
import { nextFireTime, upcomingFireTimes } from '../../../src/schedules/fire-times';
import type { ScheduleCalendar, ScheduleRules } from '../../../src/schedules/schedule-spec';

function at(hour: number, minute = 0): ScheduleCalendar {
  return { hour: [{ start: hour }], minute: [{ start: minute }] };
}

function upcoming(rules: ScheduleRules, from: string, count: number): string[] {
  return upcomingFireTimes(rules, new Date(from), count).map((date) => date.toISOString().replace('.000Z', 'Z'));
}

const weekdaysAtNine: ScheduleCalendar = { hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] };

describe('nextFireTime(rules, after) and upcomingFireTimes(rules, from, count)', () => {
  describe('Europe/Berlin, weekdays 09:00', () => {
    const rules: ScheduleRules = { timezone: 'Europe/Berlin', calendars: [weekdaysAtNine] };

    it('moves from 08:00Z to 07:00Z across the March change and skips the weekend', () => {
      assert.deepEqual(upcoming(rules, '2024-03-28T00:00:00Z', 3), [
        '2024-03-28T08:00:00Z',
        '2024-03-29T08:00:00Z',
        '2024-04-01T07:00:00Z',
      ]);
    });

    it('moves from 07:00Z to 08:00Z across the October change', () => {
      assert.deepEqual(upcoming(rules, '2024-10-24T12:00:00Z', 3), [
        '2024-10-25T07:00:00Z',
        '2024-10-28T08:00:00Z',
        '2024-10-29T08:00:00Z',
      ]);
    });
  });

  describe('America/New_York', () => {
    it('fires 02:30 daily at 03:00 EDT on the spring-forward day, the first valid instant', () => {
      const rules: ScheduleRules = { timezone: 'America/New_York', calendars: [at(2, 30)] };
      assert.deepEqual(upcoming(rules, '2024-03-09T00:00:00Z', 3), [
        '2024-03-09T07:30:00Z',
        '2024-03-10T07:00:00Z',
        '2024-03-11T06:30:00Z',
      ]);
    });

    it('fires 01:30 daily once on the fall-back day, at its first occurrence (EDT)', () => {
      const rules: ScheduleRules = { timezone: 'America/New_York', calendars: [at(1, 30)] };
      assert.deepEqual(upcoming(rules, '2024-11-02T00:00:00Z', 3), [
        '2024-11-02T05:30:00Z',
        '2024-11-03T05:30:00Z',
        '2024-11-04T06:30:00Z',
      ]);
    });

    it('does not fire the second pass when asked from inside it', () => {
      const rules: ScheduleRules = { timezone: 'America/New_York', calendars: [{ hour: [{ start: 1 }], minute: [{ start: 0, end: 59, step: 15 }] }] };
      // 06:10Z is 01:10 EST, the second 01:10 of the day.
      assert.equal(nextFireTime(rules, new Date('2024-11-03T06:10:00Z'))?.toISOString(), '2024-11-04T06:00:00.000Z');
      assert.equal(nextFireTime(rules, new Date('2024-11-03T05:40:00Z'))?.toISOString(), '2024-11-03T05:45:00.000Z');
    });

    it('fires once when several gap times map to the first instant after the gap', () => {
      const rules: ScheduleRules = { timezone: 'America/New_York', calendars: [{ hour: [{ start: 2 }], minute: [{ start: 0, end: 45, step: 15 }] }] };
      assert.deepEqual(upcoming(rules, '2024-03-10T00:00:00Z', 2), ['2024-03-10T07:00:00Z', '2024-03-11T06:00:00Z']);
    });
  });

  describe('Australia/Adelaide, a half-hour zone', () => {
    it('fires 09:00 at 22:30Z in summer and 23:30Z in winter', () => {
      const rules: ScheduleRules = { timezone: 'Australia/Adelaide', calendars: [at(9)] };
      // 2024-04-07 03:00 ACDT (+10:30) becomes 02:00 ACST (+09:30).
      assert.deepEqual(upcoming(rules, '2024-04-05T00:00:00Z', 3), [
        '2024-04-05T22:30:00Z',
        '2024-04-06T23:30:00Z',
        '2024-04-07T23:30:00Z',
      ]);
    });

    it('fires 02:30 at 03:00 ACDT on the spring-forward day and once on the fall-back day', () => {
      const rules: ScheduleRules = { timezone: 'Australia/Adelaide', calendars: [at(2, 30)] };
      assert.deepEqual(upcoming(rules, '2024-10-05T00:00:00Z', 2), ['2024-10-05T16:30:00Z', '2024-10-06T16:00:00Z']);
      assert.deepEqual(upcoming(rules, '2024-04-06T00:00:00Z', 2), ['2024-04-06T16:00:00Z', '2024-04-07T17:00:00Z']);
    });
  });

  describe('Australia/Lord_Howe, a 30-minute DST shift', () => {
    const rules: ScheduleRules = { timezone: 'Australia/Lord_Howe', calendars: [at(1, 45), at(2, 15)] };

    it('fires 01:45 once on the fall-back day (first occurrence, +11) and 02:15 after it', () => {
      // 2024-04-07 02:00 +11 becomes 01:30 +10:30.
      assert.deepEqual(upcoming(rules, '2024-04-06T12:00:00Z', 3), [
        '2024-04-06T14:45:00Z',
        '2024-04-06T15:45:00Z',
        '2024-04-07T15:15:00Z',
      ]);
    });

    it('fires 02:15, inside the 30-minute gap, at 02:30 +11', () => {
      // 2024-10-06 02:00 +10:30 becomes 02:30 +11.
      assert.deepEqual(upcoming(rules, '2024-10-05T12:00:00Z', 3), [
        '2024-10-05T15:15:00Z',
        '2024-10-05T15:30:00Z',
        '2024-10-06T14:45:00Z',
      ]);
    });
  });

  describe('America/Santiago, a DST gap at midnight', () => {
    it('fires a 00:00 daily rule at 01:00 on the gap day', () => {
      const rules: ScheduleRules = { timezone: 'America/Santiago', calendars: [{}] };
      assert.deepEqual(upcoming(rules, '2024-09-06T12:00:00Z', 3), [
        '2024-09-07T04:00:00Z',
        '2024-09-08T04:00:00Z',
        '2024-09-09T03:00:00Z',
      ]);
    });
  });

  describe('Pacific/Apia, 2011-12-30 does not exist', () => {
    it('never fires a rule for 30 December in 2011', () => {
      const rules: ScheduleRules = { timezone: 'Pacific/Apia', calendars: [{ dayOfMonth: [{ start: 30 }], month: [{ start: 12 }] }] };
      assert.equal(nextFireTime(rules, new Date('2011-12-01T00:00:00Z'))?.toISOString(), '2012-12-29T10:00:00.000Z');
    });

    it('goes from 29 to 31 December with a daily rule', () => {
      const rules: ScheduleRules = { timezone: 'Pacific/Apia', calendars: [at(12)] };
      assert.deepEqual(upcoming(rules, '2011-12-29T00:00:00Z', 2), ['2011-12-29T22:00:00Z', '2011-12-30T22:00:00Z']);
    });
  });

  describe('intervals', () => {
    it('fires every 15 real minutes through both Berlin changes', () => {
      const rules: ScheduleRules = { timezone: 'Europe/Berlin', intervals: [{ every: '15m' }] };
      for (const from of ['2024-03-31T00:20:00Z', '2024-10-27T00:20:00Z']) {
        const times = upcomingFireTimes(rules, new Date(from), 8).map((date) => date.getTime());
        assert.equal(times[0], new Date(from).getTime() + 10 * 60_000);
        for (let index = 1; index < times.length; index++) assert.equal(times[index] - times[index - 1], 15 * 60_000);
      }
    });

    it('fires every 2h at even local hours in Berlin, the gap hour at 03:00 and the repeated one once', () => {
      const rules: ScheduleRules = { timezone: 'Europe/Berlin', intervals: [{ every: '2h' }] };
      assert.deepEqual(upcoming(rules, '2024-03-30T21:30:00Z', 4), [
        '2024-03-30T23:00:00Z', // 00:00 CET
        '2024-03-31T01:00:00Z', // 02:00 does not exist: 03:00 CEST
        '2024-03-31T02:00:00Z', // 04:00 CEST
        '2024-03-31T04:00:00Z',
      ]);
      assert.deepEqual(upcoming(rules, '2024-10-26T21:00:00Z', 4), [
        '2024-10-26T22:00:00Z', // 00:00 CEST
        '2024-10-27T00:00:00Z', // 02:00 CEST, the first 02:00
        '2024-10-27T03:00:00Z', // 04:00 CET
        '2024-10-27T05:00:00Z',
      ]);
    });

    it('keeps an offset of a daily interval at the same local time', () => {
      const rules: ScheduleRules = { timezone: 'America/New_York', intervals: [{ every: '1d', offset: '9h30m' }] };
      assert.deepEqual(upcoming(rules, '2024-03-09T00:00:00Z', 2), ['2024-03-09T14:30:00Z', '2024-03-10T13:30:00Z']);
    });

    it('anchors sub-hour intervals at local midnight of 1970 (Asia/Kolkata fires at :00 and :20 local)', () => {
      const rules: ScheduleRules = { timezone: 'Asia/Kolkata', intervals: [{ every: '20m' }] };
      assert.deepEqual(upcoming(rules, '2024-01-01T00:00:00Z', 2), ['2024-01-01T00:10:00Z', '2024-01-01T00:30:00Z']);
    });
  });

  describe('calendar fields', () => {
    it('never fires on 30 February', () => {
      const rules: ScheduleRules = { timezone: 'UTC', calendars: [{ dayOfMonth: [{ start: 30 }], month: [{ start: 2 }] }] };
      assert.equal(nextFireTime(rules, new Date('2024-01-01T00:00:00Z')), null);
      assert.deepEqual(upcomingFireTimes(rules, new Date('2024-01-01T00:00:00Z'), 3), []);
    });

    it('fires on 29 February only in leap years', () => {
      const rules: ScheduleRules = { timezone: 'UTC', calendars: [{ dayOfMonth: [{ start: 29 }], month: [{ start: 2 }] }] };
      assert.deepEqual(upcoming(rules, '2024-03-01T00:00:00Z', 2), ['2028-02-29T00:00:00Z', '2032-02-29T00:00:00Z']);
    });

    it('ANDs day of month and day of week (Friday the 13th)', () => {
      const rules: ScheduleRules = { timezone: 'UTC', calendars: [{ dayOfMonth: [{ start: 13 }], dayOfWeek: [{ start: 5 }] }] };
      assert.deepEqual(upcoming(rules, '2024-01-01T00:00:00Z', 3), ['2024-09-13T00:00:00Z', '2024-12-13T00:00:00Z', '2025-06-13T00:00:00Z']);
    });

    it('expands ranges with steps and seconds', () => {
      const rules: ScheduleRules = {
        timezone: 'UTC',
        calendars: [{ second: [{ start: 10, end: 50, step: 20 }], minute: [{ start: 5 }], hour: [{ start: 0, end: 23, step: 12 }] }],
      };
      assert.deepEqual(upcoming(rules, '2024-01-01T00:05:10Z', 4), [
        '2024-01-01T00:05:30Z',
        '2024-01-01T00:05:50Z',
        '2024-01-01T12:05:10Z',
        '2024-01-01T12:05:30Z',
      ]);
    });
  });

  describe('merging rules', () => {
    it('fires an instant two rules share once', () => {
      const rules: ScheduleRules = {
        timezone: 'Europe/Berlin',
        calendars: [at(9), at(9), { hour: [{ start: 9, end: 10 }] }],
        intervals: [{ every: '1d', offset: '9h' }],
      };
      assert.deepEqual(upcoming(rules, '2024-03-30T00:00:00Z', 4), [
        '2024-03-30T08:00:00Z',
        '2024-03-30T09:00:00Z',
        '2024-03-31T07:00:00Z',
        '2024-03-31T08:00:00Z',
      ]);
    });
  });

  describe('the after instant', () => {
    const rules: ScheduleRules = { timezone: 'UTC', calendars: [{ minute: [{ start: 0, end: 59 }], hour: [{ start: 0, end: 23 }] }] };

    it('is exclusive, also with milliseconds', () => {
      assert.equal(nextFireTime(rules, new Date('2024-01-01T10:00:00.000Z'))?.toISOString(), '2024-01-01T10:01:00.000Z');
      assert.equal(nextFireTime(rules, new Date('2024-01-01T09:59:59.999Z'))?.toISOString(), '2024-01-01T10:00:00.000Z');
    });

    it('refuses a negative count', () => {
      assert.throws(() => upcomingFireTimes(rules, new Date(0), -1), RangeError);
    });
  });

  describe('cost', () => {
    it('takes well under a millisecond per call', () => {
      const rules: ScheduleRules = {
        timezone: 'Europe/Berlin',
        calendars: [weekdaysAtNine, { minute: [{ start: 7, end: 52, step: 15 }], hour: [{ start: 1, end: 3 }], dayOfMonth: [{ start: 13 }] }],
        intervals: [{ every: '15m' }, { every: '2h', offset: '30m' }],
      };
      const calls = 2000;
      let after = Date.parse('2024-01-01T00:00:00Z');
      const started = performance.now();
      for (let call = 0; call < calls; call++) {
        after += 4 * 3_600_000 + 17_000;
        nextFireTime(rules, new Date(after));
      }
      const perCall = (performance.now() - started) / calls;
      assert.ok(perCall < 0.5, `${perCall.toFixed(3)} ms per call`);
    });
  });
});
