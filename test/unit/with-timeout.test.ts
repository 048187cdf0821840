import assert from 'node:assert/strict';
import { TimeoutExpiredError, withTimeout } from '../../src/with-timeout';

describe('withTimeout', () => {
  it('settles as the work does when it settles first', async () => {
    assert.equal(await withTimeout(Promise.resolve('answer'), 1000), 'answer');
    await assert.rejects(withTimeout(Promise.reject(new Error('refused')), 1000), /refused/);
  });

  it('rejects with TimeoutExpiredError when the work never settles', async () => {
    const never = new Promise<void>(() => undefined);
    await assert.rejects(withTimeout(never, 5), (error: unknown) => error instanceof TimeoutExpiredError && error.message === 'no answer within 5 ms');
  });
});
