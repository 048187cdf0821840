// The operator view of the cluster, read from the membership table. Needs only
// a data source, so the CLI can answer without starting a runtime node.
import type { DataSource } from 'typeorm';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';

/** The answer of `GET /v1/cluster` and `agentrt cluster status`. */
export interface ClusterStatus {
  shardCount: number;
  nodes: Array<{ id: string; lastHeartbeatAt: string; shards: number[]; activeActors: number }>;
}

/**
 * Reads the membership table: every member (live or silent for less than 10 L),
 * its last heartbeat, its shards and active actors.
 * @param configuredShardCount answered as shardCount before any node has started.
 */
export async function readClusterStatus(dataSource: DataSource, configuredShardCount: number): Promise<ClusterStatus> {
  const repo = new ActorClusterRepository(dataSource);
  const [shardCount, nodes] = await Promise.all([repo.findShardCount(), repo.listNodes()]);
  return {
    shardCount: shardCount ?? configuredShardCount,
    nodes: nodes.map((node) => ({ id: node.nodeId, lastHeartbeatAt: node.lastHeartbeatAt.toISOString(), shards: node.shards, activeActors: node.activeActors })),
  };
}
