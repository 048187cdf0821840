import assert from 'node:assert/strict';
import { stackOrder } from '../../src/memory/objective-memory';

describe('stackOrder(variationLayers, requested)', () => {
  it("puts the variation's layers by position ascending, then the requested ones in the order given", () => {
    const variation = [{ memoryLayerId: 'top', position: 9 }, { memoryLayerId: 'bottom', position: 0 }, { memoryLayerId: 'middle', position: 4 }];
    assert.deepEqual(stackOrder(variation, ['r1', 'r2']), ['bottom', 'middle', 'top', 'r1', 'r2']);
  });

  it('moves a variation layer that is also requested up to its requested place, once', () => {
    const variation = [{ memoryLayerId: 'a', position: 1 }, { memoryLayerId: 'b', position: 2 }];
    assert.deepEqual(stackOrder(variation, ['a', 'c']), ['b', 'a', 'c']);
  });

  it('is empty for no layers', () => {
    assert.deepEqual(stackOrder([], []), []);
  });
});
