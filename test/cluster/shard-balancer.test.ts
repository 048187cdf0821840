// ShardBalancer against real advisory locks: a round that fails half-way must
// not leave a shard locked twice by its session (advisory locks are
// re-entrant), or a later graceful handoff unlocks once and keeps the shard.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { defaultRuntimeOptions, PgLeaseProvider } from '../../actors';
import { ShardBalancer } from '../../actors/runtime/shard-balancer';
import type { ShardHost } from '../../actors/runtime/shard-host';
import { createDataSource } from '../../persistence/data-source';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import type { Fence } from '../../persistence/runtime/turn-writer';
import { eventually, silentLogger } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** The part of ShardHost the balancer uses, without actors. */
class FakeHost {
  readonly slots = new Map<number, number>();
  owned(): number[] {
    return [...this.slots.keys()].sort((a, b) => a - b);
  }
  open(shard: number, epoch: number): void {
    this.slots.set(shard, epoch);
  }
  fenceOf(shard: number): Fence | undefined {
    const epoch = this.slots.get(shard);
    return epoch === undefined ? undefined : { shard, epoch };
  }
  activeActors(): number {
    return 0;
  }
  handoffs = 0;
  async handoff(shard: number): Promise<void> {
    this.handoffs += 1;
    this.slots.delete(shard);
  }
  abandonAll(): void {
    this.slots.clear();
  }
}

describe('ShardBalancer', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const providers: PgLeaseProvider[] = [];

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
  });

  after(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
    await dataSource.destroy();
    await database.drop();
  });

  it('unlocks a shard whose claim failed, so a later handoff really frees it', async () => {
    const cluster = new ActorClusterRepository(dataSource);
    await cluster.ensureShardCount(1);
    let failClaims = 1;
    const flaky = Object.create(cluster) as ActorClusterRepository;
    flaky.claimShard = async (...args) => {
      if (failClaims-- > 0) throw new Error('connection reset while claiming');
      return cluster.claimShard(...args);
    };
    const leases = new PgLeaseProvider({ url: database.url, leaseTimeoutMs: 5000, applicationName: 'balancer-under-test' });
    const other = new PgLeaseProvider({ url: database.url, leaseTimeoutMs: 5000, applicationName: 'balancer-other' });
    providers.push(leases, other);
    const host = new FakeHost();
    const options = { ...defaultRuntimeOptions(), nodeId: 'node_b', shardCount: 1, rebalanceIntervalMs: 60_000 };
    const balancer = new ShardBalancer({ cluster: flaky, leases, host: host as unknown as ShardHost, options, logger: silentLogger });
    await balancer.start(); // first round: lock taken, claim fails
    assert.deepEqual(host.owned(), []);
    await balancer.round(); // second round: claimed and opened
    assert.deepEqual(host.owned(), [0]);
    // A member that sorts first joins: its fair share is the only shard, ours is none.
    await cluster.heartbeat('node_a', [], 0);
    await balancer.round();
    assert.deepEqual(host.owned(), []);
    await other.connect();
    // The handoff runs beside the rounds: it unlocks once the shard has drained.
    await eventually(async () => (await other.tryAcquire([0])).length === 1, 'the shard handed off is unlocked by the old session');
    await balancer.stop();
    await other.close();
  });

  it('keeps a member that handed its shard off gracefully between the round’s read of the owners and its claim', async () => {
    const cluster = new ActorClusterRepository(dataSource);
    await cluster.ensureShardCount(1);
    // node_a is alive and owns the only shard.
    const leasesOfA = new PgLeaseProvider({ url: database.url, leaseTimeoutMs: 5000, applicationName: 'balancer-node-a' });
    const leasesOfB = new PgLeaseProvider({ url: database.url, leaseTimeoutMs: 5000, applicationName: 'balancer-node-b' });
    providers.push(leasesOfA, leasesOfB);
    await leasesOfA.connect();
    assert.deepEqual(await leasesOfA.tryAcquire([0]), [0]);
    const epochOfA = (await cluster.claimShard(0, 'node_a', leasesOfA.holder()))!.epoch;
    await cluster.heartbeat('node_a', [0], 0);
    // node_b reads the owners (node_a recorded), then node_a hands the shard off: owner cleared, then unlocked.
    const racing = Object.create(cluster) as ActorClusterRepository;
    racing.listShardOwners = async () => {
      const owners = await cluster.listShardOwners();
      await cluster.releaseShard(0, epochOfA);
      await leasesOfA.release([0]);
      return owners;
    };
    const host = new FakeHost();
    const options = { ...defaultRuntimeOptions(), nodeId: 'node_b', shardCount: 1, rebalanceIntervalMs: 60_000 };
    const balancer = new ShardBalancer({ cluster: racing, leases: leasesOfB, host: host as unknown as ShardHost, options, logger: silentLogger });
    await balancer.start();
    assert.deepEqual(host.owned(), [0], 'node_b did not take the free shard');
    // The free lock came from a handoff, not a death: node_a must stay a member.
    assert.deepEqual(await cluster.listLiveNodeIds(5000), ['node_a', 'node_b']);
    await balancer.stop();
  });

  it('back from a database outage, takes its own share of the orphaned shards, not every one (no handoff after)', async () => {
    // A cluster of its own: the others of this file run one shard.
    const own = await createTestDatabase();
    const ownSource = createDataSource({ url: own.url, poolSize: 2 });
    await ownSource.initialize();
    const cluster = new ActorClusterRepository(ownSource);
    await cluster.ensureShardCount(8);
    // The database away for the balancers: their heartbeats fail, and their lease sessions die with it.
    let away = false;
    const reachable = Object.create(cluster) as ActorClusterRepository;
    reachable.heartbeat = async (...args) => {
      if (away) throw new Error('Connection terminated unexpectedly');
      return cluster.heartbeat(...args);
    };
    const options = { ...defaultRuntimeOptions(), shardCount: 8, rebalanceIntervalMs: 100, leaseTimeoutMs: 5000 };
    const nodes = ['node_p', 'node_q'].map((nodeId) => {
      const leases = new PgLeaseProvider({ url: own.url, leaseTimeoutMs: 5000, applicationName: `balancer-${nodeId}` });
      providers.push(leases);
      const host = new FakeHost();
      const balancer = new ShardBalancer({ cluster: reachable, leases, host: host as unknown as ShardHost, options: { ...options, nodeId }, logger: silentLogger });
      return { nodeId, host, balancer };
    });
    for (const node of nodes) await node.balancer.start();
    await eventually(async () => nodes.every((node) => node.host.owned().length === 4), 'four shards each');
    away = true;
    await ownSource.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name IN ('balancer-node_p', 'balancer-node_q')");
    await eventually(async () => nodes.every((node) => node.host.owned().length === 0), 'every shard stopped with the leases');
    await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than the silence that marks an outage (2 s here)
    for (const node of nodes) node.host.handoffs = 0;
    away = false;
    await eventually(async () => nodes.every((node) => node.host.owned().length === 4), 'four shards each again');
    // A few more rounds: nobody holds more than its share, so nobody hands a shard off.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(nodes.map((node) => node.host.handoffs), [0, 0], 'no shard handed off after the return');
    assert.deepEqual(nodes.map((node) => node.host.owned().length), [4, 4]);
    for (const node of nodes) await node.balancer.stop();
    await ownSource.destroy();
    await own.drop();
  });
});
