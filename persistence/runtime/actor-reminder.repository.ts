// Durable reminders: rows (shard, kind, actor id, name, due time). Written by
// actor turns (see ActorJournalRepository), read here by each shard owner.
import type { DataSource } from 'typeorm';

/** One due reminder. */
export interface DueReminder {
  kind: string;
  actorId: string;
  name: string;
  shard: number;
  dueAt: Date;
  payload: unknown;
}

/** Reads due reminders. */
export class ActorReminderRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Reminders of the given shards due now or earlier, earliest first. */
  async listDue(shards: number[], limit: number): Promise<DueReminder[]> {
    if (shards.length === 0) return [];
    const rows: Array<{ kind: string; actor_id: string; name: string; shard: number; due_at: Date; payload: unknown }> = await this.dataSource.query(
      'SELECT kind, actor_id, name, shard, due_at, payload FROM actor_reminders WHERE shard = ANY($1) AND due_at <= now() ORDER BY due_at LIMIT $2',
      [shards, limit],
    );
    return rows.map((row) => ({ kind: row.kind, actorId: row.actor_id, name: row.name, shard: row.shard, dueAt: row.due_at, payload: row.payload }));
  }
}
