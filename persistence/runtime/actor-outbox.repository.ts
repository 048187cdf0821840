// The outbox: events written with actor state, waiting for the relay to
// publish them. Rows are kept after publication (published_at set).
import type { DataSource } from 'typeorm';

/** One event waiting for publication. */
export interface OutboxEvent {
  id: string;
  shard: number;
  subject: string;
  payload: unknown;
  createdAt: Date;
}

/** Reads and marks outbox rows. */
export class ActorOutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Unpublished events of the given shards, oldest first (ids are ULIDs). */
  async listUnpublished(shards: number[], limit: number): Promise<OutboxEvent[]> {
    if (shards.length === 0) return [];
    const rows: Array<{ id: string; shard: number; subject: string; payload: unknown; created_at: Date }> = await this.dataSource.query(
      'SELECT id, shard, subject, payload, created_at FROM actor_outbox WHERE published_at IS NULL AND shard = ANY($1) ORDER BY id LIMIT $2',
      [shards, limit],
    );
    return rows.map((row) => ({ id: row.id, shard: row.shard, subject: row.subject, payload: row.payload, createdAt: row.created_at }));
  }

  /** Marks events published. */
  async markPublished(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query('UPDATE actor_outbox SET published_at = now() WHERE id = ANY($1)', [ids]);
  }

  /** Seconds since the oldest unpublished event of the given shards was written (0 when none). */
  async lagSeconds(shards: number[]): Promise<number> {
    if (shards.length === 0) return 0;
    const rows: Array<{ lag: number | null }> = await this.dataSource.query(
      'SELECT EXTRACT(EPOCH FROM now() - min(created_at))::double precision AS lag FROM actor_outbox WHERE published_at IS NULL AND shard = ANY($1)',
      [shards],
    );
    return rows[0].lag ?? 0;
  }
}
