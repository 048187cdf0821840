import assert from 'node:assert/strict';
import { expiringMemo } from '../../src/resource/expiring-memo';

describe('expiringMemo', () => {
  it('loads a key once per ttl, shares a load in flight, and forgets failures and old entries', async () => {
    let clock = 0;
    const loads: string[] = [];
    let fail = false;
    const memo = expiringMemo(async (key) => {
      loads.push(key);
      if (fail) throw new Error('down');
      return `${key}@${clock}`;
    }, { ttlMs: 1000, maxEntries: 2, now: () => clock });

    const [first, second] = await Promise.all([memo('a'), memo('a')]);
    assert.equal(first, 'a@0');
    assert.equal(second, 'a@0');
    assert.deepEqual(loads, ['a'], 'concurrent callers share one load');
    clock = 999;
    assert.equal(await memo('a'), 'a@0');
    clock = 1000;
    assert.equal(await memo('a'), 'a@1000', 'reloaded once the ttl has passed');

    fail = true;
    await assert.rejects(memo('b'), /down/);
    fail = false;
    assert.equal(await memo('b'), 'b@1000', 'a failed load is not kept');

    await memo('c');
    loads.length = 0;
    await memo('a');
    assert.deepEqual(loads, ['a'], 'the oldest entry went when a third key came');
  });

  it('forgets one key at once, the others kept', async () => {
    const loads: string[] = [];
    const memo = expiringMemo(async (key) => {
      loads.push(key);
      return `${key}#${loads.length}`;
    }, { ttlMs: 60_000 });
    await memo('a');
    await memo('b');
    memo.forget('a');
    assert.equal(await memo('a'), 'a#3');
    assert.equal(await memo('b'), 'b#2');
    assert.deepEqual(loads, ['a', 'b', 'a']);
  });
});
