import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/auth/rate-limiter';
import type { ApiError } from '../../src/errors';

describe('RateLimiter', () => {
  it('allows the burst, refuses the next call with a retry delay, then refills', () => {
    let now = 0;
    const limiter = new RateLimiter({ ratePerSecond: 2, burst: 3, now: () => now });
    limiter.take('p');
    limiter.take('p');
    limiter.take('p');
    assert.throws(() => limiter.take('p'), (error: ApiError) => {
      assert.equal(error.code, 'RESOURCE_EXHAUSTED');
      assert.equal(error.retryAfterSeconds, 0.5);
      return true;
    });
    now = 500;
    limiter.take('p');
  });
  it('charges costlier calls more and keeps principals apart', () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 5, now: () => 0 });
    limiter.take('a', 5);
    assert.throws(() => limiter.take('a'), /rate limit exceeded/);
    limiter.take('b', 5);
  });
});
