// Two clusters on one NATS server (issue 24 item 10): two clusters of two
// nodes each (in-process APIs with runtimes in cluster mode) over two
// databases (staging next to production, two test runs), configured with the
// same subject prefix and event stream, webhooks on. Each runs objectives of
// its own agents, created through both of its nodes so that requests cross
// the bus: each webhook receiver gets every event of its own cluster's
// objectives and none of the other's, and no actor of one cluster leaves a
// trace in the other's database (its shard requests never reached the
// other's nodes).
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { eventuallyValue } from '../support/eventually';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const OBJECTIVES_PER_CLUSTER = 8;
const SHARD_COUNT = 8;

interface Cluster {
  name: string;
  database: TestDatabase;
  /** The cluster's two nodes; `api` is the first. */
  nodes: TestApi[];
  api: TestApi;
  receiver: WebhookReceiver;
  ws: WorkspaceFixture;
  signingSecret: string;
  agentId: string;
  objectiveIds: string[];
}

describe('two clusters on one NATS server with the same subject prefix (Postgres and NATS)', function () {
  this.timeout(180_000);
  // The same names for both: what two deployments left at the defaults share.
  const names = uniqueBusNames();
  const clusters: Cluster[] = [];

  async function startCluster(name: string): Promise<Cluster> {
    const database = await createTestDatabase();
    const receiver = await startWebhookReceiver();
    const startNode = () => startTestApi({
      database,
      runtime: { ...names, shardCount: SHARD_COUNT, leaseTimeoutMs: 2000, rebalanceIntervalMs: 200 },
      natsUrl: TEST_NATS_URL,
      env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms' },
      logLevel: 'info',
    });
    const nodes = [await startNode(), await startNode()];
    const api = nodes[0];
    // Half the shards each: a request to an actor of the other node goes over the bus.
    await eventuallyValue(async () => nodes.every((node) => node.runtime!.ownedShards().length === SHARD_COUNT / 2), `cluster ${name}'s two nodes sharing the shards`, 30_000);
    const ws = await workspaceFixture(api);
    const account = await api.request('GET', '/v1/account', { token: ws.account.globalApiKey.token });
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `hooked-${name}` }, spec: { webhookEventsUrl: `${receiver.url}/events` } });
    await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } });
    return { name, database, nodes, api, receiver, ws, signingSecret: account.body.info.webhookEventsHmacSecret, agentId: agent.metadata.id, objectiveIds: [] };
  }

  async function eventIdsOf(cluster: Cluster, objectiveId: string): Promise<string[] | undefined> {
    const response = await cluster.api.request('GET', `/v1/workspaces/${cluster.ws.workspaceId}/objectives/${objectiveId}/events?limit=1000`, { token: cluster.ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const events = response.body.items as any[];
    return events.at(-1)?.data.type === 'OBJECTIVE_EVENT_TYPE_FINALIZED' ? events.map((event) => event.metadata.id as string) : undefined;
  }

  /** The objective event ids a cluster's receiver got, each request verified with the cluster's signing secret. */
  function receivedEventIds(cluster: Cluster): string[] {
    const verifier = new Webhook(cluster.signingSecret.replace(/^wh_/, 'whsec_'));
    return cluster.receiver.at('/events').map((webhook) => (verifier.verify(webhook.body, webhook.headers) as any).data.objectiveEvent.metadata.id as string);
  }

  before(async () => {
    clusters.push(await startCluster('a'), await startCluster('b'));
  });

  after(async () => {
    for (const cluster of clusters) {
      for (const node of cluster.nodes) await node.close().catch(() => undefined);
      await cluster.receiver.close();
      await cluster.database.drop();
    }
    await deleteWebhookIntakeDurables(names.subjectPrefix);
    await deleteStream(names.eventStream);
  });

  it('delivers to each receiver every event of its own cluster and none of the other, and keeps each cluster\'s actors to its own nodes', async () => {
    for (let index = 0; index < OBJECTIVES_PER_CLUSTER; index += 1) {
      for (const cluster of clusters) {
        const objective = await created(cluster.nodes[index % 2], cluster.ws.token, `/v1/workspaces/${cluster.ws.workspaceId}/objectives`, { agentId: cluster.agentId, initialMessage: `SAY ${cluster.name} ${index}` });
        cluster.objectiveIds.push(objective.metadata.id);
      }
    }

    const expected = new Map<Cluster, string[]>();
    for (const cluster of clusters) {
      const ids: string[] = [];
      for (const objectiveId of cluster.objectiveIds) ids.push(...(await eventuallyValue(() => eventIdsOf(cluster, objectiveId), `objective ${objectiveId} of cluster ${cluster.name} finalized`, 60_000)));
      expected.set(cluster, ids.sort());
    }
    for (const cluster of clusters) {
      const own = expected.get(cluster)!;
      // Every own event arrives (a webhook may come twice: at least once); then the set must be exactly the cluster's.
      await eventuallyValue(async () => own.every((id) => receivedEventIds(cluster).includes(id)), `cluster ${cluster.name}'s receiver getting all ${own.length} of its events`, 60_000)
        .catch(() => undefined);
      assert.deepEqual([...new Set(receivedEventIds(cluster))].sort(), own, `cluster ${cluster.name}'s receiver got exactly its own cluster's events`);
    }

    for (const [cluster, other] of [[clusters[0], clusters[1]], [clusters[1], clusters[0]]]) {
      const ownActors = [...cluster.objectiveIds.map((id) => `objective:${id}`), `%${cluster.agentId}%`];
      const traces: Array<{ persistence_key: string }> = await other.api.dataSource.query(
        `SELECT DISTINCT persistence_key FROM actor_journal WHERE persistence_key LIKE ANY($1)
         UNION SELECT persistence_key FROM actor_snapshots WHERE persistence_key LIKE ANY($1)`,
        [ownActors],
      );
      assert.deepEqual(traces.map((row) => row.persistence_key), [], `no actor of cluster ${cluster.name} ran on cluster ${other.name}'s nodes`);
    }
  });
});
