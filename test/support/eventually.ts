// Polling for a condition that becomes true asynchronously (an objective
// finishing, a webhook arriving): the first truthy value read, or a failure
// naming what was awaited.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** Reads every `intervalMs` until `read` answers a truthy value, and answers it. @throws an assertion error after `timeoutMs` naming `what`. */
export async function eventuallyValue<T>(read: () => Promise<T | undefined | false>, what: string, timeoutMs = 15_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}
