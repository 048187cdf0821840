import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../../src/errors';
import { isIanaTimeZone, validateScheduleRules } from '../../../src/schedules/schedule-spec';

function assertFieldError(rules: unknown, field: string, description: RegExp, prefix?: string): void {
  assert.throws(
    () => validateScheduleRules(rules, prefix),
    (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError, String(error));
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.equal(error.fieldViolations.length, 1);
      assert.equal(error.fieldViolations[0].field, field);
      assert.match(error.fieldViolations[0].description, description);
      assert.equal(error.message, `${field}: ${error.fieldViolations[0].description}`);
      return true;
    },
  );
}

const zone = 'Europe/Berlin';

describe('validateScheduleRules(rules, fieldPrefix)', () => {
  describe('when the rules are valid', () => {
    it('returns them with durations in canonical form', () => {
      const rules = validateScheduleRules({
        timezone: zone,
        calendars: [{ comment: 'weekdays', hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] }],
        intervals: [{ every: '90m', offset: '3600s' }, { every: '86400s' }],
      });
      assert.deepEqual(rules, {
        timezone: zone,
        calendars: [{ comment: 'weekdays', hour: [{ start: 9 }], dayOfWeek: [{ start: 1, end: 5 }] }],
        intervals: [{ every: '1h30m', offset: '1h' }, { every: '1d' }],
      });
    });

    it('accepts the range limits of every field', () => {
      const calendar = {
        second: [{ start: 0, end: 59 }],
        minute: [{ start: 0, end: 59, step: 15 }],
        hour: [{ start: 0, end: 23 }],
        dayOfMonth: [{ start: 1, end: 31 }],
        month: [{ start: 1, end: 12 }],
        dayOfWeek: [{ start: 0, end: 6 }],
      };
      assert.deepEqual(validateScheduleRules({ timezone: 'UTC', calendars: [calendar] }).calendars, [calendar]);
    });

    it('accepts IANA names, links and UTC', () => {
      for (const name of ['UTC', 'Etc/GMT+5', 'America/New_York', 'US/Pacific', 'Asia/Kolkata', 'Australia/Lord_Howe']) {
        assert.equal(isIanaTimeZone(name), true, name);
      }
    });
  });

  describe('when a field is wrong', () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['no object', 'daily', 'spec.schedule', /must be an object/],
      ['no rule', { timezone: zone }, 'spec.schedule', /at least one rule/],
      ['empty rule lists', { timezone: zone, calendars: [], intervals: [] }, 'spec.schedule', /at least one rule/],
      ['no timezone', { intervals: [{ every: '1h' }] }, 'spec.schedule.timezone', /is required/],
      ['unknown zone', { timezone: 'Mars/Olympus', intervals: [{ every: '1h' }] }, 'spec.schedule.timezone', /not an IANA/],
      ['offset zone', { timezone: '+01:00', intervals: [{ every: '1h' }] }, 'spec.schedule.timezone', /not an IANA/],
      ['calendars not an array', { timezone: zone, calendars: {} }, 'spec.schedule.calendars', /must be an array/],
      ['calendar not an object', { timezone: zone, calendars: [3] }, 'spec.schedule.calendars[0]', /must be an object/],
      ['comment too long', { timezone: zone, calendars: [{ comment: 'x'.repeat(201) }] }, 'spec.schedule.calendars[0].comment', /at most 200/],
      ['field not an array', { timezone: zone, calendars: [{ hour: { start: 1 } }] }, 'spec.schedule.calendars[0].hour', /must be an array/],
      ['hour 24', { timezone: zone, calendars: [{ hour: [{ start: 9 }, { start: 10, end: 24 }] }] }, 'spec.schedule.calendars[0].hour[1].end', /from 0 to 23/],
      ['second 60', { timezone: zone, calendars: [{ second: [{ start: 60 }] }] }, 'spec.schedule.calendars[0].second[0].start', /from 0 to 59/],
      ['minute -1', { timezone: zone, calendars: [{ minute: [{ start: -1 }] }] }, 'spec.schedule.calendars[0].minute[0].start', /from 0 to 59/],
      ['dayOfMonth 0', { timezone: zone, calendars: [{ dayOfMonth: [{ start: 0 }] }] }, 'spec.schedule.calendars[0].dayOfMonth[0].start', /from 1 to 31/],
      ['dayOfMonth 32', { timezone: zone, calendars: [{ dayOfMonth: [{ start: 1, end: 32 }] }] }, 'spec.schedule.calendars[0].dayOfMonth[0].end', /from 1 to 31/],
      ['month 13', { timezone: zone, calendars: [{ month: [{ start: 13 }] }] }, 'spec.schedule.calendars[0].month[0].start', /from 1 to 12/],
      ['month 0', { timezone: zone, calendars: [{ month: [{ start: 0 }] }] }, 'spec.schedule.calendars[0].month[0].start', /from 1 to 12/],
      ['dayOfWeek 7', { timezone: zone, calendars: [{ dayOfWeek: [{ start: 7 }] }] }, 'spec.schedule.calendars[0].dayOfWeek[0].start', /from 0 to 6/],
      ['end < start', { timezone: zone, calendars: [{}, { minute: [{ start: 30, end: 10 }] }] }, 'spec.schedule.calendars[1].minute[0].end', /not be less than start \(30\)/],
      ['step 0', { timezone: zone, calendars: [{ minute: [{ start: 0, end: 59, step: 0 }] }] }, 'spec.schedule.calendars[0].minute[0].step', /at least 1/],
      ['fractional step', { timezone: zone, calendars: [{ minute: [{ start: 0, step: 1.5 }] }] }, 'spec.schedule.calendars[0].minute[0].step', /integer/],
      ['fractional start', { timezone: zone, calendars: [{ hour: [{ start: 9.5 }] }] }, 'spec.schedule.calendars[0].hour[0].start', /integer/],
      ['string start', { timezone: zone, calendars: [{ hour: [{ start: '9' }] }] }, 'spec.schedule.calendars[0].hour[0].start', /integer/],
      ['range not an object', { timezone: zone, calendars: [{ hour: [9] }] }, 'spec.schedule.calendars[0].hour[0]', /must be an object/],
      ['intervals not an array', { timezone: zone, intervals: '1h' }, 'spec.schedule.intervals', /must be an array/],
      ['missing every', { timezone: zone, intervals: [{ offset: '1m' }] }, 'spec.schedule.intervals[0].every', /is required/],
      ['bad every', { timezone: zone, intervals: [{ every: '1 hour' }] }, 'spec.schedule.intervals[0].every', /must be a duration/],
      ['every 0s', { timezone: zone, intervals: [{ every: '1h' }, { every: '0s' }] }, 'spec.schedule.intervals[1].every', /at least 1s/],
      ['bad offset', { timezone: zone, intervals: [{ every: '1h', offset: '5' }] }, 'spec.schedule.intervals[0].offset', /must be a duration/],
      ['offset = every', { timezone: zone, intervals: [{ every: '1h', offset: '60m' }] }, 'spec.schedule.intervals[0].offset', /less than every \(1h\)/],
    ];
    for (const [name, rules, field, description] of cases) {
      it(`names ${field} for ${name}`, () => assertFieldError(rules, field, description));
    }

    it('uses the given field prefix', () => {
      assertFieldError({ timezone: zone, intervals: [{ every: 'x' }] }, 'schedule.intervals[0].every', /duration/, 'schedule');
    });
  });
});
