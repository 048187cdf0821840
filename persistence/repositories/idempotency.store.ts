// Idempotency records over TypeORM. A claim is an INSERT ... ON CONFLICT DO
// NOTHING, so two concurrent requests with one key cannot both run; records
// older than 24 h are replaced.
import type { DataSource } from 'typeorm';
import type { IdempotencyRecord, IdempotencyStore } from '../../src/ports/idempotency-store';

const RETENTION = '24 hours';

interface Row {
  request_hash: string;
  status: number | null;
  body: unknown;
  created_at: Date;
}

export function createIdempotencyStore(dataSource: DataSource): IdempotencyStore {
  return {
    async claim(principalKey, key, requestHash): Promise<IdempotencyRecord | null> {
      await dataSource.query(`DELETE FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2 AND created_at < now() - interval '${RETENTION}'`, [principalKey, key]);
      const inserted: unknown[] = await dataSource.query(
        `INSERT INTO idempotency_records (principal_key, idempotency_key, request_hash) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING principal_key`,
        [principalKey, key, requestHash],
      );
      if (inserted.length) return null;
      const rows: Row[] = await dataSource.query(
        'SELECT request_hash, status, body, created_at FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2',
        [principalKey, key],
      );
      const row = rows[0];
      return row ? { requestHash: row.request_hash, status: row.status, body: row.body, createdAt: row.created_at } : null;
    },
    async complete(principalKey, key, status, body) {
      await dataSource.query('UPDATE idempotency_records SET status = $3, body = $4 WHERE principal_key = $1 AND idempotency_key = $2', [principalKey, key, status, JSON.stringify(body)]);
    },
    async release(principalKey, key) {
      await dataSource.query('DELETE FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2 AND status IS NULL', [principalKey, key]);
    },
  };
}
