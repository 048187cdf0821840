import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../../src/errors';
import { formatScheduleDuration, parseScheduleDuration } from '../../../src/schedules/schedule-duration';

describe('parseScheduleDuration(text, field)', () => {
  it('reads each unit and compounds in descending order', () => {
    assert.equal(parseScheduleDuration('90s', 'f'), 90);
    assert.equal(parseScheduleDuration('15m', 'f'), 900);
    assert.equal(parseScheduleDuration('1h30m', 'f'), 5400);
    assert.equal(parseScheduleDuration('1d', 'f'), 86_400);
    assert.equal(parseScheduleDuration('1d2h3m4s', 'f'), 93_784);
    assert.equal(parseScheduleDuration('0s', 'f'), 0);
  });

  for (const bad of ['', '1', '1h 30m', '30m1h', '1.5h', '-1h', '1w', 'PT1H', '1H', '1h1h', ' 1h']) {
    it(`refuses ${JSON.stringify(bad)} naming the field`, () => {
      assert.throws(
        () => parseScheduleDuration(bad, 'spec.schedule.intervals[0].every'),
        (error: unknown) => {
          assert.ok(error instanceof InvalidArgumentError);
          assert.equal(error.code, 'INVALID_ARGUMENT');
          assert.equal(error.fieldViolations[0].field, 'spec.schedule.intervals[0].every');
          assert.match(error.message, /^spec\.schedule\.intervals\[0\]\.every: must be a duration such as 90s/);
          return true;
        },
      );
    });
  }

  it('refuses a value that is not a string', () => {
    assert.throws(() => parseScheduleDuration(60, 'x.every'), /^InvalidArgumentError: x\.every: must be a duration/);
  });
});

describe('formatScheduleDuration(seconds)', () => {
  it('writes the canonical form', () => {
    assert.equal(formatScheduleDuration(5400), '1h30m');
    assert.equal(formatScheduleDuration(3600), '1h');
    assert.equal(formatScheduleDuration(86_400), '1d');
    assert.equal(formatScheduleDuration(90), '1m30s');
    assert.equal(formatScheduleDuration(93_784), '1d2h3m4s');
    assert.equal(formatScheduleDuration(0), '0s');
  });

  it('round-trips with the parser', () => {
    for (const text of ['90m', '3600s', '86400s', '25h', '61s']) {
      const seconds = parseScheduleDuration(text, 'f');
      assert.equal(parseScheduleDuration(formatScheduleDuration(seconds), 'f'), seconds);
    }
    assert.equal(formatScheduleDuration(parseScheduleDuration('90m', 'f')), '1h30m');
  });
});
