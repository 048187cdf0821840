// The one way a service transaction runs: in the calling flow's transaction
// context (transaction-context.ts), retried whole when Postgres aborts it for a
// deadlock or a serialization failure. It must not run side effects that a
// rollback cannot undo: the work may run several times.
import type { DataSource, EntityManager } from 'typeorm';
import { AbortedError } from '../src/errors';

/** SQLSTATEs after which running the whole transaction again may succeed. */
const RETRYABLE_CODES = new Set([
  '40P01', // deadlock_detected
  '40001', // serialization_failure
]);

export interface TransactionOptions {
  /**
   * The manager the caller's store is bound to. When it (or, by default, the
   * calling flow) already holds an open transaction, the work joins it and
   * does not retry on its own: only the outermost transaction retries.
   */
  joining?: EntityManager;
  /** Runs in all, the first included. @default 5 */
  attempts?: number;
  /** Upper bound of the first retry's random delay; it doubles with each retry. @default 20 */
  baseDelayMs?: number;
  /** Cap on one retry's delay. @default 500 */
  maxDelayMs?: number;
}

/** True when `error`, or an error it wraps, is a deadlock or a serialization failure. */
export function isRetryableConflict(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const candidate = current as { code?: unknown; driverError?: { code?: unknown }; cause?: unknown };
    if (RETRYABLE_CODES.has(String(candidate.code)) || RETRYABLE_CODES.has(String(candidate.driverError?.code))) return true;
    current = candidate.cause;
  }
  return false;
}

/** Full jitter: a random delay up to base·2^(retry-1), capped. */
function retryDelay(retry: number, options: TransactionOptions): number {
  const ceiling = Math.min(options.maxDelayMs ?? 500, (options.baseDelayMs ?? 20) * 2 ** (retry - 1));
  return Math.random() * ceiling;
}

/**
 * Runs `work` in one database transaction and answers its value once it has
 * committed. A transaction Postgres aborts with a deadlock (40P01) or a
 * serialization failure (40001) is rolled back and run again from the start,
 * up to `attempts` runs, after a jittered delay. Inside an open transaction the
 * work joins it and a conflict propagates to the outermost runner.
 * @throws AbortedError when every run ended in such a conflict (the client should retry)
 * @throws whatever `work` throws otherwise, after the rollback
 */
export async function runTransaction<T>(dataSource: DataSource, work: (tx: EntityManager) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const open = options.joining ?? dataSource.manager;
  if (open.queryRunner?.isTransactionActive) return work(open);
  const attempts = Math.max(1, options.attempts ?? 5);
  for (let attempt = 1; ; attempt += 1) {
    try {
      // Through the routed manager: the work's flow routes its queries to this transaction.
      return await dataSource.transaction((tx) => work(tx));
    } catch (error) {
      if (!isRetryableConflict(error)) throw error;
      if (attempt >= attempts) {
        throw new AbortedError(`the request conflicted with concurrent changes to the same resources ${attempts} times; retry it`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelay(attempt, options)));
    }
  }
}
