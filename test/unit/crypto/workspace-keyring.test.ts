import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DecryptionError, rewrapDataKey, type FieldRef } from '../../../src/crypto/envelope';
import { WorkspaceKeyring } from '../../../src/crypto/workspace-keyring';
import type { DataKeyStore } from '../../../src/ports/data-key-store';

/** The DataKeyStore contract in memory: first insert wins. */
class MemoryDataKeyStore implements DataKeyStore {
  readonly rows = new Map<string, string>();
  async findWrapped(workspaceId: string) {
    return this.rows.get(workspaceId) ?? null;
  }
  async insertIfAbsent(workspaceId: string, wrapped: string) {
    if (!this.rows.has(workspaceId)) this.rows.set(workspaceId, wrapped);
  }
}

const ref = (workspaceId: string, resourceId: string): FieldRef => ({ workspaceId, resource: 'workspace_secret', resourceId, field: 'spec.value' });
const isAuthFailure = (error: unknown) => error instanceof DecryptionError && /failed authentication/.test(error.message);

describe('WorkspaceKeyring', () => {
  let store: MemoryDataKeyStore;
  let master: Buffer;
  let keyring: WorkspaceKeyring;
  beforeEach(() => {
    store = new MemoryDataKeyStore();
    master = randomBytes(32);
    keyring = new WorkspaceKeyring(master, store);
  });

  it('encrypts and decrypts a value, creating one data key per workspace', async () => {
    const sealed = await keyring.encrypt(ref('ws_A', 'secret_1'), 's3cr3t');
    await keyring.encrypt(ref('ws_A', 'secret_2'), 'other');
    await keyring.encrypt(ref('ws_B', 'secret_3'), 'third');
    assert.equal(await keyring.decrypt(ref('ws_A', 'secret_1'), sealed), 's3cr3t');
    assert.deepEqual([...store.rows.keys()].sort(), ['ws_A', 'ws_B']);
    assert.ok(!store.rows.get('ws_A')!.includes('s3cr3t'));
  });

  it('agrees on one data key when two first uses race', async () => {
    const [first, second] = await Promise.all([keyring.encrypt(ref('ws_A', 'secret_1'), 'one'), keyring.encrypt(ref('ws_A', 'secret_2'), 'two')]);
    assert.equal(await keyring.decrypt(ref('ws_A', 'secret_1'), first), 'one');
    assert.equal(await keyring.decrypt(ref('ws_A', 'secret_2'), second), 'two');
  });

  it('refuses a ciphertext swapped to another row of the same workspace', async () => {
    const sealed = await keyring.encrypt(ref('ws_A', 'secret_1'), 'value');
    await keyring.encrypt(ref('ws_A', 'secret_2'), 'other');
    await assert.rejects(keyring.decrypt(ref('ws_A', 'secret_2'), sealed), isAuthFailure);
  });

  it('refuses a ciphertext copied to a row of another workspace', async () => {
    const sealed = await keyring.encrypt(ref('ws_A', 'secret_1'), 'value');
    await keyring.encrypt(ref('ws_B', 'secret_1'), 'other');
    await assert.rejects(keyring.decrypt(ref('ws_B', 'secret_1'), sealed), isAuthFailure);
  });

  it('refuses a tampered ciphertext', async () => {
    const sealed = await keyring.encrypt(ref('ws_A', 'secret_1'), 'value');
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[bytes.length - 1] ^= 0x80;
    await assert.rejects(keyring.decrypt(ref('ws_A', 'secret_1'), `v1.${bytes.toString('base64url')}`), isAuthFailure);
  });

  it('cannot decrypt under another master key', async () => {
    const sealed = await keyring.encrypt(ref('ws_A', 'secret_1'), 'value');
    await assert.rejects(new WorkspaceKeyring(randomBytes(32), store).decrypt(ref('ws_A', 'secret_1'), sealed), isAuthFailure);
  });

  it('keeps every value decryptable after the data keys are rewrapped under a new master key, and the old key stops working', async () => {
    const values = new Map([['secret_1', 'alpha'], ['secret_2', 'beta']]);
    const sealed = new Map<string, string>();
    for (const [id, value] of values) sealed.set(id, await keyring.encrypt(ref('ws_A', id), value));
    const newMaster = randomBytes(32);
    for (const [workspaceId, wrapped] of store.rows) store.rows.set(workspaceId, rewrapDataKey(master, newMaster, workspaceId, wrapped)!);
    const rotated = new WorkspaceKeyring(newMaster, store);
    for (const [id, value] of values) assert.equal(await rotated.decrypt(ref('ws_A', id), sealed.get(id)!), value);
    await assert.rejects(keyring.decrypt(ref('ws_A', 'secret_1'), sealed.get('secret_1')!), isAuthFailure);
  });

  it('reports a workspace without a data key', async () => {
    await assert.rejects(keyring.decrypt(ref('ws_X', 'secret_1'), 'v1.AAAA'), (error: unknown) => error instanceof DecryptionError && error.message === 'workspace ws_X has no data key');
  });
});
