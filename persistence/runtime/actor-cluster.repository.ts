// Cluster bookkeeping: the fixed shard count, the cluster id, the membership table and each
// shard's owner and fencing epoch. Liveness uses the database clock only.
import { FailedPreconditionError } from '../../src/errors';
import type { LeaseHolder } from '../../src/ports/leases';
import { returnedRows } from './pg-results';
import type { SqlQueryable } from './runtime-database';

/** One member as the operator view shows it. */
export interface ClusterNode {
  nodeId: string;
  startedAt: Date;
  lastHeartbeatAt: Date;
  shards: number[];
  activeActors: number;
}

/** Who the cluster is: its id and when its first node started. */
export interface ClusterIdentity {
  id: string;
  createdAt: Date;
}

/** One shard's recorded owner. */
export interface ShardOwner {
  shard: number;
  epoch: number;
  ownerNodeId: string | null;
}

/** A shard claimed: its new fencing epoch and the owner recorded until the claim. */
export interface ShardClaim {
  epoch: number;
  /**
   * Read in the claim's own statement, under its row lock: a snapshot taken
   * earlier in the round may still name an owner that has since handed the
   * shard off (and is alive).
   */
  previousOwnerNodeId: string | null;
}

interface NodeRow {
  node_id: string;
  started_at: Date;
  last_heartbeat_at: Date;
  shards: number[];
  active_actors: number;
}

/** Reads and writes actor_cluster, actor_nodes and actor_shards. */
export class ActorClusterRepository {
  constructor(private readonly dataSource: SqlQueryable) {}

