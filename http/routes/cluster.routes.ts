// The operator view of the cluster: which node owns which shards (admin only).
import { ClusterStatus, type ClusterStatusSource } from '../../src/schemas/cluster.schema';
import { defineRoute, type RouteDefinition } from '../route';

export function clusterRoutes({ clusterStatus }: { clusterStatus: ClusterStatusSource }): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/cluster', operationId: 'getClusterStatus', summary: 'Nodes of the actor runtime, their heartbeats, shards and active actors',
      scope: 'account:manage', admin: true, workspace: 'none', response: ClusterStatus,
      handler: () => clusterStatus(),
    }),
  ];
}
