// Membership and shard balancing. Every round a node heartbeats its membership
// row, computes its fair share from the live members, takes free shards up to
// that share (and any orphaned shard: recorded owner set but lock free, i.e.
// the owner died), and hands off surplus shards gracefully. A handoff lets
// the shard's running effects finish first (within the drain time), so it
// runs beside the rounds, which go on heartbeating meanwhile.
import { fairShare } from '../../src/sharding/fair-share';
import type { LeaseProvider } from '../../src/ports/leases';
import type { ActorClusterRepository, ShardOwner } from '../../persistence/runtime/actor-cluster.repository';
import { runtimeMetrics } from '../metrics';
import type { RuntimeOptions } from '../runtime-options';
import type { RuntimeLogger } from './runtime-logger';
import type { ShardHost } from './shard-host';

export interface ShardBalancerDeps {
  cluster: ActorClusterRepository;
  leases: LeaseProvider;
  host: ShardHost;
  options: RuntimeOptions;
  logger: RuntimeLogger;
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Runs the balancing loop of one node. */
export class ShardBalancer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private busy = false;
  /** Incremented at each lease loss: a round that saw one must not open the shards it claimed. */
  private leaseGeneration = 0;
  /** Handoffs in progress, by shard: still owned (and locked) until they end, but neither surplus nor to be claimed again. */
  private readonly handoffs = new Map<number, Promise<void>>();
  /** When this node's membership heartbeat last went through (0: not yet). */
  private lastHeartbeatAt = 0;

  constructor(private readonly deps: ShardBalancerDeps) {
    deps.leases.onLost((loss) => this.leaseLost(loss.reason));
  }

  /** Connects the lease session, runs a first round and starts the loop. */
  async start(): Promise<void> {
    await this.deps.leases.connect();
    await this.round();
    this.timer = setInterval(() => this.schedule(), this.deps.options.rebalanceIntervalMs);
  }

  /** Runs one round now (after the one in progress). */
  round(): Promise<void> {
    this.running = this.running.then(() => this.roundSafely());
    return this.running;
  }

