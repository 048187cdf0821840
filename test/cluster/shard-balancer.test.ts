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
  async handoff(shard: number): Promise<void> {
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
});
