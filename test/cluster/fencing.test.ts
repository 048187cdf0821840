// A node paused (SIGSTOP) past the lease timeout loses its shards to another
// node; when it resumes (SIGCONT) its stale write is refused by the fencing
// epoch, it stops its actors, and it rejoins with a fair share.
import assert from 'node:assert/strict';
import { shardOf } from '../../src/sharding/fnv1a32';
import { ClusterNode, clusterEnv, deleteStream, eventually, uniqueBusNames, waitForBalance } from '../support/cluster-harness';
import type { CounterReply } from '../support/cluster-counter';
import { createTestDatabase, type TestDatabase } from '../support/database';

const SHARDS = 32;

describe('cluster: fencing a paused node', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let nodes: ClusterNode[] = [];
  const names = uniqueBusNames();

  before(async () => {
    database = await createTestDatabase();
    const env = clusterEnv(database.url, names);
    nodes = await Promise.all([0, 1].map(() => ClusterNode.start(env)));
    await waitForBalance(nodes, SHARDS);
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.dispose()));
    await database.drop();
    await deleteStream(names.eventStream);
  });

  it('refuses the stale writes of a node paused past the lease timeout, then lets it rejoin', async () => {
    const shard = shardOf('paused', SHARDS);
    const statuses = await Promise.all(nodes.map((node) => node.status()));
    const victim = nodes[statuses.findIndex((status) => status.owned.includes(shard))];
    const other = nodes.find((node) => node !== victim)!;
    const ask = (node: ClusterNode, message: unknown, timeoutMs?: number) => node.call<CounterReply>({ op: 'ask', kind: 'counter', id: 'paused', message, timeoutMs });
    assert.equal((await ask(other, { type: 'add', by: 1 })).value, 1);

    // A turn in progress on the victim when it is paused; its caller gives up.
    const slow = ask(other, { type: 'slowAdd', by: 100, delayMs: 1500 }, 1200).then(
      () => 'acknowledged',
      (error: { code: string }) => error.code,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    victim.signal('SIGSTOP');
    assert.equal(await slow, 'UNAVAILABLE');
    await eventually(async () => (await other.status()).owned.includes(shard), 'the other node took the shard over', 10_000);
    assert.equal((await ask(other, { type: 'add', by: 1 })).value, 2);

    victim.signal('SIGCONT');
    await eventually(async () => {
      const status = await victim.status();
      return status.fencedWrites >= 1 && status.leaseLosses >= 1;
    }, 'the stale write was refused and the lease loss noticed');
    await waitForBalance(nodes, SHARDS);
    assert.equal((await ask(victim, { type: 'get' })).value, 2);
    assert.equal((await ask(victim, { type: 'add', by: 1 })).value, 3);
  });
});
