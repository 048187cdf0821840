// The actor journal and snapshots. Every write runs in one transaction that
// first checks the shard's fencing epoch (FOR SHARE, so a takeover's epoch bump
// waits for it), then writes the journal entry, outbox rows, reminders and
// processed commands together. The journal's unique key is the last fence.
import type { DataSource, EntityManager } from 'typeorm';
import { JournalConflictError, ShardFencedError, WriteInterruptedError } from '../../src/sharding/sharding.errors';
import { isConnectionFailure, isUniqueViolation } from './pg-results';

/** One journal entry as the runtime reads it. */
export interface JournalEntry {
  key: string;
  sequenceNr: number;
  payload: unknown;
  tags: string[];
  createdAt: Date;
}

/** One snapshot (only the latest per key is kept). */
export interface SnapshotEntry {
  key: string;
  sequenceNr: number;
  payload: unknown;
  createdAt: Date;
}

/** The shard and epoch under which a write is made. */
export interface Fence {
  shard: number;
  epoch: number;
}

/** An outbox row written with a journal entry. */
export interface OutboxInsert {
  id: string;
  subject: string;
  payload: unknown;
}

/** A reminder set with a journal entry. */
export interface ReminderUpsert {
  name: string;
  dueAt: Date;
  payload: unknown;
}

/** Everything one actor turn writes. */
export interface JournalAppend {
  key: string;
  sequenceNr: number;
  payload: unknown;
  tags: string[];
  kind: string;
  actorId: string;
  outbox: OutboxInsert[];
  remindersSet: ReminderUpsert[];
  remindersCancelled: string[];
  /** A fired reminder consumed by this turn: deleted unless it was moved meanwhile. */
  reminderFired?: { name: string; dueAt: Date };
  processedCommandIds: string[];
}

const JOURNAL_UNIQUE = 'uq_actor_journal_key_sequence';

/**
 * Checks the fencing epoch inside `tx`, and bounds how long this transaction may
 * sit idle (a paused node must not hold the shard row, and so block a takeover,
 * for longer than the lease timeout).
 * @throws ShardFencedError when the shard's epoch moved on.
 */
export async function checkFence(tx: EntityManager, fence: Fence, idleTimeoutMs: number): Promise<void> {
  const rows: Array<{ epoch: string }> = await tx.query(
    `SELECT set_config('idle_in_transaction_session_timeout', $2, true), epoch FROM actor_shards WHERE shard = $1 FOR SHARE`,
    [fence.shard, String(idleTimeoutMs)],
  );
  if (rows.length === 0 || Number(rows[0].epoch) !== fence.epoch) throw new ShardFencedError(fence.shard, fence.epoch);
}

/** Reads and writes journals and snapshots. */
export class ActorJournalRepository {
  /** @param idleTimeoutMs bound on a write transaction's idle time, normally the lease timeout. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly idleTimeoutMs = 15_000,
  ) {}

  /** Entries of `key` with sequence_nr > `after`, ascending. */
  async listAfter(key: string, after: number): Promise<JournalEntry[]> {
    const rows: Array<{ sequence_nr: string; payload: unknown; tags: string[]; created_at: Date }> = await this.dataSource.query(
      'SELECT sequence_nr, payload, tags, created_at FROM actor_journal WHERE persistence_key = $1 AND sequence_nr > $2 ORDER BY sequence_nr',
      [key, after],
    );
    return rows.map((row) => ({ key, sequenceNr: Number(row.sequence_nr), payload: row.payload, tags: row.tags, createdAt: row.created_at }));
  }

  /** The latest snapshot of `key`, or null. */
  async findSnapshot(key: string): Promise<SnapshotEntry | null> {
    const rows: Array<{ sequence_nr: string; payload: unknown; created_at: Date }> = await this.dataSource.query(
      'SELECT sequence_nr, payload, created_at FROM actor_snapshots WHERE persistence_key = $1',
      [key],
    );
    return rows.length ? { key, sequenceNr: Number(rows[0].sequence_nr), payload: rows[0].payload, createdAt: rows[0].created_at } : null;
  }

