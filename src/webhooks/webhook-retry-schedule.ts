// When a failed webhook delivery is tried again (api-decisions.md "Webhooks"):
// the configured schedule, its ±20 % jitter and the receiver's Retry-After.
// Pure: the caller passes the randomness and the clock, and keeps the timers.
import { ConfigError } from '../config';
import { readDuration } from '../resource/duration';

export const WEBHOOK_RETRY_SCHEDULE_VARIABLE = 'AGENTRT_WEBHOOK_RETRY_SCHEDULE';

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * Delays after the first attempt, one per retry: 8 attempts over about 27.6 h
 * (Svix's schedule), after which the delivery is FAILED.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
]);

/** Each delay lands within this fraction either side of the scheduled one, so retries of many deliveries spread out. */
export const WEBHOOK_RETRY_JITTER = 0.2;
/** A Retry-After may stretch a delay to at most this multiple of the scheduled one, so a receiver cannot park deliveries for days. */
export const RETRY_AFTER_CAP_FACTOR = 2;

/** The value that spells "no retries", since an empty variable means "not set" everywhere else in the configuration. */
const NO_RETRIES = 'none';

/**
 * Reads AGENTRT_WEBHOOK_RETRY_SCHEDULE: comma-separated delays after the first
 * attempt (`5s,5m,30m,2h`; units d, h, m, s, ms, combinable in that order as
 * in `1h30m`). `none` means a single attempt and no retries. Leaving the
 * variable unset (or empty) is the caller's business: it means the default.
 * @throws ConfigError naming the variable and the first item that is not a duration
 * @example parseWebhookRetrySchedule('1s,1s,2s') // [1000, 1000, 2000]
 */
export function parseWebhookRetrySchedule(raw: string): number[] {
  const text = raw.trim();
  if (text.toLowerCase() === NO_RETRIES) return [];
  if (text === '') throw new ConfigError(`${WEBHOOK_RETRY_SCHEDULE_VARIABLE} is empty: list delays such as "5s,5m,30m", or write "${NO_RETRIES}" for no retries`);
  return text.split(',').map((part) => {
    const item = part.trim();
    // Schedule durations' grammar (`1h30m`), plus `ms` for tests.
    const delay = readDuration(item, { milliseconds: true });
    if (typeof delay !== 'number') {
      throw new ConfigError(`${WEBHOOK_RETRY_SCHEDULE_VARIABLE} holds "${item}", which is not a duration such as 500ms, 5s, 5m, 2h, 1d or 1h30m`);
    }
    return delay;
  });
}

export interface RetryDelayInput {
  /** Delays after the first attempt (DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS or the configured one). */
  schedule: readonly number[];
  /** Attempts made so far, all failed: 1 after the first failure. */
  failedAttempts: number;
  /** A uniform draw in [0, 1) (Math.random in production). */
  random: () => number;
  /** The receiver's Retry-After in ms; pass it only for a 429 or a 503. */
  retryAfterMs?: number;
}

/**
 * The wait before the next attempt, or null when the schedule is exhausted
 * and the delivery becomes FAILED. The scheduled delay gets ±20 % jitter; a
 * longer Retry-After wins, up to twice the scheduled delay; a shorter one is
 * ignored, so a receiver cannot speed retries up.
 * @throws RangeError when `failedAttempts` is below 1 (nothing failed yet)
 */
export function nextRetryDelayMs(input: RetryDelayInput): number | null {
  if (!Number.isInteger(input.failedAttempts) || input.failedAttempts < 1) throw new RangeError(`failedAttempts must be an integer >= 1, got ${input.failedAttempts}`);
  const scheduled = input.schedule[input.failedAttempts - 1];
  if (scheduled === undefined) return null;
  const jittered = Math.round(scheduled * (1 - WEBHOOK_RETRY_JITTER + 2 * WEBHOOK_RETRY_JITTER * input.random()));
  if (input.retryAfterMs === undefined || input.retryAfterMs <= jittered) return jittered;
  return Math.min(input.retryAfterMs, RETRY_AFTER_CAP_FACTOR * scheduled);
}

const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY_NAME = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const CLOCK = '\\d{2}:\\d{2}:\\d{2}';
// The three HTTP-date forms recipients must accept (RFC 9110 section 5.6.7); asctime has no zone but means GMT.
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, \\d{2} ${MONTH} \\d{4} ${CLOCK} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY_NAME}, \\d{2}-${MONTH}-\\d{2} ${CLOCK} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} [ \\d]\\d ${CLOCK} \\d{4}$`);

/**
 * A Retry-After header in ms from `now`: delay-seconds or an HTTP-date (a date
 * already past gives 0). Anything else gives undefined, as if it were absent.
 */
export function parseRetryAfter(header: string | null, now: Date): number | undefined {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) {
    const ms = Number(value) * SECOND_MS;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  let at: number;
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) at = Date.parse(value);
  else if (ASCTIME_DATE.test(value)) at = Date.parse(`${value} GMT`);
  else return undefined;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
