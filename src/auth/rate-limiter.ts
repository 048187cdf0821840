// Token-bucket rate limiting per principal, in memory on each node (a cluster
// multiplies the allowance by its node count; docs/operations.md says so).
import { ResourceExhaustedError } from '../errors';

export interface RateLimiterOptions {
  ratePerSecond: number;
  burst: number;
  /** Clock in ms (injected for tests). */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 100_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;

  constructor(private readonly options: RateLimiterOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Takes `cost` tokens from the principal's bucket.
   * @throws ResourceExhaustedError with the seconds to wait (Retry-After)
   */
  take(principalKey: string, cost = 1): void {
    const now = this.now();
    const bucket = this.buckets.get(principalKey) ?? { tokens: this.options.burst, updatedAt: now };
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.options.ratePerSecond);
    bucket.updatedAt = now;
    if (bucket.tokens < cost) {
      this.remember(principalKey, bucket);
      const waitSeconds = (cost - bucket.tokens) / this.options.ratePerSecond;
      throw new ResourceExhaustedError(`rate limit exceeded; retry in ${Math.ceil(waitSeconds)} s`, { retryAfterSeconds: waitSeconds });
    }
    bucket.tokens -= cost;
    this.remember(principalKey, bucket);
  }

  private remember(key: string, bucket: Bucket): void {
    // Bounded memory: forget the oldest buckets (they refill to full anyway).
    if (!this.buckets.has(key) && this.buckets.size >= MAX_BUCKETS) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    this.buckets.set(key, bucket);
  }
}
