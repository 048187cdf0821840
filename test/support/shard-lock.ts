// Holding a shard's row locked from outside the runtime, as a slow or stuck
// database would: every fenced write of the shard waits on its fence read
// until the hold is released. Shared by the runtime suites that need a turn
// to wait (turns queued behind a commit, a write that fails later).
import pg from 'pg';
import { shardOf } from '../../src/sharding/fnv1a32';

export interface ShardHold {
  release(): Promise<void>;
}

/** Locks the `actor_shards` row of the shard `actorId` falls in (out of `shardCount`) until `release`. */
export async function holdShardOf(databaseUrl: string, actorId: string, shardCount: number): Promise<ShardHold> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT 1 FROM actor_shards WHERE shard = $1 FOR UPDATE', [shardOf(actorId, shardCount)]);
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}
