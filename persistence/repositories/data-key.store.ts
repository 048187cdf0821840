// Workspace data keys over raw SQL (one small table, no entity): lookup,
// race-free first insert, and the master-key rotation that rewraps them all.
import type { DataSource } from 'typeorm';
import { ConfigError } from '../../src/config';
import { DecryptionError, rewrapDataKey } from '../../src/crypto/envelope';
import type { DataKeyStore } from '../../src/ports/data-key-store';
import { runTransaction } from '../transaction-runner';
import { rewrapServiceKeys } from './service-key.store';

export function createDataKeyStore(dataSource: DataSource): DataKeyStore {
  return {
    async findWrapped(workspaceId) {
      const rows: Array<{ wrapped_key: string }> = await dataSource.query('SELECT wrapped_key FROM workspace_data_keys WHERE workspace_id = $1', [workspaceId]);
      return rows[0]?.wrapped_key ?? null;
    },
    async insertIfAbsent(workspaceId, wrapped) {
      await dataSource.query('INSERT INTO workspace_data_keys (workspace_id, wrapped_key) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING', [workspaceId, wrapped]);
    },
  };
}

export interface MasterKeyRotation {
  /** Data keys rewrapped from the old master key to the new one. */
  rewrapped: number;
  /** Data keys already wrapped by the new key (a repeated rotation), left alone. */
  alreadyCurrent: number;
  /** Service-wide keys (the API key token signing key) rewrapped. */
  serviceKeysRewrapped: number;
}

/**
 * Rotates the master key: unwraps every workspace data key with `oldKey` and
 * wraps it again with `newKey`, in one transaction that locks the table, so
 * either every key moves or none does. Secret values are not re-encrypted
 * (they are sealed under the data keys, which do not change), and neither are
 * API key tokens (their signing key is a service key, rewrapped here too). Safe to repeat:
 * keys already under `newKey` are skipped.
 * @throws ConfigError when the keys are equal, or a data key opens with neither key (nothing is changed)
 */
export async function rotateMasterKey(dataSource: DataSource, oldKey: Buffer, newKey: Buffer): Promise<MasterKeyRotation> {
  if (oldKey.equals(newKey)) throw new ConfigError('the new master key is the same as the current one');
  return runTransaction(dataSource, async (tx) => {
    await tx.query('LOCK TABLE workspace_data_keys IN EXCLUSIVE MODE');
    const rows: Array<{ workspace_id: string; wrapped_key: string }> = await tx.query('SELECT workspace_id, wrapped_key FROM workspace_data_keys ORDER BY workspace_id');
    const result: MasterKeyRotation = { rewrapped: 0, alreadyCurrent: 0, serviceKeysRewrapped: 0 };
    for (const row of rows) {
      let rewrapped: string | null;
      try {
        rewrapped = rewrapDataKey(oldKey, newKey, row.workspace_id, row.wrapped_key);
      } catch (error) {
        if (!(error instanceof DecryptionError)) throw error;
        throw new ConfigError(`the data key of workspace ${row.workspace_id} opens with neither the current nor the new master key; nothing was changed`);
      }
      if (rewrapped === null) {
        result.alreadyCurrent += 1;
        continue;
      }
      await tx.query('UPDATE workspace_data_keys SET wrapped_key = $2, rewrapped_at = now() WHERE workspace_id = $1', [row.workspace_id, rewrapped]);
      result.rewrapped += 1;
    }
    try {
      result.serviceKeysRewrapped = await rewrapServiceKeys(tx, oldKey, newKey);
    } catch (error) {
      if (!(error instanceof DecryptionError)) throw error;
      throw new ConfigError('a service key opens with neither the current nor the new master key; nothing was changed');
    }
    return result;
  });
}
