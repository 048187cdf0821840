// Three node processes over real NATS and Postgres: fair shard ownership,
// single activation under concurrent asks from every node, failover after
// kill -9 with no acknowledged increment lost, and a joining node's fair share.
import assert from 'node:assert/strict';
import { shardOf } from '../../src/sharding/fnv1a32';
import { ClusterNode, clusterEnv, deleteStream, uniqueBusNames, waitForBalance } from '../support/cluster-harness';
import type { BurstResult } from '../support/cluster-protocol';
import type { CounterReply } from '../support/cluster-counter';
import { createTestDatabase, type TestDatabase } from '../support/database';

const SHARDS = 32;

describe('cluster: sharding over NATS', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let env: Record<string, string>;
  const names = uniqueBusNames();
  let nodes: ClusterNode[] = [];

  before(async () => {
    database = await createTestDatabase();
    env = clusterEnv(database.url, names);
    nodes = await Promise.all([0, 1, 2].map(() => ClusterNode.start(env)));
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.dispose()));
    await database.drop();
    await deleteStream(names.eventStream);
  });

  async function ownerOf(id: string): Promise<ClusterNode> {
    const shard = shardOf(id, SHARDS);
    const statuses = await Promise.all(nodes.map((node) => node.status()));
    return nodes[statuses.findIndex((status) => status.owned.includes(shard))];
  }

  it('shares the shards fairly, each owned by exactly one node', async () => {
    await waitForBalance(nodes, SHARDS);
    const status = await nodes[0].call<{ shardCount: number; nodes: Array<{ id: string; shards: number[] }> }>({ op: 'cluster' });
    assert.equal(status.shardCount, SHARDS);
    assert.deepEqual(status.nodes.map((node) => node.id).sort(), nodes.map((node) => node.nodeId).sort());
  });

  it('never interleaves nor loses increments from concurrent asks on every node', async () => {
    const results = await Promise.all(
      nodes.map((node) => node.call<BurstResult>({ op: 'burst', id: 'shared', count: 100, concurrency: 8, command: { type: 'add', by: 1 } })),
    );
    const values = results.flatMap((result) => result.acked).sort((a, b) => a - b);
    assert.deepEqual(results.flatMap((result) => result.failed), []);
    assert.deepEqual(values, Array.from({ length: 300 }, (_, i) => i + 1));
    const final = await nodes[1].call<CounterReply>({ op: 'ask', kind: 'counter', id: 'shared', message: { type: 'get' } });
    assert.equal(final.value, 300);
  });

  it('fails over after kill -9 of the owner and keeps every acknowledged increment', async () => {
    const victim = await ownerOf('failover');
    const survivors = nodes.filter((node) => node !== victim);
    const first = await survivors[0].call<CounterReply>({ op: 'ask', kind: 'counter', id: 'failover', message: { type: 'add', by: 1 } });
    assert.equal(first.value, 1);
    const streams = survivors.map((node) => node.call<BurstResult>({ op: 'burst', id: 'failover', count: 150, concurrency: 2, command: { type: 'add', by: 1 } }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    victim.signal('SIGKILL');
    const results = await Promise.all(streams);
    nodes = survivors;
    const acked = results.flatMap((result) => result.acked);
    const failed = results.flatMap((result) => result.failed);
    const final = (await survivors[0].call<CounterReply>({ op: 'ask', kind: 'counter', id: 'failover', message: { type: 'get' } })).value;
    assert.equal(new Set(acked).size, acked.length, 'two increments acknowledged with the same value');
    assert.ok(final >= 1 + acked.length, `final ${final} lost acknowledged increments (${acked.length} acked)`);
    assert.ok(final <= 1 + acked.length + failed.length, `final ${final} counts increments never sent`);
    assert.ok(Math.max(...acked) <= final);
    assert.notEqual(await ownerOf('failover'), undefined);
  });

  it('gives a joining node its fair share', async () => {
    await waitForBalance(nodes, SHARDS);
    const joiner = await ClusterNode.start(env);
    nodes = [...nodes, joiner];
    const statuses = await waitForBalance(nodes, SHARDS);
    assert.ok(statuses[statuses.length - 1].owned.length >= Math.floor(SHARDS / nodes.length));
    const reply = await joiner.call<CounterReply>({ op: 'ask', kind: 'counter', id: 'shared', message: { type: 'get' } });
    assert.equal(reply.value, 300);
  });

  it('hands its shards off on SIGTERM without failing an ask', async () => {
    const leaving = nodes[nodes.length - 1];
    const staying = nodes.slice(0, -1);
    const owned = (await leaving.status()).owned;
    let id = 'sigterm-0';
    for (let i = 1; !owned.includes(shardOf(id, SHARDS)); i++) id = `sigterm-${i}`;
    const stream = staying[0].call<BurstResult>({ op: 'burst', id, count: 200, concurrency: 4, command: { type: 'add', by: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    leaving.signal('SIGTERM');
    assert.equal(await leaving.exited, 0);
    nodes = staying;
    const result = await stream;
    assert.deepEqual(result.failed, []);
    assert.deepEqual(result.acked.sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => i + 1));
    await waitForBalance(nodes, SHARDS);
  });
});
