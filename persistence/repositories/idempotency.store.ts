// Idempotency records over TypeORM. A claim is an INSERT ... ON CONFLICT DO
// NOTHING, so two concurrent requests with one key cannot both run; records
// older than 24 h are replaced, and so is a claim left in progress by a request
// that died: at once when the node that claimed it has lost its lease (no
// heartbeat in actor_nodes within the lease timeout), after a minute for a
// node without an actor runtime. Stored responses are sealed (AES-256-GCM under
// a key derived from the master key, bound to principal and key): some carry
// credentials, such as a new API key's token, which must not sit in the table.
import type { DataSource } from 'typeorm';
import { deriveKey } from '../../src/auth/tokens';
import { DecryptionError, open, seal, SEALED_VERSION } from '../../src/crypto/envelope';
import type { IdempotencyRecord, IdempotencyStore } from '../../src/ports/idempotency-store';

const RETENTION = '24 hours';
/**
 * A claim of a node without an actor runtime (no lease to watch) still in
 * progress after this long belongs to a request that died (its node was
 * killed, or the database went away before the claim could be released): a
 * retry takes it over instead of answering ABORTED for a day. Far above any
 * request's running time; the creates behind it check their own keys too (an
 * objective's start key).
 */
const IN_PROGRESS_LEASE_MS = 60_000;

/** The node whose requests claim keys, and the lease timeout after which a silent node is dead. */
export interface IdempotencyClaimant {
  nodeId: string;
  leaseTimeoutMs: number;
}
/** How often releases the database refused are made again. */
const STRANDED_RELEASE_RETRY_MS = 1000;
/** Every this many claims, a node also deletes a batch of expired records of anyone. */
const PURGE_EVERY_CLAIMS = 100;
const PURGE_BATCH = 1000;

/**
 * Deletes up to PURGE_BATCH expired records, so keys never reused do not
 * accumulate (a claim only replaces its own expired record).
 * @returns how many were deleted
 */
export async function purgeExpired(dataSource: DataSource): Promise<number> {
  const deleted: unknown[] = await dataSource.query(
    `DELETE FROM idempotency_records WHERE ctid IN (
       SELECT ctid FROM idempotency_records WHERE created_at < now() - interval '${RETENTION}' LIMIT ${PURGE_BATCH})
     RETURNING 1`,
  );
  return deleted.length;
}

function aad(principalKey: string, key: string): string {
  return `agentrt/${SEALED_VERSION}/idempotency/${principalKey}/${key}`;
}

interface Row {
  request_hash: string;
  status: number | null;
  body: unknown;
  created_at: Date;
}

/**
 * @param claimant this node, once its actor runtime runs (undefined: claims
 *   carry no node and are taken over after IN_PROGRESS_LEASE_MS)
 */
