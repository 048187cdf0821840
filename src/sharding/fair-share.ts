// Fair-share arithmetic for shard balancing: how many shards each live node
// should own. Pure functions; the balancer in actors/ acts on the answer.

/**
 * The number of shards `nodeId` should own when `liveNodeIds` share
 * `shardCount` shards: floor(S/n), plus one for the first S mod n nodes in id
 * order. Every node computes the same table from the same membership view.
 * @returns 0 when `nodeId` is not among the live nodes.
 */
export function fairShare(shardCount: number, liveNodeIds: readonly string[], nodeId: string): number {
  const sorted = [...new Set(liveNodeIds)].sort();
  const index = sorted.indexOf(nodeId);
  if (index < 0) return 0;
  const base = Math.floor(shardCount / sorted.length);
  return base + (index < shardCount % sorted.length ? 1 : 0);
}
