// Encrypts and decrypts workspace fields (secret values, provider keys) under
// the workspace's data key, creating that key on first use. Never logs or
// returns key material; callers get plaintext only from decrypt().
import type { DataKeyStore } from '../ports/data-key-store';
import { DecryptionError, fieldAad, newDataKey, open, seal, unwrapDataKey, wrapDataKey, type FieldRef } from './envelope';

export class WorkspaceKeyring {
  constructor(
    private readonly masterKey: Buffer,
    private readonly store: DataKeyStore,
  ) {}

  /** Seals a UTF-8 value for the field `ref` (creating the workspace data key if needed). */
  async encrypt(ref: FieldRef, plaintext: string): Promise<string> {
    const dataKey = await this.dataKey(ref.workspaceId, true);
    return seal(dataKey, Buffer.from(plaintext, 'utf8'), fieldAad(ref));
  }

  /**
   * Opens a value sealed for the field `ref`.
   * @throws DecryptionError when the value belongs to another row or workspace, was altered,
   *   or the workspace data key is not wrapped by this master key
   */
  async decrypt(ref: FieldRef, sealed: string): Promise<string> {
    const dataKey = await this.dataKey(ref.workspaceId, false);
    return open(dataKey, sealed, fieldAad(ref)).toString('utf8');
  }

  private async dataKey(workspaceId: string, create: boolean): Promise<Buffer> {
    let wrapped = await this.store.findWrapped(workspaceId);
    if (!wrapped && create) {
      await this.store.insertIfAbsent(workspaceId, wrapDataKey(this.masterKey, workspaceId, newDataKey()));
      wrapped = await this.store.findWrapped(workspaceId);
    }
    if (!wrapped) throw new DecryptionError(`workspace ${workspaceId} has no data key`);
    return unwrapDataKey(this.masterKey, workspaceId, wrapped);
  }
}
