import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  DecryptionError,
  fieldAad,
  newDataKey,
  open,
  rewrapDataKey,
  seal,
  unwrapDataKey,
  wrapDataKey,
  type FieldRef,
} from '../../../src/crypto/envelope';

const REF: FieldRef = { workspaceId: 'ws_A', resource: 'workspace_secret', resourceId: 'secret_1', field: 'spec.value' };
const AUTH_FAILED = 'sealed record failed authentication (wrong key, wrong row or tampered data)';

/** Flips one bit of the byte at `index` of a sealed record's payload. */
function flipByte(sealed: string, index: number): string {
  const bytes = Buffer.from(sealed.slice(3), 'base64url');
  bytes[index] ^= 0x01;
  return `v1.${bytes.toString('base64url')}`;
}

function assertFails(run: () => unknown, message = AUTH_FAILED): void {
  assert.throws(run, (error: unknown) => error instanceof DecryptionError && error.message === message);
}

describe('envelope', () => {
  describe('seal() and open()', () => {
    const key = newDataKey();

    it('round-trips a value and writes the versioned v1 format', () => {
      const sealed = seal(key, Buffer.from('hunter2 ✓'), fieldAad(REF));
      assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
      assert.equal(open(key, sealed, fieldAad(REF)).toString('utf8'), 'hunter2 ✓');
    });

    it('uses a fresh IV, so sealing twice gives different records', () => {
      assert.notEqual(seal(key, Buffer.from('same'), 'aad'), seal(key, Buffer.from('same'), 'aad'));
    });

    it('fails when any byte of the IV, tag or ciphertext is flipped', () => {
      const sealed = seal(key, Buffer.from('a secret value'), fieldAad(REF));
      const length = Buffer.from(sealed.slice(3), 'base64url').length;
      for (const index of [0, 11, 12, 27, 28, length - 1]) assertFails(() => open(key, flipByte(sealed, index), fieldAad(REF)));
    });

    it('fails for a record moved to another row, field or workspace', () => {
      const sealed = seal(key, Buffer.from('value'), fieldAad(REF));
      assertFails(() => open(key, sealed, fieldAad({ ...REF, resourceId: 'secret_2' })));
      assertFails(() => open(key, sealed, fieldAad({ ...REF, field: 'spec.apiKey' })));
      assertFails(() => open(key, sealed, fieldAad({ ...REF, resource: 'ai_provider_key' })));
      assertFails(() => open(key, sealed, fieldAad({ ...REF, workspaceId: 'ws_B' })));
    });

    it('fails under another key', () => {
      assertFails(() => open(newDataKey(), seal(key, Buffer.from('value'), 'aad'), 'aad'));
    });

    it('refuses an unknown version and a truncated record', () => {
      const sealed = seal(key, Buffer.from('value'), 'aad');
      assertFails(() => open(key, `v2.${sealed.slice(3)}`, 'aad'), 'unsupported sealed record version "v2"');
      assertFails(() => open(key, 'v1.AAAA', 'aad'), 'sealed record is truncated');
    });
  });

  describe('wrapDataKey() and unwrapDataKey()', () => {
    const master = randomBytes(32);

    it('unwraps the data key it wrapped', () => {
      const dataKey = newDataKey();
      assert.deepEqual(unwrapDataKey(master, 'ws_A', wrapDataKey(master, 'ws_A', dataKey)), dataKey);
    });

    it('fails under another master key', () => {
      assertFails(() => unwrapDataKey(randomBytes(32), 'ws_A', wrapDataKey(master, 'ws_A', newDataKey())));
    });

    it('fails for a wrapped key copied to another workspace', () => {
      assertFails(() => unwrapDataKey(master, 'ws_B', wrapDataKey(master, 'ws_A', newDataKey())));
    });

    it('fails when a byte of the wrapped key is flipped', () => {
      assertFails(() => unwrapDataKey(master, 'ws_A', flipByte(wrapDataKey(master, 'ws_A', newDataKey()), 40)));
    });
  });

  describe('rewrapDataKey()', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);

    it('moves a data key to the new master key: same data key, the old master key no longer opens it', () => {
      const dataKey = newDataKey();
      const rewrapped = rewrapDataKey(oldKey, newKey, 'ws_A', wrapDataKey(oldKey, 'ws_A', dataKey));
      assert.ok(rewrapped);
      assert.deepEqual(unwrapDataKey(newKey, 'ws_A', rewrapped), dataKey);
      assertFails(() => unwrapDataKey(oldKey, 'ws_A', rewrapped));
    });

    it('returns null for a key already wrapped by the new master key', () => {
      assert.equal(rewrapDataKey(oldKey, newKey, 'ws_A', wrapDataKey(newKey, 'ws_A', newDataKey())), null);
    });

    it('throws when neither master key opens the data key', () => {
      assertFails(() => rewrapDataKey(oldKey, newKey, 'ws_A', wrapDataKey(randomBytes(32), 'ws_A', newDataKey())));
    });
  });
});
