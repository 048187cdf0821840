// Cluster mode in one process (two runtimes on real NATS and Postgres): the
// outbox reaches JetStream once per event, and a rebalance or a stop hands
// shards off without losing an accepted message.
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { JetStreamPublisher, readClusterStatus, startActorRuntime, type ActorRuntime, type RuntimeOptions } from '../../actors';
import { createDataSource } from '../../persistence/data-source';
import { counterKind, type CounterReply } from '../support/cluster-counter';
import { TEST_NATS_URL, deleteStream, eventually, silentLogger, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe('cluster: runtime on NATS in one process', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let dataSource: DataSource;
  let names: { subjectPrefix: string; eventStream: string };
  let runtimes: ActorRuntime[] = [];

  function options(): Partial<RuntimeOptions> {
    return { ...names, shardCount: 16, leaseTimeoutMs: 2000, rebalanceIntervalMs: 200, outboxPollMs: 100, askAttemptTimeoutMs: 1000, askTimeoutMs: 10_000 };
  }

  async function startNode(): Promise<ActorRuntime> {
    const runtime = await startActorRuntime({ dataSource, databaseUrl: database.url, natsUrl: TEST_NATS_URL, kinds: [counterKind], options: options(), logger: silentLogger });
    runtimes.push(runtime);
    return runtime;
  }

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 8 });
    await dataSource.initialize();
  });

  beforeEach(() => {
    names = uniqueBusNames();
  });

  afterEach(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.stop()));
    runtimes = [];
    await deleteStream(names.eventStream);
  });

  after(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('publishes outbox events to JetStream once each, with the event id as message id', async () => {
    const runtime = await startNode();
    await runtime.ask('counter', 'streamed', { type: 'emit', count: 5 });
    await eventually(async () => (await dataSource.query("SELECT count(*)::int AS n FROM actor_outbox WHERE subject LIKE '%.streamed' AND published_at IS NOT NULL"))[0].n === 5, 'events published');
    const connection = await connect({ servers: TEST_NATS_URL });
    try {
      const manager = await jetstreamManager(connection);
      // The runtime's stream is the cluster's own: the configured name and the cluster id kept in the database.
      const [{ cluster_id: clusterId }] = await dataSource.query('SELECT cluster_id FROM actor_cluster');
      assert.equal(runtime.eventStream, `${names.eventStream}_${clusterId}`);
      const info = await manager.streams.info(runtime.eventStream);
      assert.ok(info.config.duplicate_window >= 10 * 60 * 1e9);
      assert.equal(info.state.messages, 5);
      // A relay that crashed after publishing but before marking publishes again: stored once.
      const [row] = await dataSource.query("SELECT id, subject, payload FROM actor_outbox WHERE subject LIKE '%.streamed' ORDER BY id LIMIT 1");
      const publisher = new JetStreamPublisher(connection);
      await publisher.publish({ id: row.id, subject: row.subject, data: JSON.stringify(row.payload) });
      assert.equal((await manager.streams.info(runtime.eventStream)).state.messages, 5);
      const stored = await manager.streams.getMessage(runtime.eventStream, { seq: 1 });
      assert.equal(stored?.header?.get('Nats-Msg-Id'), row.id);
      // Each event carries its actor and the actor's gapless sequence, in stream order.
      const sequences: string[] = [];
      for (let seq = 1; seq <= 5; seq++) {
        const message = await manager.streams.getMessage(runtime.eventStream, { seq });
        assert.equal(message?.header?.get('Agentrt-Actor-Key'), 'counter:streamed');
        sequences.push(message!.header!.get('Agentrt-Actor-Sequence'));
      }
      assert.deepEqual(sequences, ['1', '2', '3', '4', '5']);
    } finally {
      await connection.close();
    }
  });

  it('loses no accepted message when a joining node takes shards over', async () => {
    const first = await startNode();
    assert.equal(first.ownedShards().length, 16);
    let accepted = 0;
    let pumping = true;
    const pump = (async () => {
      for (let round = 0; pumping; round++) {
        await Promise.all(Array.from({ length: 16 }, (_, i) => first.tell('counter', `moving-${i}`, { type: 'add', by: 1 }).then(() => accepted++)));
      }
    })();
    const second = await startNode();
    await eventually(() => first.ownedShards().length === 8 && second.ownedShards().length === 8, 'shards split 8/8');
    await new Promise((resolve) => setTimeout(resolve, 200));
    pumping = false;
    await pump;
    const values = await Promise.all(Array.from({ length: 16 }, (_, i) => second.ask<CounterReply>('counter', `moving-${i}`, { type: 'get' })));
    assert.ok(accepted > 16 * 5, `only ${accepted} tells were sent around the handoff`);
    assert.equal(values.reduce((sum, reply) => sum + reply.value, 0), accepted);
  });

  it('hands every shard to the remaining node on stop (SIGTERM) without losing asks', async () => {
    const first = await startNode();
    const second = await startNode();
    await eventually(() => first.ownedShards().length === 8 && second.ownedShards().length === 8, 'shards split 8/8');
    const asks = Promise.all(Array.from({ length: 200 }, (_, i) => second.ask<CounterReply>('counter', `stopping-${i % 10}`, { type: 'add', by: 1 })));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await first.stop();
    const replies = await asks;
    assert.equal(replies.length, 200);
    await eventually(() => second.ownedShards().length === 16, 'the remaining node owns every shard');
    const totals = await Promise.all(Array.from({ length: 10 }, (_, i) => second.ask<CounterReply>('counter', `stopping-${i}`, { type: 'get' })));
    assert.equal(totals.reduce((sum, reply) => sum + reply.value, 0), 200);
    const status = await readClusterStatus(dataSource, { shardCount: 999, leaseTimeoutMs: 15_000 });
    assert.equal(status.shardCount, 16);
    assert.deepEqual(status.nodes.map((node) => node.id), [second.nodeId]);
    assert.deepEqual(status.nodes[0].shards, Array.from({ length: 16 }, (_, i) => i));
  });

  it('hands an actor\'s events to a durable consumer shared by the nodes, each event to one node', async () => {
    const first = await startNode();
    const second = await startNode();
    const seen: Array<{ node: string; sequence: string; id: string }> = [];
    for (const node of [first, second]) {
      await node.consume({ stream: node.eventStream, durableName: 'shared-reader', filterSubject: `${node.subjectPrefix}.events.counter.consumed`, maxAckPending: 1 }, async (event) => {
        seen.push({ node: node.nodeId, sequence: event.headers['Agentrt-Actor-Sequence'], id: event.id });
        await event.ack();
      });
    }
    await first.ask('counter', 'consumed', { type: 'emit', count: 6 });
    await eventually(() => seen.length >= 6, 'every event consumed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(seen.length, 6, 'each event handled once');
    assert.deepEqual(seen.map((event) => event.sequence), ['1', '2', '3', '4', '5', '6'], 'in the actor\'s order');
    assert.equal(new Set(seen.map((event) => event.id)).size, 6);
  });
});
