import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/config';
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, nextRetryDelayMs, parseRetryAfter, parseWebhookRetrySchedule,
} from '../../../src/webhooks/webhook-retry-schedule';

const lowest = () => 0;
const middle = () => 0.5;
const highest = () => 1 - Number.EPSILON;

describe('webhook retry schedule', () => {
  describe('DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS', () => {
    it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts in all', () => {
      assert.deepEqual(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    });
  });

  describe('parseWebhookRetrySchedule', () => {
    it('reads comma-separated durations in every unit', () => {
      assert.deepEqual(parseWebhookRetrySchedule('1s,1s,2s'), [1_000, 1_000, 2_000]);
      assert.deepEqual(parseWebhookRetrySchedule('500ms, 5m ,2h,1d'), [500, 300_000, 7_200_000, 86_400_000]);
    });

    it('reads combined units in descending order', () => {
      assert.deepEqual(parseWebhookRetrySchedule('1h30m,1m30s,1s500ms'), [5_400_000, 90_000, 1_500]);
    });

    it('reads "none" as a single attempt with no retries', () => {
      assert.deepEqual(parseWebhookRetrySchedule('none'), []);
    });

    it('spells the default schedule back to the default', () => {
      assert.deepEqual(parseWebhookRetrySchedule('5s,5m,30m,2h,5h,10h,10h'), DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS);
    });

    for (const [raw, item] of [['1s,,2s', ''], ['1s,5x', '5x'], ['1.5s', '1.5s'], ['-1s', '-1s'], ['10', '10'], ['30m1h', '30m1h'], ['1s,', ''], ['5 s', '5 s']]) {
      it(`refuses "${raw}", naming the variable and "${item}"`, () => {
        assert.throws(() => parseWebhookRetrySchedule(raw), (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.message, `AGENTRT_WEBHOOK_RETRY_SCHEDULE holds "${item}", which is not a duration such as 500ms, 5s, 5m, 2h, 1d or 1h30m`);
          return true;
        });
      });
    }

    it('refuses an empty value and says how to ask for no retries', () => {
      assert.throws(() => parseWebhookRetrySchedule('  '), {
        name: 'ConfigError',
        message: 'AGENTRT_WEBHOOK_RETRY_SCHEDULE is empty: list delays such as "5s,5m,30m", or write "none" for no retries',
      });
    });
  });

  describe('nextRetryDelayMs', () => {
    const schedule = [10_000, 60_000];

    it('waits the scheduled delay after each failure, jittered by at most 20 %', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: middle }), 10_000);
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 2, random: middle }), 60_000);
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: lowest }), 8_000);
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: highest }), 12_000);
    });

    it('stays within ±20 % for any draw', () => {
      for (let draw = 0; draw < 1; draw += 0.01) {
        const delay = nextRetryDelayMs({ schedule, failedAttempts: 2, random: () => draw }) as number;
        assert.ok(delay >= 48_000 && delay <= 72_000, `${delay} for ${draw}`);
      }
    });

    it('gives null once every scheduled retry was used (the delivery is FAILED)', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 3, random: middle }), null);
      assert.equal(nextRetryDelayMs({ schedule: [], failedAttempts: 1, random: middle }), null);
      assert.equal(nextRetryDelayMs({ schedule: DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, failedAttempts: 8, random: middle }), null);
    });

    it('refuses a count of failed attempts below 1', () => {
      assert.throws(() => nextRetryDelayMs({ schedule, failedAttempts: 0, random: middle }), RangeError);
    });

    it('honours a Retry-After longer than the jittered delay', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: middle, retryAfterMs: 15_000 }), 15_000);
    });

    it('caps a Retry-After at twice the scheduled delay', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: middle, retryAfterMs: 3_600_000 }), 20_000);
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 2, random: lowest, retryAfterMs: 3_600_000 }), 120_000);
    });

    it('ignores a Retry-After shorter than the jittered delay', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: highest, retryAfterMs: 11_000 }), 12_000);
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 1, random: middle, retryAfterMs: 0 }), 10_000);
    });

    it('still gives null after the last retry, whatever the Retry-After', () => {
      assert.equal(nextRetryDelayMs({ schedule, failedAttempts: 3, random: middle, retryAfterMs: 1_000 }), null);
    });
  });

  describe('parseRetryAfter', () => {
    const now = new Date('1994-11-06T08:49:00Z');

    it('reads delay-seconds', () => {
      assert.equal(parseRetryAfter('120', now), 120_000);
      assert.equal(parseRetryAfter(' 0 ', now), 0);
    });

    it('reads an HTTP-date in all three forms as the time until it', () => {
      assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now), 37_000);
      assert.equal(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now), 37_000);
      assert.equal(parseRetryAfter('Sun Nov  6 08:49:37 1994', now), 37_000);
    });

    it('reads a date already past as no wait', () => {
      assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:00:00 GMT', now), 0);
    });

    it('reads an absent or malformed header as absent', () => {
      for (const header of [null, '', '-5', '1.5', 'soon', '5 minutes', '2024-01-01', 'foo 1', 'Sun, 06 Nov 1994 08:49:37 PST', '99999999999999999999']) {
        assert.equal(parseRetryAfter(header, now), undefined, String(header));
      }
    });
  });
});
