// Service-wide keys over raw SQL: a random 256-bit key per purpose, created
// once (race-free, the first insert wins) and stored wrapped by the master key.
import type { DataSource, EntityManager } from 'typeorm';
import { newDataKey, rewrapDataKey, unwrapDataKey, wrapDataKey } from '../../src/crypto/envelope';

/** The label a service key is wrapped under (distinct from any workspace id). */
function wrapLabel(purpose: string): string {
  return `service:${purpose}`;
}

/**
 * The key for `purpose`, created on first use.
 * @throws DecryptionError when the stored key was wrapped by another master key
 */
export async function loadServiceKey(dataSource: DataSource, masterKey: Buffer, purpose: string): Promise<Buffer> {
  await dataSource.query('INSERT INTO service_keys (purpose, wrapped_key) VALUES ($1, $2) ON CONFLICT (purpose) DO NOTHING', [
    purpose,
    wrapDataKey(masterKey, wrapLabel(purpose), newDataKey()),
  ]);
  const rows: Array<{ wrapped_key: string }> = await dataSource.query('SELECT wrapped_key FROM service_keys WHERE purpose = $1', [purpose]);
  return unwrapDataKey(masterKey, wrapLabel(purpose), rows[0].wrapped_key);
}

/**
 * Rewraps every service key from `oldKey` to `newKey` inside the caller's
 * transaction (part of master-key rotation).
 * @returns how many keys were rewrapped
 * @throws DecryptionError when a key opens with neither master key
 */
export async function rewrapServiceKeys(tx: EntityManager, oldKey: Buffer, newKey: Buffer): Promise<number> {
  await tx.query('LOCK TABLE service_keys IN EXCLUSIVE MODE');
  const rows: Array<{ purpose: string; wrapped_key: string }> = await tx.query('SELECT purpose, wrapped_key FROM service_keys ORDER BY purpose');
  let rewrapped = 0;
  for (const row of rows) {
    const wrapped = rewrapDataKey(oldKey, newKey, wrapLabel(row.purpose), row.wrapped_key);
    if (wrapped === null) continue;
    await tx.query('UPDATE service_keys SET wrapped_key = $2, rewrapped_at = now() WHERE purpose = $1', [row.purpose, wrapped]);
    rewrapped += 1;
  }
  return rewrapped;
}
