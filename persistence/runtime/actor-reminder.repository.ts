// Durable reminders: rows (shard, kind, actor id, name, due time) written by
// actor turns (turn-writer.ts). A reminder whose handler failed waits until
// its next attempt time, kept here (not in a node's memory), so it neither
// fires at every poll nor fills the poll's batch ahead of reminders now due.
import type { RuntimeDatabase } from './runtime-database';

/** One due reminder. */
export interface DueReminder {
  kind: string;
  actorId: string;
  name: string;
  shard: number;
  dueAt: Date;
  payload: unknown;
  attempts: number;
  /** Milliseconds until the next attempt may be made, by the database's clock (0: now). */
  waitMs: number;
}

/** Reads due reminders and records failed attempts. */
export class ActorReminderRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /** Reminders of the given shards and kinds whose next attempt is due, earliest first. */
  /**
   * Reminders whose next attempt is due now or within `lookaheadMs` (the poller
   * times those itself, so they fire on time rather than at the next poll).
   */
  async listDue(shards: number[], kinds: string[], limit: number, lookaheadMs = 0): Promise<DueReminder[]> {
    if (shards.length === 0) return [];
    // The wait is measured on the database's clock: a node whose clock is off must not hold a due reminder back.
    const rows = await this.database.query<{ kind: string; actor_id: string; name: string; shard: number; due_at: Date; payload: unknown; attempts: number; wait_ms: number }>(
      `SELECT kind, actor_id, name, shard, due_at, payload, attempts,
         greatest(0, extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS wait_ms
       FROM actor_reminders
       WHERE shard = ANY($1) AND kind = ANY($2) AND next_attempt_at <= now() + make_interval(secs => $4::double precision / 1000)
       ORDER BY next_attempt_at LIMIT $3`,
      [shards, kinds, limit, lookaheadMs],
    );
    return rows.map((row) => ({
      kind: row.kind, actorId: row.actor_id, name: row.name, shard: row.shard, dueAt: row.due_at, payload: row.payload, attempts: row.attempts, waitMs: Number(row.wait_ms),
    }));
  }

  /** Postpones the next attempt of a reminder whose handler failed (unless it was moved meanwhile). */
  async recordFailure(reminder: { kind: string; actorId: string; name: string; dueAt: Date }, retryAfterMs: number): Promise<void> {
    await this.database.query(
      `UPDATE actor_reminders SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $5::double precision / 1000)
       WHERE kind = $1 AND actor_id = $2 AND name = $3 AND due_at = $4`,
      [reminder.kind, reminder.actorId, reminder.name, reminder.dueAt, retryAfterMs],
    );
  }

}
