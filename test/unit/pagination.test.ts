import assert from 'node:assert/strict';
import { encodeCursor, MAX_CURSOR_POSITION_LENGTH, MAX_PAGE_SIZE, pageRequest, toPage } from '../../src/resource/pagination';
import { resolveUpdatePaths } from '../../src/resource/update-mask';
import { newId } from '../../src/ids';

describe('pageRequest', () => {
  it('defaults to 50 ascending and clamps large limits to 1000', () => {
    assert.deepEqual(pageRequest({}), { limit: 50, sortOrder: 'asc' });
    assert.equal(pageRequest({ limit: 5000 }).limit, MAX_PAGE_SIZE);
  });
  it('refuses a cursor that is not ours or was made for the other order', () => {
    assert.throws(() => pageRequest({ cursor: 'garbage' }), /cursor: is not a cursor returned by this list/);
    assert.throws(() => pageRequest({ cursor: encodeCursor('x', 'asc'), sortOrder: 'desc' }), /other sortOrder/);
    for (const forged of [encodeCursor('agent:\u0000x', 'asc'), encodeCursor('a'.repeat(MAX_CURSOR_POSITION_LENGTH + 1), 'asc'), encodeCursor('', 'asc'),
      Buffer.from('{"a":1,"s":"asc"}').toString('base64url'), Buffer.from('null').toString('base64url')]) {
      assert.throws(() => pageRequest({ cursor: forged }), /cursor: is not a cursor returned by this list/);
    }
    assert.equal(pageRequest({ cursor: encodeCursor('a'.repeat(MAX_CURSOR_POSITION_LENGTH), 'asc') }).after?.length, MAX_CURSOR_POSITION_LENGTH);
  });
  it('reports a next cursor only when an extra row was fetched', () => {
    const request = pageRequest({ limit: 2 });
    assert.equal(toPage([{ id: 'a' }, { id: 'b' }], request, (row) => row).pagination.nextCursor, '');
    const page = toPage([{ id: 'a' }, { id: 'b' }, { id: 'c' }], request, (row) => row);
    assert.deepEqual(page.items, [{ id: 'a' }, { id: 'b' }]);
    assert.equal(pageRequest({ cursor: page.pagination.nextCursor }).after, 'b');
  });
});

describe('resolveUpdatePaths', () => {
  const allowed = ['metadata.name', 'spec.description'];
  it('applies present fields when there is no mask', () => {
    assert.deepEqual(resolveUpdatePaths({ spec: { description: 'x' } }, undefined, allowed), ['spec.description']);
  });
  it('applies only masked fields, even absent ones', () => {
    assert.deepEqual(resolveUpdatePaths({ metadata: { name: 'n' } }, 'spec.description', allowed), ['spec.description']);
  });
  it('refuses a path that does not exist', () => {
    assert.throws(() => resolveUpdatePaths({}, 'spec.nope', allowed), /updateMask: "spec.nope" is not an updatable field/);
  });
});

describe('newId', () => {
  it('makes ids that sort in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('tenant'));
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });
});
