// The actor runtime of one node, assembled from its ports: a bus, shard
// leases and an event publisher (NATS/Postgres or in-process), over the
// runtime's own Postgres pool. The public calls are ask/tell/send,
// clusterStatus and stop.
import { ConfigError } from '../../src/config';
import { FailedPreconditionError } from '../../src/errors';
import { newUlid } from '../../src/ids';
import { actorAddress, kindOfPersistenceKey, persistenceKey } from '../../src/sharding/addressing';
import type { ActorKind } from '../../src/ports/actor-behavior';
import type { Bus } from '../../src/ports/bus';
import type { ConsumedEvent, ConsumerHandle, DurableConsumerSpec, EventConsumers } from '../../src/ports/event-consumer';
import type { EventPublisher } from '../../src/ports/event-publisher';
import type { LeaseProvider } from '../../src/ports/leases';
import { ActorClusterRepository, type ClusterIdentity } from '../../persistence/runtime/actor-cluster.repository';
import { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import { ActorOutboxRepository } from '../../persistence/runtime/actor-outbox.repository';
import { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import { ActorRetentionRepository } from '../../persistence/runtime/actor-retention.repository';
import { ActorWorkRepository } from '../../persistence/runtime/actor-work.repository';
import type { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { TurnWriter, type CommandInsert } from '../../persistence/runtime/turn-writer';
import { OutboxRelay } from '../events/outbox-relay';
import { startSystem, stopActor, type SystemRef } from '../nact/nact';
import type { RuntimeOptions } from '../runtime-options';
import { ActorClient, type CallOptions } from './actor-client';
import { clusterBusNames } from './cluster-bus-names';
import { readClusterStatus, type ClusterStatus } from './cluster-status';
import { ReminderPoller } from './reminder-poller';
import { RetentionSweeper } from './retention-sweeper';
import type { DependencyHealth } from './dependency-health';
import { defaultRuntimeLogger, type RuntimeLogger } from './runtime-logger';
import { ShardBalancer } from './shard-balancer';
import { ShardHost } from './shard-host';

/**
 * The end of a stop's time kept for leaving the membership and closing the
 * bus and the pools (at most half of handoffTimeoutMs): handoffs end before it.
 */
export const CLOSING_RESERVE_MS = 1000;

/** What a runtime is built from. */
export interface ActorRuntimeDeps {
  /** The runtime's own pool: no request transaction reaches it. Closed by `stop()`. */
  database: RuntimeDatabase;
  bus: Bus;
  leases: LeaseProvider;
  publisher: EventPublisher;
  /** Durable consumers of the event streams, shared by all nodes (JetStream, or the embedded event log). */
  consumers?: EventConsumers;
  kinds: ActorKind[];
  options: RuntimeOptions;
  /**
   * Cluster mode: the subjects and the runtime's event stream carry the
   * cluster id (cluster-bus-names.ts), so clusters sharing a NATS server with
   * the same configured names never take each other's messages. @default false
   */
  clusterScopedNames?: boolean;
  logger?: RuntimeLogger;
  /** True while the calling flow holds a request transaction (actor calls are refused there). */
  insideTransaction?: () => boolean;
  /**
   * True when what `publisher` publishes also reaches the bus's subscribers
   * of its subjects (JetStream on the bus's NATS connection: cluster mode).
   * @default false
   */
  eventsOnBus?: boolean;
  /** Runs last in `stop()` (closes the NATS connection in cluster mode). */
  onStopped?: () => Promise<void>;
  /**
   * The node's view of its dependencies: when Postgres is back after an
   * outage the runtime balances at once (the lease session is gone and every
   * shard with it) rather than at its next interval.
   */
  health?: DependencyHealth;
  /**
   * Bound on the idle time of a journal write transaction, 0 for none.
   * Default: the lease timeout, so a paused node cannot hold a shard row
   * against a takeover. The embedded database needs 0: PGlite never answers
   * again once an idle_in_transaction_session_timeout expires.
   */
  journalIdleTimeoutMs?: number;
}

/** One node of the actor runtime. */
export class ActorRuntime {
  private readonly system: SystemRef;
  private readonly host: ShardHost;
  private readonly balancer: ShardBalancer;
  private readonly relay: OutboxRelay;
  private readonly outbox: ActorOutboxRepository;
  private readonly poller: ReminderPoller;
  private readonly sweeper: RetentionSweeper;
  private readonly client: ActorClient;
  private readonly cluster: ActorClusterRepository;
  private readonly logger: RuntimeLogger;
  private stopping: Promise<void> | undefined;
  private stopFollowingHealth: (() => void) | undefined;
  private readonly consumerHandles = new Set<ConsumerHandle>();
  /** Told of each turn of this node that committed events (onEventsCommitted). */
  private readonly commitListeners = new Set<(kind: string, actorId: string) => void>();
  /** The options in force: the configured ones, with the bus names scoped to the cluster in cluster mode. */
  private readonly options: RuntimeOptions;

  private constructor(
    private readonly deps: ActorRuntimeDeps,
    /** The cluster's id and first start, from its database (ActorClusterRepository.ensureClusterId). */
    private readonly identity: ClusterIdentity,
  ) {
    const logger = deps.logger ?? defaultRuntimeLogger();
    this.logger = logger;
    this.options = deps.clusterScopedNames ? { ...deps.options, ...clusterBusNames(deps.options, identity.id) } : deps.options;
    const { database } = deps;
    const options = this.options;
    const idleTimeoutMs = deps.journalIdleTimeoutMs ?? options.leaseTimeoutMs;
    const kinds = new Map(deps.kinds.map((kind) => [kind.behavior.kind, kind]));
    const projectors = new Map(deps.kinds.filter((kind) => kind.projector).map((kind) => [kind.behavior.kind, kind.projector!]));
    const projections = new Map(deps.kinds.filter((kind) => kind.projection).map((kind) => [kind.behavior.kind, kind.projection!]));
    const commands = new ActorCommandRepository(database);
    const reminders = new ActorReminderRepository(database);
    this.cluster = new ActorClusterRepository(database);
    this.system = startSystem();
    const streams = [{ name: options.eventStream, subjects: [`${options.subjectPrefix}.events.>`] }, ...deps.kinds.flatMap((kind) => kind.streams ?? [])];
    this.outbox = new ActorOutboxRepository(database, new Map(deps.kinds.filter((kind) => kind.projectedPayloads).map((kind) => [kind.behavior.kind, kind.projectedPayloads!])));
    this.relay = new OutboxRelay({ outbox: this.outbox, publisher: deps.publisher, streams, shards: () => this.host.owned(), pollMs: options.outboxPollMs, lingerMs: options.outboxLingerMs, logger });
    this.client = new ActorClient({
      bus: deps.bus, commands, options, logger, insideTransaction: deps.insideTransaction,
      local: (shard, request, timeoutMs) => this.host.requestLocally(shard, request, timeoutMs),
    });
    this.host = new ShardHost({
      system: this.system,
      bus: deps.bus,
      kinds,
      journal: new ActorJournalRepository(database, idleTimeoutMs),
      commands,
      reminders,
      work: new ActorWorkRepository(database),
      writer: new TurnWriter(database, { idleTimeoutMs, projectors, projections }),
      options,
      logger,
      onPublished: (rows) => {
        this.relay.offer(rows);
        if (this.commitListeners.size > 0) this.tellCommitted(rows[0]?.actorKey);
      },
      onShardOpened: () => this.relay.readBacklog(),
      onSent: (sends) => {
        // One notification per receiver: it applies all its stored commands, in order.
        // Not the command itself: a command an earlier owner of the sender stored
        // without notifying may wait ahead of it, and only the pending read finds it;
        // unless it is the receiver's first command ever (nothing can wait ahead of that).
        // A receiver of this node is told directly, without the bus.
        const receivers = new Map<string, CommandInsert[]>();
        for (const send of sends) {
          const key = `${send.kind}\u0000${send.actorId}`;
          const list = receivers.get(key);
          if (list) list.push(send);
          else receivers.set(key, [send]);
        }
        for (const [send, ...more] of receivers.values()) {
          const handedOver = send.first && more.length === 0 ? { id: send.id, kind: send.kind, actorId: send.actorId, payload: send.payload } : undefined;
          if (this.host.deliver(send.kind, send.actorId, send.shard, { type: 'stored', ...(handedOver ? { command: handedOver } : {}) })) continue;
          void this.client.notifyStored(send.kind, send.actorId).catch(() => undefined);
        }
      },
      onShardLost: (shard) => void this.balancer.shardLost(shard),
    });
    this.balancer = new ShardBalancer({ cluster: this.cluster, leases: deps.leases, host: this.host, options, logger });
    this.poller = new ReminderPoller({ reminders, commands, host: this.host, kinds: [...kinds.keys()], pollMs: options.reminderPollMs, logger });
    this.sweeper = new RetentionSweeper({
      retention: new ActorRetentionRepository(database),
      windowMs: options.retentionWindowMs,
      batchSize: options.retentionBatchSize,
      intervalMs: options.retentionIntervalMs,
      logger,
    });
  }

  /**
   * Starts a node: checks the shard count, reads (or makes) the cluster id, joins the membership, takes its
   * first shards (activating their actors with unfinished work), then starts
   * the outbox relay and the reminder poller.
   * @throws FailedPreconditionError when the cluster runs another shard count.
   */
  static async start(deps: ActorRuntimeDeps): Promise<ActorRuntime> {
    if (deps.options.retentionWindowMs < deps.options.askTimeoutMs) {
      // The window is how long a retried command is recognised: shorter than a caller's retry budget, a retry could apply twice.
      throw new ConfigError(`AGENTRT_RETENTION_WINDOW_MS (${deps.options.retentionWindowMs}) must be at least AGENTRT_ASK_TIMEOUT_MS (${deps.options.askTimeoutMs})`);
    }
    const cluster = new ActorClusterRepository(deps.database);
    await cluster.ensureShardCount(deps.options.shardCount);
    const runtime = new ActorRuntime(deps, await cluster.ensureClusterId(newUlid()));
    await runtime.balancer.start();
    // Streams exist before anyone consumes them; JetStream down now only delays that to the relay's next pass.
    await runtime.relay.prepare().catch((error: unknown) => runtime.logger.warn({ err: error }, 'event streams not prepared yet; retrying'));
    runtime.relay.start();
    runtime.poller.start();
    runtime.sweeper.start();
    runtime.followHealth();
    return runtime;
  }

  /** The cluster's id (a ULID kept in its database). */
  get clusterId(): string {
    return this.identity.id;
  }

  /** When the cluster's first node started: no event of the cluster is older. */
  get clusterCreatedAt(): Date {
    return this.identity.createdAt;
  }

  /** The drain time: a stop (and a rebalancing handoff) ends within it (see stop). */
  get drainTimeoutMs(): number {
    return this.options.drainTimeoutMs;
  }

  /** The end of the drain time kept for what follows the effects' wait. */
  get handoffTimeoutMs(): number {
    return this.options.handoffTimeoutMs;
  }

  /** This node's id. */
  get nodeId(): string {
    return this.options.nodeId;
  }

  /**
   * The first tokens of the cluster's subjects (`<prefix>.<clusterId>` in
   * cluster mode): it also names what the cluster's nodes share on the broker
   * (durable consumers).
   */
  get subjectPrefix(): string {
    return this.options.subjectPrefix;
  }

  /** The JetStream stream (or embedded log stream) of the runtime's own events (`<stream>_<clusterId>` in cluster mode). */
  get eventStream(): string {
    return this.options.eventStream;
  }

  /** AGENTRT_SUBJECT_PREFIX as configured: the durable consumers of earlier versions were named from it alone. */
  get configuredSubjectPrefix(): string {
    return this.deps.options.subjectPrefix;
  }

  /**
   * The node's bus (in process, or core NATS in cluster mode), for news
   * between nodes that is neither a command nor a stored event (the
   * objectives' live feed). Closed by `stop()`.
   */
  get bus(): Bus {
    return this.deps.bus;
  }

  /** Whether the events this runtime publishes reach the bus's subscribers of their subjects too (ActorRuntimeDeps.eventsOnBus). */
  get eventsOnBus(): boolean {
    return this.deps.eventsOnBus === true;
  }

  /**
   * Calls `listener` with the actor's kind and id after each turn of this
   * node that committed events (its read model holds them then), on the
   * turn's path: it must be quick and must not throw. Returns the way to stop.
   */
  onEventsCommitted(listener: (kind: string, actorId: string) => void): () => void {
    this.commitListeners.add(listener);
    return () => void this.commitListeners.delete(listener);
  }

  /** See ActorClient.ask. */
  ask<Reply = unknown>(kind: string, id: string, message: unknown, options?: CallOptions): Promise<Reply> {
    return this.client.ask<Reply>(kind, id, message, options);
  }

  /**
   * Activates an actor ahead of a message it will get shortly (a scheduled
   * objective's start), so that message finds its recovery read done. Best
   * effort: an actor of another node is notified, and a failure is ignored.
   */
  activate(kind: string, id: string): void {
    let shard: number;
    try {
      ({ shard } = actorAddress(kind, id, this.options.shardCount));
    } catch {
      return; // Not an actor id: nothing to ready (its message, if any, gets the error).
    }
    if (this.host.deliver(kind, id, shard, { type: 'wake', done: () => undefined })) return;
    void this.client.notifyStored(kind, id).catch(() => undefined);
  }

  /** See ActorClient.tell. */
  tell(kind: string, id: string, message: unknown, options?: CallOptions): Promise<void> {
    return this.client.tell(kind, id, message, options);
  }

  /** See ActorClient.send (durable). */
  send(kind: string, id: string, message: unknown, options?: CallOptions): Promise<string> {
    return this.client.send(kind, id, message, options);
  }

  /**
   * Consumes a stream through a durable consumer shared by all nodes (each
   * message to one node at a time, at least once); stopped with the runtime.
   * @throws FailedPreconditionError when this runtime was built without consumers.
   */
  async consume(spec: DurableConsumerSpec, handler: (event: ConsumedEvent) => Promise<void>): Promise<ConsumerHandle> {
    if (!this.deps.consumers) throw new FailedPreconditionError('this runtime has no durable consumers');
    await this.relay.prepare();
    const handle = await this.deps.consumers.consume(spec, handler);
    this.consumerHandles.add(handle);
    return {
      stop: async () => {
        this.consumerHandles.delete(handle);
        await handle.stop();
      },
    };
  }

  /**
   * Stops `job` when the runtime stops, first, with the consumers: a node's
   * own periodic work (the episodic memory sweeper) lives as long as the runtime.
   */
  stopWith(job: { stop(): Promise<void> }): void {
    this.consumerHandles.add(job);
  }

  /** Shards owned by this node now. */
  ownedShards(): number[] {
    return this.host.owned();
  }

  /** Entities active on this node now. */
  activeActors(): number {
    return this.host.activeActors();
  }

  /** Effect runs in progress on this node now. */
  runningEffects(): number {
    return this.host.runningEffects();
  }

  /** Runs a balancing round now (tests and operators; the loop runs it anyway). */
  rebalance(): Promise<void> {
    return this.balancer.round();
  }

  /** Publishes what the outbox holds for this node's shards now. */
  flushOutbox(): Promise<void> {
    return this.relay.flush();
  }

  /**
   * How many events of these actors still wait in the outbox: an erasure
   * purges a stream only once none does, or the relay would publish the
   * content again after the purge.
   */
  unpublishedEventCount(kind: string, ids: readonly string[]): Promise<number> {
    return this.outbox.countUnpublishedOf(ids.map((id) => persistenceKey(kind, id)));
  }

  /**
   * Removes the stream's messages whose subject one of the filters takes (an erasure).
   * @throws FailedPreconditionError when this runtime's publisher cannot purge.
   */
  async purgeEvents(stream: string, filters: readonly string[]): Promise<void> {
    if (!this.deps.publisher.purgeSubjects) throw new FailedPreconditionError('this runtime\'s event publisher cannot purge');
    await this.deps.publisher.purgeSubjects(stream, filters);
  }

  /** The live members and their shards (the operator view). */
  clusterStatus(): Promise<ClusterStatus> {
    return readClusterStatus(this.deps.database, this.options);
  }

  /**
   * Graceful stop (SIGTERM), done by `endsAt` (ms since the epoch; default:
   * the drain time from now): stops polling, hands every shard off (running
   * effects finish until handoffTimeoutMs before the end and their outcomes
   * are applied, mailboxes drained, actors snapshotted), releases the leases,
   * leaves the membership and closes the bus and the pool in the last moment
   * kept for them (CLOSING_RESERVE_MS). Idempotent.
   */
  stop(endsAt = Date.now() + this.options.drainTimeoutMs): Promise<void> {
    this.stopping ??= this.shutdown(endsAt);
    return this.stopping;
  }

  /** Tells the commit listeners of one turn's rows (all of one actor: `actorKey`). */
  private tellCommitted(actorKey: string | null | undefined): void {
    if (!actorKey) return;
    const kind = kindOfPersistenceKey(actorKey);
    const actorId = actorKey.slice(kind.length + 1);
    for (const listener of this.commitListeners) {
      try {
        listener(kind, actorId);
      } catch (error) {
        this.logger.warn({ err: error }, 'a listener of committed events failed');
      }
    }
  }

  /** Postgres back: take shards again now (and publish what waited), not at the next round's tick. */
  private followHealth(): void {
    // A lease session lost is the first sign of a database outage when no request or loop has failed yet.
    this.deps.leases.onLost(() => this.deps.health?.verify('postgres'));
    this.stopFollowingHealth = this.deps.health?.onChange((dependency, up) => {
      if (dependency !== 'postgres' || !up || this.stopping) return;
      void this.balancer.round();
      this.relay.readBacklog();
    });
  }

  // Events still in the outbox after the handoff are published by the shards' next owners.
  private async shutdown(endsAt: number): Promise<void> {
    this.stopFollowingHealth?.();
    // Consumers first: no new message reaches an actor that is being handed off.
    await Promise.all([...this.consumerHandles].map((handle) => handle.stop().catch(() => undefined)));
    await this.poller.stop();
    await this.sweeper.stop();
    await this.relay.stop();
    await this.balancer.stop(endsAt - Math.min(CLOSING_RESERVE_MS, this.options.handoffTimeoutMs / 2));
    stopActor(this.system);
    await this.deps.bus.close();
    await this.deps.publisher.close();
    await this.deps.database.close();
    await this.deps.onStopped?.();
  }
}