  /**
   * Stops balancing, hands every shard off (all done by `handoffsEndAt`, ms
   * since the epoch), releases the leases and leaves the membership.
   */
  async stop(handoffsEndAt = Date.now() + this.deps.options.drainTimeoutMs): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    // Rebalancing handoffs still draining are joined, not started again; their end is brought forward to the stop's when later.
    await Promise.all([...this.deps.host.owned().map((shard) => this.handoff(shard, handoffsEndAt)), ...this.handoffs.values()]);
    await this.deps.cluster.removeNode(this.deps.options.nodeId).catch(() => undefined);
    await this.deps.leases.close();
  }

  /**
   * A write found the shard's fence moved (another node claimed it): the host
   * has dropped the shard; let go of its lease too, if this session still
   * holds it, so the membership shows the truth at the next heartbeat.
   */
  async shardLost(shard: number): Promise<void> {
    await this.deps.leases.release([shard]).catch(() => undefined);
  }

  // Skips a tick rather than queueing rounds behind a slow one.
  private schedule(): void {
    if (this.busy || this.stopped) return;
    void this.round();
  }

  private async roundSafely(): Promise<void> {
    if (this.stopped) return;
    this.busy = true;
    try {
      await this.balance();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'shard balancing round failed');
    } finally {
      this.busy = false;
    }
  }

  private async balance(): Promise<void> {
    const { cluster, leases, host, options } = this.deps;
    if (!leases.healthy) await leases.connect();
    await cluster.heartbeat(options.nodeId, host.owned(), host.activeActors());
    const silentMs = this.lastHeartbeatAt ? Date.now() - this.lastHeartbeatAt : 0;
    this.lastHeartbeatAt = Date.now();
    // Back from an outage of the database (no heartbeat went through for a while): the other members could not
    // heartbeat either, so those seen before it are as alive as this node; and every shard is an orphan, since every
    // lease session died with the database. Taking only this node's share (not every orphan, as after a node's
    // death) spares the handoffs that would follow, which held the objectives of half the shards up for a second.
    const returning = silentMs > this.returnAfterSilenceMs();
    // Returning, a member counts if it heartbeated within a lease timeout before the silence: under load the others' last
    // heartbeats before the outage can be seconds older than this node's, and one missed took every orphan (then handed
    // half off). One that had in fact died is left out by the next round's short window, which takes its share then.
    const live = await cluster.listLiveNodeIds(this.balanceWindowMs() + (returning ? silentMs + options.leaseTimeoutMs : 0));
    const target = fairShare(options.shardCount, [...live, options.nodeId], options.nodeId);
    const owners = await cluster.listShardOwners();
    const before = host.owned().length;
    const taken = await this.acquire(owners, target, returning);
    const keeping = host.owned().length - this.handoffs.size;
    if (taken === 0 && keeping > target) this.releaseSurplus(keeping - target);
    if (host.owned().length !== before) await cluster.heartbeat(options.nodeId, host.owned(), host.activeActors());
    await cluster.removeStaleNodes(Math.max(options.leaseTimeoutMs * 10, 60_000));
  }

  // Fair share uses a short freshness window so that a dead node's share is
  // redistributed quickly; safety never depends on it (the locks do).
  private balanceWindowMs(): number {
    return Math.min(this.deps.options.leaseTimeoutMs, Math.max(4 * this.deps.options.rebalanceIntervalMs, 1000));
  }

  /** A heartbeat silence longer than this means the database was away (a round or two late is not). */
  private returnAfterSilenceMs(): number {
    return Math.max(3 * this.deps.options.rebalanceIntervalMs, 2000);
  }

  /** @param returning back from a database outage: orphans are taken up to this node's share only (see balance) */
  private async acquire(owners: ShardOwner[], target: number, returning = false): Promise<number> {
    const { leases, host, options } = this.deps;
    // A shard handed off is still locked by this session (locks are re-entrant): never claimed back while it drains.
    const mine = new Set([...host.owned(), ...this.handoffs.keys()]);
    const need = Math.max(target - mine.size, 0);
    const free = shuffle(owners.filter((owner) => !mine.has(owner.shard) && owner.ownerNodeId === null).map((owner) => owner.shard));
    const recorded = owners.filter((owner) => !mine.has(owner.shard) && owner.ownerNodeId !== null).map((owner) => owner.shard);
    const candidates = returning ? [...free, ...shuffle(recorded)] : [...free.slice(0, need), ...recorded];
    const generation = this.leaseGeneration;
    const locked = await leases.tryAcquire(candidates);
    // Returning: every lock is tried (the other members take theirs at the same moment) and those past the share let go at once.
    const keep = returning ? locked.slice(0, need) : locked;
    if (keep.length < locked.length) await leases.release(locked.slice(need)).catch(() => undefined);
    const unclaimed = new Set(keep);
    const deadOwners = new Set<string>();
    try {
      for (const shard of keep) {
        // The claim checks the lock in the same statement: after a lease loss not yet noticed, it gets no epoch.
        const claim = await this.deps.cluster.claimShard(shard, options.nodeId, leases.holder());
        if (generation !== this.leaseGeneration) return 0;
        if (claim !== null) host.open(shard, claim.epoch);
        unclaimed.delete(shard);
        // The owner recorded at the claim, not in the round's snapshot: one that handed the shard off since is alive.
        const previous = claim?.previousOwnerNodeId;
        // Not when returning from an outage: every lock was freed by the database, the other members are alive.
        if (previous && previous !== options.nodeId && !returning) deadOwners.add(previous);
      }
    } finally {
      // Advisory locks are re-entrant: a shard locked but not opened would be locked twice by the next round, and a handoff's one unlock would keep it.
      if (unclaimed.size && generation === this.leaseGeneration) await leases.release([...unclaimed]).catch(() => undefined);
    }
    // An orphan's free lock proves its recorded owner died (or lost its lease): it leaves the membership now, not when its
    // heartbeat ages out, or the next round would count it, find this node over its share, and hand the shards it just
    // took off again (restarting their effects). A node that is in fact alive re-registers at its next heartbeat.
    if (deadOwners.size) await this.deps.cluster.removeNodes([...deadOwners]).catch(() => undefined);
    if (keep.length) this.deps.logger.info({ node: options.nodeId, acquired: keep.length, owned: this.deps.host.owned().length }, 'shards acquired');
    if (keep.length) this.deps.logger.debug({ node: options.nodeId, shards: keep }, 'shards acquired (numbers)');
    return keep.length;
  }

  /** Starts handing off surplus shards; they drain beside the next rounds. */
  private releaseSurplus(surplus: number): void {
    const shards = this.deps.host.owned().filter((shard) => !this.handoffs.has(shard)).slice(-Math.min(surplus, this.deps.options.maxHandoffsPerRound));
    this.deps.logger.info({ node: this.deps.options.nodeId, shards }, 'handing shards off');
    for (const shard of shards) {
      this.handoff(shard).catch((error: unknown) => this.deps.logger.warn({ err: error, shard }, 'shard handoff failed'));
    }
  }

  /**
   * Hands a shard off once, done by `endsAt` (default: the drain time from
   * now): a second call joins the handoff in progress, bringing its end forward.
   */
  private handoff(shard: number, endsAt = Date.now() + this.deps.options.drainTimeoutMs): Promise<void> {
    const running = this.handoffs.get(shard);
    if (running) {
      void this.deps.host.handoff(shard, endsAt);
      return running;
    }
    const handoff = this.handOver(shard, endsAt).finally(() => this.handoffs.delete(shard));
    this.handoffs.set(shard, handoff);
    return handoff;
  }

  private async handOver(shard: number, endsAt: number): Promise<void> {
    const fence = this.deps.host.fenceOf(shard);
    if (!fence) return;
    await this.deps.host.handoff(shard, endsAt);
    // Owner cleared before unlocking, so nobody mistakes the shard for an orphan.
    await this.deps.cluster.releaseShard(shard, fence.epoch).catch(() => undefined);
    await this.deps.leases.release([shard]).catch(() => undefined);
  }

  private leaseLost(reason: string): void {
    this.leaseGeneration++;
    runtimeMetrics.leaseLosses.inc();
    this.deps.logger.warn({ node: this.deps.options.nodeId, reason, shards: this.deps.host.owned().length }, 'lease lost: stopping every shard');
    this.deps.host.abandonAll();
  }
}