  /**
   * Appends one entry with its outbox rows, reminders and processed commands, atomically.
   * @throws ShardFencedError when `fence` is stale.
   * @throws JournalConflictError when the sequence number already exists (a duplicate activation wrote it).
   * @throws WriteInterruptedError when the connection broke (the entry may or may not be written).
   */
  async appendFenced(entry: JournalAppend, fence: Fence): Promise<void> {
    try {
      await this.dataSource.transaction(async (tx) => {
        await checkFence(tx, fence, this.idleTimeoutMs);
        await insertJournal(tx, entry);
        await insertOutbox(tx, fence.shard, entry.outbox);
        await writeReminders(tx, fence.shard, entry);
        await markCommandsProcessed(tx, entry.processedCommandIds);
      });
    } catch (error) {
      if (isConnectionFailure(error)) throw new WriteInterruptedError(entry.key, { cause: error });
      if (!isUniqueViolation(error, JOURNAL_UNIQUE)) throw error;
      throw new JournalConflictError(entry.key, entry.sequenceNr, { cause: error });
    }
  }

  /**
   * Stores a snapshot unless a newer one exists.
   * @throws ShardFencedError when `fence` is stale.
   */
  async saveSnapshotFenced(snapshot: Omit<SnapshotEntry, 'createdAt'>, fence: Fence): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      await checkFence(tx, fence, this.idleTimeoutMs);
      await tx.query(
        `INSERT INTO actor_snapshots (persistence_key, sequence_nr, payload) VALUES ($1, $2, $3)
         ON CONFLICT (persistence_key) DO UPDATE SET sequence_nr = excluded.sequence_nr, payload = excluded.payload, created_at = now()
         WHERE actor_snapshots.sequence_nr < excluded.sequence_nr`,
        [snapshot.key, snapshot.sequenceNr, JSON.stringify(snapshot.payload)],
      );
    });
  }
}

async function insertJournal(tx: EntityManager, entry: JournalAppend): Promise<void> {
  await tx.query('INSERT INTO actor_journal (persistence_key, sequence_nr, payload, tags) VALUES ($1, $2, $3, $4)', [
    entry.key,
    entry.sequenceNr,
    JSON.stringify(entry.payload),
    entry.tags,
  ]);
}

async function insertOutbox(tx: EntityManager, shard: number, rows: OutboxInsert[]): Promise<void> {
  for (const row of rows) {
    await tx.query('INSERT INTO actor_outbox (id, shard, subject, payload) VALUES ($1, $2, $3, $4)', [row.id, shard, row.subject, JSON.stringify(row.payload)]);
  }
}

async function writeReminders(tx: EntityManager, shard: number, entry: JournalAppend): Promise<void> {
  if (entry.reminderFired) {
    await tx.query('DELETE FROM actor_reminders WHERE kind = $1 AND actor_id = $2 AND name = $3 AND due_at = $4', [
      entry.kind,
      entry.actorId,
      entry.reminderFired.name,
      entry.reminderFired.dueAt,
    ]);
  }
  for (const name of entry.remindersCancelled) {
    await tx.query('DELETE FROM actor_reminders WHERE kind = $1 AND actor_id = $2 AND name = $3', [entry.kind, entry.actorId, name]);
  }
  for (const reminder of entry.remindersSet) {
    await tx.query(
      `INSERT INTO actor_reminders (kind, actor_id, name, shard, due_at, payload) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (kind, actor_id, name) DO UPDATE SET due_at = excluded.due_at, payload = excluded.payload`,
      [entry.kind, entry.actorId, reminder.name, shard, reminder.dueAt, JSON.stringify(reminder.payload ?? null)],
    );
  }
}

async function markCommandsProcessed(tx: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query('UPDATE actor_commands SET processed_at = now() WHERE id = ANY($1) AND processed_at IS NULL', [ids]);
}
