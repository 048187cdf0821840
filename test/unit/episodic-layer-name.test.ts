// The name of an episodic layer (src/memory/episodic-memory.ts): `episodic/<key>`,
// cut to the longest name a client could set, never inside a character.
import assert from 'node:assert/strict';
import { episodicLayerName } from '../../src/memory/episodic-memory';
import { NAME_MAX } from '../../src/schemas/common.schema';

describe('episodicLayerName', () => {
  it('is episodic/<key>', () => {
    assert.equal(episodicLayerName('guest-42'), 'episodic/guest-42');
  });

  it('is cut to NAME_MAX characters, counting a character outside the BMP as one', () => {
    const long = episodicLayerName('k'.repeat(300));
    assert.equal(long.length, NAME_MAX);
    const emoji = episodicLayerName('😀'.repeat(300));
    assert.equal(Array.from(emoji).length, NAME_MAX);
    assert.ok(emoji.endsWith('😀'), 'no half character at the end');
  });
});