export function createIdempotencyStore(dataSource: DataSource, masterKey: Buffer, claimant: () => IdempotencyClaimant | undefined = () => undefined): IdempotencyStore {
  const sealKey = Buffer.from(deriveKey(masterKey, 'idempotency-records'));
  /** The stored response; undefined when it was sealed under another master key (rotated since). */
  const openBody = (principalKey: string, key: string, body: unknown): unknown => {
    if (typeof body !== 'string') return body; // null while in progress
    try {
      return JSON.parse(open(sealKey, body, aad(principalKey, key)).toString('utf8'));
    } catch (error) {
      if (error instanceof DecryptionError) return undefined;
      throw error;
    }
  };
  let claims = 0;
  /**
   * Drops, once before this process claims anything, the claims an earlier run
   * under the same node id left in progress (AGENTRT_NODE_ID is kept across
   * restarts): this run's heartbeat would otherwise keep them alive.
   */
  let earlierRunForgotten: Promise<void> | undefined;
  const forgetEarlierRun = (nodeId: string): Promise<void> =>
    (earlierRunForgotten ??= dataSource.query('DELETE FROM idempotency_records WHERE claimed_by = $1 AND status IS NULL', [nodeId]).then(() => undefined));
  // This node's claim only: a claim it failed to release may have been taken over since by another node's retry.
  const deleteClaim = (principalKey: string, key: string, owner: string | null) =>
    dataSource.query(
      'DELETE FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2 AND status IS NULL AND claimed_by IS NOT DISTINCT FROM $3',
      [principalKey, key, owner],
    ).then(() => undefined);
  /**
   * Claims whose release the database refused (it went away mid-request), by
   * principal and key, with the node that made them: made again every
   * STRANDED_RELEASE_RETRY_MS and before each claim, until the database takes them.
   */
  const stranded = new Map<string, { principalKey: string; key: string; owner: string | null }>();
  let retryTimer: NodeJS.Timeout | undefined;
  /** One pass at a time: a pass overlapping a claim's would delete the fresh claim that claim made of a key it had just released. */
  let releasing: Promise<void> | undefined;
  const releaseStranded = (): Promise<void> =>
    (releasing ??= (async () => {
      for (const [id, claim] of [...stranded]) {
        await deleteClaim(claim.principalKey, claim.key, claim.owner);
        stranded.delete(id);
      }
    })().finally(() => {
      releasing = undefined;
    }));
  const retryStrandedLater = () => {
    retryTimer ??= setTimeout(() => {
      retryTimer = undefined;
      releaseStranded().catch(() => undefined).finally(() => {
        if (stranded.size) retryStrandedLater();
      });
    }, STRANDED_RELEASE_RETRY_MS);
    retryTimer.unref();
  };
  const store: IdempotencyStore = {
    async claim(principalKey, key, requestHash): Promise<IdempotencyRecord | null> {
      if (stranded.size) await releaseStranded();
      const node = claimant();
      if (node) await forgetEarlierRun(node.nodeId);
      if (++claims % PURGE_EVERY_CLAIMS === 0) await purgeExpired(dataSource);
      await dataSource.query(
        `DELETE FROM idempotency_records r WHERE principal_key = $1 AND idempotency_key = $2
           AND (created_at < now() - interval '${RETENTION}'
             OR (status IS NULL AND claimed_by IS NULL AND created_at < now() - make_interval(secs => ${IN_PROGRESS_LEASE_MS / 1000}))
             OR (status IS NULL AND claimed_by IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM actor_nodes n
               WHERE n.node_id = r.claimed_by AND n.last_heartbeat_at > now() - make_interval(secs => $3::double precision / 1000))))`,
        // A node without a runtime does not know the lease timeout: it waits out IN_PROGRESS_LEASE_MS of silence.
        [principalKey, key, node?.leaseTimeoutMs ?? IN_PROGRESS_LEASE_MS],
      );
      const inserted: unknown[] = await dataSource.query(
        `INSERT INTO idempotency_records (principal_key, idempotency_key, request_hash, claimed_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING principal_key`,
        [principalKey, key, requestHash, node?.nodeId ?? null],
      );
      if (inserted.length) return null;
      const rows: Row[] = await dataSource.query(
        'SELECT request_hash, status, body, created_at FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2',
        [principalKey, key],
      );
      const row = rows[0];
      if (!row) return null;
      const body = openBody(principalKey, key, row.body);
      if (row.status !== null && body === undefined) {
        // Unreadable after a master-key rotation: forget it, as if it had expired.
        await dataSource.query('DELETE FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2', [principalKey, key]);
        return store.claim(principalKey, key, requestHash);
      }
      return { requestHash: row.request_hash, status: row.status, body, createdAt: row.created_at };
    },
    async complete(principalKey, key, status, body) {
      const sealed = seal(sealKey, Buffer.from(JSON.stringify(body ?? null), 'utf8'), aad(principalKey, key));
      await dataSource.query('UPDATE idempotency_records SET status = $3, body = $4 WHERE principal_key = $1 AND idempotency_key = $2', [principalKey, key, status, JSON.stringify(sealed)]);
    },
    async release(principalKey, key) {
      const owner = claimant()?.nodeId ?? null;
      try {
        await deleteClaim(principalKey, key, owner);
      } catch {
        stranded.set(`${principalKey}\u0000${key}`, { principalKey, key, owner });
        retryStrandedLater();
      }
    },
  };
  return store;
}
