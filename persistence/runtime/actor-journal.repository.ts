// Reads of the actor journal, and the snapshots. Journal entries are written
// by TurnWriter (turn-writer.ts) inside the fenced transaction of a turn;
// snapshots are written here under the same fence check.
import { ShardFencedError } from '../../src/sharding/sharding.errors';
import type { RuntimeDatabase, SqlQueryable } from './runtime-database';
import type { Fence } from './turn-writer';
import type { PendingCommand } from './actor-command.repository';

/** One journal entry as the runtime reads it. */
export interface JournalEntry {
  key: string;
  sequenceNr: number;
  payload: unknown;
  createdAt: Date;
}

/** One snapshot (only the latest per key is kept). */
export interface SnapshotEntry {
  key: string;
  sequenceNr: number;
  payload: unknown;
  createdAt: Date;
}

/**
 * Checks the fencing epoch inside a transaction (FOR SHARE: a takeover's epoch
 * bump waits for this transaction), and bounds how long it may sit idle.
 * @throws ShardFencedError when the shard's epoch moved on.
 */
export async function checkFence(sql: SqlQueryable, fence: Fence, idleTimeoutMs: number): Promise<void> {
  const rows = await sql.query<{ epoch: string }>(
    idleTimeoutMs > 0
      ? `SELECT set_config('idle_in_transaction_session_timeout', $2, true), epoch FROM actor_shards WHERE shard = $1 FOR SHARE`
      : 'SELECT epoch FROM actor_shards WHERE shard = $1 FOR SHARE',
    idleTimeoutMs > 0 ? [fence.shard, String(idleTimeoutMs)] : [fence.shard],
  );
  if (rows.length === 0 || Number(rows[0].epoch) !== fence.epoch) throw new ShardFencedError(fence.shard, fence.epoch);
}

/** Reads journals; reads and writes snapshots. */
export class ActorJournalRepository {
  /** @param idleTimeoutMs bound on a write transaction's idle time, normally the lease timeout (0: none). */
  constructor(
    private readonly database: RuntimeDatabase,
    private readonly idleTimeoutMs = 15_000,
  ) {}

  /** Entries of `key` with sequence_nr > `after`, ascending. */
  async listAfter(key: string, after: number): Promise<JournalEntry[]> {
    const rows = await this.database.query<{ sequence_nr: string; payload: unknown; created_at: Date }>(
      'SELECT sequence_nr, payload, created_at FROM actor_journal WHERE persistence_key = $1 AND sequence_nr > $2 ORDER BY sequence_nr',
      [key, after],
    );
    return rows.map((row) => ({ key, sequenceNr: Number(row.sequence_nr), payload: row.payload, createdAt: row.created_at }));
  }

  /**
   * What an activation reads, in one round trip: the snapshot, the journal
   * entries after it, and the actor's unprocessed durable commands in
   * position order (three statements before; an actor activated by its first
   * command, a new objective say, read three empty answers in a row).
   */
  async readActivation(key: string, kind: string, actorId: string, shard: number): Promise<{ snapshot: SnapshotEntry | null; entries: JournalEntry[]; pending: PendingCommand[] }> {
    const rows = await this.database.query<{ part: number; sequence_nr: string | null; payload: unknown; created_at: Date | null; id: string | null }>(
      `WITH snap AS (SELECT sequence_nr, payload, created_at FROM actor_snapshots WHERE persistence_key = $1)
       SELECT 0 AS part, sequence_nr, payload, created_at, NULL::text AS id, 0::bigint AS position FROM snap
       UNION ALL
       SELECT 1, j.sequence_nr, j.payload, j.created_at, NULL, 0 FROM actor_journal j
        WHERE j.persistence_key = $1 AND j.sequence_nr > coalesce((SELECT sequence_nr FROM snap), 0)
       UNION ALL
       SELECT 2, NULL, c.payload, NULL, c.id, c.position FROM actor_commands c
        WHERE c.shard = $4 AND c.kind = $2 AND c.actor_id = $3 AND c.processed_at IS NULL
       ORDER BY part, sequence_nr, position`,
      [key, kind, actorId, shard],
      { preparedAs: 'agentrt_read_activation' },
    );
    let snapshot: SnapshotEntry | null = null;
    const entries: JournalEntry[] = [];
    const pending: PendingCommand[] = [];
    for (const row of rows) {
      if (row.part === 0) snapshot = { key, sequenceNr: Number(row.sequence_nr), payload: row.payload, createdAt: row.created_at! };
      else if (row.part === 1) entries.push({ key, sequenceNr: Number(row.sequence_nr), payload: row.payload, createdAt: row.created_at! });
      else pending.push({ id: row.id!, kind, actorId, payload: row.payload });
    }
    return { snapshot, entries, pending };
  }

  /** The latest snapshot of `key`, or null. */
  async findSnapshot(key: string): Promise<SnapshotEntry | null> {
    const rows = await this.database.query<{ sequence_nr: string; payload: unknown; created_at: Date }>(
      'SELECT sequence_nr, payload, created_at FROM actor_snapshots WHERE persistence_key = $1',
      [key],
    );
    return rows.length ? { key, sequenceNr: Number(rows[0].sequence_nr), payload: rows[0].payload, createdAt: rows[0].created_at } : null;
  }

  /**
   * Stores a snapshot unless a newer one exists.
   * @returns the size of its JSON
   * @throws ShardFencedError when `fence` is stale.
   */
  async saveSnapshotFenced(snapshot: Omit<SnapshotEntry, 'createdAt'>, fence: Fence): Promise<number> {
    const payload = JSON.stringify(snapshot.payload);
    await this.database.transaction(async (sql) => {
      await checkFence(sql, fence, this.idleTimeoutMs);
      await sql.query(
        `INSERT INTO actor_snapshots (persistence_key, sequence_nr, payload) VALUES ($1, $2, $3)
         ON CONFLICT (persistence_key) DO UPDATE SET sequence_nr = excluded.sequence_nr, payload = excluded.payload, created_at = now()
         WHERE actor_snapshots.sequence_nr < excluded.sequence_nr`,
        [snapshot.key, snapshot.sequenceNr, payload],
      );
    });
    return payload.length;
  }
}
