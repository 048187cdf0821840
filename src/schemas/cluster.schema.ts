// The operator view of the actor runtime (GET /v1/cluster, `agentrt cluster status`).
import { Type, type Static } from '@sinclair/typebox';

export const ClusterStatus = Type.Object({
  shardCount: Type.Integer(),
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      lastHeartbeatAt: Type.String({ format: 'date-time' }),
      shards: Type.Array(Type.Integer()),
      activeActors: Type.Integer(),
    }),
  ),
});
export type ClusterStatus = Static<typeof ClusterStatus>;

/** Reads the cluster view (the runtime's membership table). */
export type ClusterStatusSource = () => Promise<ClusterStatus>;
