// Durable commands: written before they are sent, marked processed in the same
// transaction as the actor turn that handled them.
import type { DataSource } from 'typeorm';

/** One command not yet processed. */
export interface PendingCommand {
  id: string;
  kind: string;
  actorId: string;
  payload: unknown;
}

/** Writes and reads actor_commands. */
export class ActorCommandRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores a command before it is sent. */
  async insert(command: PendingCommand & { shard: number }): Promise<void> {
    await this.dataSource.query('INSERT INTO actor_commands (id, shard, kind, actor_id, payload) VALUES ($1, $2, $3, $4, $5)', [
      command.id,
      command.shard,
      command.kind,
      command.actorId,
      JSON.stringify(command.payload),
    ]);
  }

  /** Unprocessed commands of one actor, in the order they were written. */
  async listPending(kind: string, actorId: string, shard: number): Promise<PendingCommand[]> {
    const rows: Array<{ id: string; payload: unknown }> = await this.dataSource.query(
      'SELECT id, payload FROM actor_commands WHERE shard = $1 AND kind = $2 AND actor_id = $3 AND processed_at IS NULL ORDER BY id',
      [shard, kind, actorId],
    );
    return rows.map((row) => ({ id: row.id, kind, actorId, payload: row.payload }));
  }

  /** Actors of the given shards with commands unprocessed for longer than `olderThanMs`. */
  async listActorsWithPending(shards: number[], olderThanMs: number, limit: number): Promise<Array<{ kind: string; actorId: string; shard: number }>> {
    if (shards.length === 0) return [];
    const rows: Array<{ kind: string; actor_id: string; shard: number }> = await this.dataSource.query(
      `SELECT DISTINCT kind, actor_id, shard FROM actor_commands
       WHERE processed_at IS NULL AND shard = ANY($1) AND created_at <= now() - make_interval(secs => $2::double precision / 1000)
       LIMIT $3`,
      [shards, olderThanMs, limit],
    );
    return rows.map((row) => ({ kind: row.kind, actorId: row.actor_id, shard: row.shard }));
  }
}
