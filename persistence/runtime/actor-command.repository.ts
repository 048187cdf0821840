// Durable commands: written before they are delivered (by `send`, or by the
// sender's turn), applied in position order (write order) and marked
// processed in the same transaction as the turn that applied them.
import { ShardFencedError } from '../../src/sharding/sharding.errors';
import type { RuntimeDatabase } from './runtime-database';
import type { Fence } from './turn-writer';

/** One command not yet processed. */
export interface PendingCommand {
  id: string;
  kind: string;
  actorId: string;
  payload: unknown;
  /** Handed over in memory, never stored (an effect outcome with durableResult false): nothing to mark processed. */
  unstored?: true;
}

/**
 * "Not processed yet", for marking commands by id, written so that the
 * planner cannot answer it from the partial index of pending commands
 * (ix_actor_commands_pending): that index keeps the entries of processed
 * commands until a vacuum, and a mark that walked it read them all (the
 * same trap as the outbox's STILL_UNPUBLISHED). Marked by id, the rows are
 * found by primary key.
 */
export const STILL_UNPROCESSED = '(processed_at IS NULL) IS TRUE';

/** Marks commands processed by id (in a turn's statement, or alone). */
export const markProcessedStatement = (idsParameter: string) => `UPDATE actor_commands SET processed_at = now() WHERE id = ANY(${idsParameter}::text[]) AND ${STILL_UNPROCESSED}`;

/** Writes and reads actor_commands. */
export class ActorCommandRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /** Stores a command before it is sent. */
  async insert(command: PendingCommand & { shard: number }): Promise<void> {
    await this.database.query('INSERT INTO actor_commands (id, shard, kind, actor_id, payload) VALUES ($1, $2, $3, $4, $5)', [
      command.id,
      command.shard,
      command.kind,
      command.actorId,
      JSON.stringify(command.payload),
    ]);
  }

  /**
   * Stores a command for an actor of a shard this node owns under `fence` (an
   * effect's result); a second insert of the same id is a no-op.
   * @throws ShardFencedError when the shard moved on: the result comes from a stale owner.
   */
  async insertFenced(command: PendingCommand & { shard: number }, fence: Fence): Promise<void> {
    // One autocommit statement, not a transaction of four: an objective records
    // an effect result per model and tool call, and each round trip counts.
    // FOR SHARE makes a takeover's epoch bump wait for this statement, as in the turn writer.
    const [row] = await this.database.query<{ epoch: string; inserted: boolean }>(
      `WITH fence AS (
         SELECT epoch FROM actor_shards WHERE shard = $2 FOR SHARE
       ), written AS (
         INSERT INTO actor_commands (id, shard, kind, actor_id, payload)
         SELECT $1, $2, $3, $4, $5 FROM fence WHERE fence.epoch = $6
         ON CONFLICT (id) DO NOTHING
         RETURNING id
       )
       SELECT epoch, EXISTS (SELECT 1 FROM written) AS inserted FROM fence`,
      [command.id, command.shard, command.kind, command.actorId, JSON.stringify(command.payload), fence.epoch],
    );
    if (!row || Number(row.epoch) !== fence.epoch) throw new ShardFencedError(fence.shard, fence.epoch);
  }

  /** Unprocessed commands of one actor, in the order they were written. */
  async listPending(kind: string, actorId: string, shard: number): Promise<PendingCommand[]> {
    const rows = await this.database.query<{ id: string; payload: unknown }>(
      'SELECT id, payload FROM actor_commands WHERE shard = $1 AND kind = $2 AND actor_id = $3 AND processed_at IS NULL ORDER BY position',
      [shard, kind, actorId],
    );
    return rows.map((row) => ({ id: row.id, kind, actorId, payload: row.payload }));
  }

  /** Marks commands processed outside a turn (a duplicate delivery of a command already applied). */
  async markProcessed(ids: string[]): Promise<void> {
    if (ids.length) await this.database.query(markProcessedStatement('$1'), [ids]);
  }

  /** Actors of the given shards and kinds with commands unprocessed for longer than `olderThanMs`. */
  async listActorsWithPending(shards: number[], kinds: string[], olderThanMs: number, limit: number): Promise<Array<{ kind: string; actorId: string; shard: number }>> {
    if (shards.length === 0) return [];
    const rows = await this.database.query<{ kind: string; actor_id: string; shard: number }>(
      `SELECT DISTINCT kind, actor_id, shard FROM actor_commands
       WHERE processed_at IS NULL AND shard = ANY($1) AND kind = ANY($2) AND created_at <= now() - make_interval(secs => $3::double precision / 1000)
       LIMIT $4`,
      [shards, kinds, olderThanMs, limit],
    );
    return rows.map((row) => ({ kind: row.kind, actorId: row.actor_id, shard: row.shard }));
  }
}
