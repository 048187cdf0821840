// The outbox: events written with actor state, waiting for the relay to
// publish them. Rows are read in write order (position, a database sequence:
// per actor it is the order of its turns, whatever the clocks of the nodes
// that wrote them) and kept after publication (published_at set) until
// retention purges them.
import type { RuntimeDatabase } from './runtime-database';

/**
 * "Not published yet", written so that the planner cannot answer it from the
 * partial index of unpublished rows (ix_actor_outbox_unpublished): rows marked
 * by id are found by primary key. Through that index a mark read every entry
 * it holds, the published rows' dead entries among them until a vacuum (a
 * bitmap scan never marks them dead), so its cost grew with the rows
 * published since the last vacuum.
 */
export const STILL_UNPUBLISHED = '(published_at IS NULL) IS TRUE';

/** One event waiting for publication. */
export interface OutboxEvent {
  id: string;
  shard: number;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
  /** The actor's persistence key (null for rows written before stage 2). */
  actorKey: string | null;
  actorSeq: number | null;
  createdAt: Date;
}

/** Reads and marks outbox rows. */
export class ActorOutboxRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /** How many events of these actors (persistence keys) wait for publication: few rows, read through the index of unpublished ones. */
  async countUnpublishedOf(actorKeys: readonly string[]): Promise<number> {
    if (actorKeys.length === 0) return 0;
    const [row] = await this.database.query<{ count: string }>(
      'SELECT count(*) AS count FROM actor_outbox WHERE published_at IS NULL AND persistence_key = ANY($1::text[])',
      [actorKeys],
    );
    return Number(row?.count ?? 0);
  }

  /** Unpublished events of the given shards in write order, skipping the actors in `excludedKeys`. */
  async listUnpublished(shards: number[], limit: number, excludedKeys: string[] = []): Promise<OutboxEvent[]> {
    if (shards.length === 0) return [];
    const rows = await this.database.query<{
      id: string;
      shard: number;
      subject: string;
      payload: unknown;
      headers: Record<string, string> | null;
      persistence_key: string | null;
      actor_seq: string | null;
      created_at: Date;
    }>(
      `SELECT id, shard, subject, payload, headers, persistence_key, actor_seq, created_at FROM actor_outbox
       WHERE published_at IS NULL AND shard = ANY($1) AND (persistence_key IS NULL OR persistence_key <> ALL($3::text[]))
       ORDER BY position LIMIT $2`,
      [shards, limit, excludedKeys],
    );
    return rows.map((row) => ({
      id: row.id,
      shard: row.shard,
      subject: row.subject,
      payload: row.payload,
      headers: row.headers ?? {},
      actorKey: row.persistence_key,
      actorSeq: row.actor_seq === null ? null : Number(row.actor_seq),
      createdAt: row.created_at,
    }));
  }

  /** Marks events published. */
  async markPublished(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.database.query(`UPDATE actor_outbox SET published_at = now() WHERE id = ANY($1) AND ${STILL_UNPUBLISHED}`, [ids]);
  }

  /** Seconds since the oldest unpublished event of the given shards was written (0 when none). */
  async lagSeconds(shards: number[]): Promise<number> {
    if (shards.length === 0) return 0;
    const rows = await this.database.query<{ lag: number | null }>(
      'SELECT EXTRACT(EPOCH FROM now() - min(created_at))::double precision AS lag FROM actor_outbox WHERE published_at IS NULL AND shard = ANY($1)',
      [shards],
    );
    return rows[0].lag ?? 0;
  }
}