  /**
   * Records the shard count on first start and creates the shard rows.
   * @throws FailedPreconditionError when the cluster was created with another count.
   */
  async ensureShardCount(shardCount: number): Promise<void> {
    await this.dataSource.query('INSERT INTO actor_cluster (id, shard_count) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [shardCount]);
    const stored = await this.findShardCount();
    if (stored !== shardCount) {
      throw new FailedPreconditionError(`shard count ${shardCount} differs from the cluster's ${stored}; changing it needs a full stop and a migration`);
    }
    await this.dataSource.query('INSERT INTO actor_shards (shard) SELECT generate_series(0, $1 - 1) ON CONFLICT (shard) DO NOTHING', [shardCount]);
  }

  /**
   * The cluster's id (`candidate` when this node is the first to ask: the
   * first start, or the first after the upgrade that added it; else the
   * stored one) and the time of its first start. Call after ensureShardCount
   * (it creates the row).
   */
  async ensureClusterId(candidate: string): Promise<ClusterIdentity> {
    const rows = returnedRows<{ cluster_id: string; created_at: Date }>(
      await this.dataSource.query('UPDATE actor_cluster SET cluster_id = COALESCE(cluster_id, $1) WHERE id = 1 RETURNING cluster_id, created_at', [candidate]),
    );
    if (!rows.length) throw new FailedPreconditionError('the cluster row is missing: record the shard count first');
    return { id: rows[0].cluster_id, createdAt: new Date(rows[0].created_at) };
  }

  /** The shard count the cluster was created with, or null before any node started. */
  async findShardCount(): Promise<number | null> {
    const rows: Array<{ shard_count: number }> = await this.dataSource.query('SELECT shard_count FROM actor_cluster WHERE id = 1');
    return rows.length ? rows[0].shard_count : null;
  }

  /** Registers or refreshes a member: its heartbeat, shards and active actor count. */
  async heartbeat(nodeId: string, shards: number[], activeActors: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO actor_nodes (node_id, shards, active_actors) VALUES ($1, $2, $3)
       ON CONFLICT (node_id) DO UPDATE SET last_heartbeat_at = now(), shards = excluded.shards, active_actors = excluded.active_actors`,
      [nodeId, shards, activeActors],
    );
  }

  /** Ids of members whose heartbeat is younger than `leaseTimeoutMs`. */
  async listLiveNodeIds(leaseTimeoutMs: number): Promise<string[]> {
    const rows: Array<{ node_id: string }> = await this.dataSource.query(
      `SELECT node_id FROM actor_nodes WHERE last_heartbeat_at > now() - make_interval(secs => $1::double precision / 1000) ORDER BY node_id`,
      [leaseTimeoutMs],
    );
    return rows.map((row) => row.node_id);
  }

  /**
   * Members whose heartbeat is younger than `liveWithinMs`, oldest first, each
   * with the shards recorded as its own in actor_shards (not the list it last
   * reported: a survivor's takeover shows at once, a dead node's stale claim
   * never).
   */
  async listLiveNodes(liveWithinMs: number): Promise<ClusterNode[]> {
    const rows: NodeRow[] = await this.dataSource.query(
      `SELECT n.node_id, n.started_at, n.last_heartbeat_at, n.active_actors,
              COALESCE((SELECT array_agg(s.shard ORDER BY s.shard) FROM actor_shards s WHERE s.owner_node_id = n.node_id), '{}') AS shards
       FROM actor_nodes n
       WHERE n.last_heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY n.started_at, n.node_id`,
      [liveWithinMs],
    );
    return rows.map((row) => ({
      nodeId: row.node_id,
      startedAt: row.started_at,
      lastHeartbeatAt: row.last_heartbeat_at,
      shards: row.shards.map(Number),
      activeActors: row.active_actors,
    }));
  }

  /** Removes a member that left gracefully, and members silent for longer than `staleAfterMs`. */
  async removeNode(nodeId: string): Promise<void> {
    await this.dataSource.query('DELETE FROM actor_nodes WHERE node_id = $1', [nodeId]);
  }

  /** Removes members found dead (their shard locks were free). */
  async removeNodes(nodeIds: string[]): Promise<void> {
    if (nodeIds.length) await this.dataSource.query('DELETE FROM actor_nodes WHERE node_id = ANY($1)', [nodeIds]);
  }

  /** Forgets members silent for longer than `staleAfterMs` (they hold no lease any more). */
  async removeStaleNodes(staleAfterMs: number): Promise<void> {
    await this.dataSource.query(
      'DELETE FROM actor_nodes WHERE last_heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)',
      [staleAfterMs],
    );
  }

  /** The recorded owner and epoch of every shard. */
  async listShardOwners(): Promise<ShardOwner[]> {
    const rows: Array<{ shard: number; epoch: string; owner_node_id: string | null }> = await this.dataSource.query(
      'SELECT shard, epoch, owner_node_id FROM actor_shards ORDER BY shard',
    );
    return rows.map((row) => ({ shard: row.shard, epoch: Number(row.epoch), ownerNodeId: row.owner_node_id }));
  }

  /**
   * Records `nodeId` as the owner and bumps the fencing epoch. Call only while
   * holding the shard's lease; it waits for in-flight fenced writes of the
   * previous owner to finish. With a `holder`, the same statement checks that
   * the holder's session still has the shard's lock: a session that lost its
   * lease (and whose shard another node may have claimed since) gets no epoch.
   * @returns the new epoch and the owner it replaced, or null when `holder` no longer holds the lease.
   */
  async claimShard(shard: number, nodeId: string, holder?: LeaseHolder): Promise<ShardClaim | null> {
    const rows = returnedRows<{ epoch: string; previous_owner_node_id: string | null }>(
      await this.dataSource.query(
        `WITH previous AS (SELECT shard, owner_node_id FROM actor_shards WHERE shard = $1 FOR UPDATE)
         UPDATE actor_shards s SET epoch = s.epoch + 1, owner_node_id = $2, acquired_at = now()
         FROM previous
         WHERE s.shard = previous.shard AND ($3::int IS NULL OR EXISTS (
           SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $3 AND classid = $4::bigint::oid AND objid = $1::bigint::oid AND objsubid = 2))
         RETURNING s.epoch, previous.owner_node_id AS previous_owner_node_id`,
        [shard, nodeId, holder?.sessionPid ?? null, holder?.namespace ?? null],
      ),
    );
    return rows.length ? { epoch: Number(rows[0].epoch), previousOwnerNodeId: rows[0].previous_owner_node_id } : null;
  }

  /** Clears the owner after a graceful handoff, unless someone claimed the shard since. */
  async releaseShard(shard: number, epoch: number): Promise<void> {
    await this.dataSource.query('UPDATE actor_shards SET owner_node_id = NULL WHERE shard = $1 AND epoch = $2', [shard, epoch]);
  }
}
