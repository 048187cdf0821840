// A promise with a deadline: the one race of "this work, or a timer" that the
// node's probes, /readyz and its NATS drain use, so that each clears its timer
// and none leaves a process waiting on a forgotten one.

/** Raised by withTimeout when the work has not settled in time. */
export class TimeoutExpiredError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'TimeoutExpiredError';
  }
}

/**
 * Settles as `work` does, or rejects with TimeoutExpiredError once `timeoutMs`
 * has passed first. The work itself is not cancelled (a promise cannot be).
 */
export function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutExpiredError(timeoutMs)), timeoutMs);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
