// The time inside an id (src/ids.ts idTime): what webhook delivery lag is
// measured from (an objective event's creation), read without a lookup.
import assert from 'node:assert/strict';
import { idTime, newId, newUlid } from '../../src/ids';

describe('idTime', () => {
  it('reads when a prefixed id or a bare ULID was made, to the millisecond', () => {
    const before = Date.now();
    const [prefixed, bare] = [newId('objectiveEvent'), newUlid()];
    const after = Date.now();
    for (const id of [prefixed, bare]) {
      const made = idTime(id)!;
      assert.ok(made >= before && made <= after, `${id}: ${made} within [${before}, ${after}]`);
    }
    assert.equal(idTime('objevt_01ARZ3NDEKTSV4RRFFQ69G5FAV'), 1469922850259);
  });

  it('is undefined for a value that holds no ULID', () => {
    for (const value of ['objevt_obj_1_1', 'whdel_', '', 'not an id', 'objevt_01ARZ3NDEKTSV4RRFFQ69G5FA!', 'objevt_ZZZZZZZZZZZZZZZZZZZZZZZZZZ']) assert.equal(idTime(value), undefined, value);
  });
});
