import assert from 'node:assert/strict';
import { resolveMemoryKey, type StackLayer } from '../../src/memory/resolve-memory-key';

function layer(layerId: string, entries: Record<string, string>): StackLayer<string> {
  return { layerId, entries: new Map(Object.entries(entries)) };
}

describe('resolveMemoryKey(stack, key)', () => {
  it('takes the entry of the topmost layer holding the key (LIFO)', () => {
    const stack = [layer('bottom', { greeting: 'hello from bottom' }), layer('middle', { greeting: 'hello from middle' }), layer('top', { other: 'x' })];
    assert.deepEqual(resolveMemoryKey(stack, 'greeting'), { layerId: 'middle', entry: 'hello from middle' });
  });

  it('falls through to lower layers when upper layers lack the key', () => {
    const stack = [layer('bottom', { a: 'bottom a' }), layer('top', { b: 'top b' })];
    assert.deepEqual(resolveMemoryKey(stack, 'a'), { layerId: 'bottom', entry: 'bottom a' });
    assert.deepEqual(resolveMemoryKey(stack, 'b'), { layerId: 'top', entry: 'top b' });
  });

  it('returns null when no layer holds the key, and for an empty stack', () => {
    assert.equal(resolveMemoryKey([layer('only', { a: '1' })], 'missing'), null);
    assert.equal(resolveMemoryKey([], 'a'), null);
  });

  it('compares keys exactly: case-sensitive and without path semantics', () => {
    const stack = [layer('l', { 'Skills/PDF': 'upper', 'skills/pdf': 'lower', skills: 'parent' })];
    assert.equal(resolveMemoryKey(stack, 'skills/pdf')?.entry, 'lower');
    assert.equal(resolveMemoryKey(stack, 'Skills/PDF')?.entry, 'upper');
    assert.equal(resolveMemoryKey(stack, 'SKILLS/PDF'), null);
    assert.equal(resolveMemoryKey(stack, 'skills/pdf/extra'), null);
  });

  it('treats the same layer pushed twice as present at its topmost position', () => {
    const a = layer('a', { k: 'from a' });
    const stack = [a, layer('b', { k: 'from b' }), a];
    assert.deepEqual(resolveMemoryKey(stack, 'k'), { layerId: 'a', entry: 'from a' });
  });

  it('does not modify the stack', () => {
    const stack = [layer('a', { k: '1' }), layer('b', { k: '2' })];
    const before = stack.map((item) => item.layerId);
    resolveMemoryKey(stack, 'k');
    assert.deepEqual(stack.map((item) => item.layerId), before);
  });
});
