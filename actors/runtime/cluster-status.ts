// The operator view of the cluster: the live members (heartbeat within the
// lease timeout) and the shards each owns now, read from the membership and
// shard tables. Needs only SQL, so the CLI can answer without starting a node.
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import type { SqlQueryable } from '../../persistence/runtime/runtime-database';

/** The answer of `GET /v1/cluster` and `agentrt cluster status`. */
export interface ClusterStatus {
  shardCount: number;
  nodes: Array<{ id: string; lastHeartbeatAt: string; shards: number[]; activeActors: number }>;
}

/**
 * Reads the live members: a node silent for longer than the lease timeout has
 * lost its shards (or is about to), so it is not listed, and each node's
 * shards are the ones it owns now.
 * @param settings.shardCount answered before any node has started.
 */
export async function readClusterStatus(sql: SqlQueryable, settings: { shardCount: number; leaseTimeoutMs: number }): Promise<ClusterStatus> {
  const repo = new ActorClusterRepository(sql);
  const [shardCount, nodes] = await Promise.all([repo.findShardCount(), repo.listLiveNodes(settings.leaseTimeoutMs)]);
  return {
    shardCount: shardCount ?? settings.shardCount,
    nodes: nodes.map((node) => ({ id: node.nodeId, lastHeartbeatAt: node.lastHeartbeatAt.toISOString(), shards: node.shards, activeActors: node.activeActors })),
  };
}
