// The index of actors with unfinished work, read by a node that has just
// acquired a shard: actors with effects in flight (actor_work, written in the
// fenced turn that starts the first or finishes the last effect), with
// durable commands not yet processed, and with reminders due.
import type { RuntimeDatabase } from './runtime-database';

/** Reads the work index. */
export class ActorWorkRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /** Actors of `shard` (of the given kinds) that must be activated now. */
  async listActorsWithWork(shard: number, kinds: string[]): Promise<Array<{ kind: string; actorId: string }>> {
    const rows = await this.database.query<{ kind: string; actor_id: string }>(
      `SELECT kind, actor_id FROM actor_work WHERE shard = $1 AND kind = ANY($2)
       UNION SELECT kind, actor_id FROM actor_commands WHERE shard = $1 AND kind = ANY($2) AND processed_at IS NULL
       UNION SELECT kind, actor_id FROM actor_reminders WHERE shard = $1 AND kind = ANY($2) AND next_attempt_at <= now()`,
      [shard, kinds],
    );
    return rows.map((row) => ({ kind: row.kind, actorId: row.actor_id }));
  }
}
