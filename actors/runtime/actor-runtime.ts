// The actor runtime of one node, assembled from its ports: a bus, shard
// leases and an event publisher (NATS/Postgres or in-process), over the
// Postgres journal. The public calls are ask/tell/send, clusterStatus and stop.
import type { DataSource } from 'typeorm';
import type { AnyActorBehavior } from '../../src/ports/actor-behavior';
import type { Bus } from '../../src/ports/bus';
import type { EventPublisher } from '../../src/ports/event-publisher';
import type { LeaseProvider } from '../../src/ports/leases';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import { ActorOutboxRepository } from '../../persistence/runtime/actor-outbox.repository';
import { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import { shardOf } from '../../src/sharding/fnv1a32';
import { OutboxRelay } from '../events/outbox-relay';
import { startSystem, stopActor, type SystemRef } from '../nact/nact';
import type { RuntimeOptions } from '../runtime-options';
import { ActorClient, type CallOptions } from './actor-client';
import { readClusterStatus, type ClusterStatus } from './cluster-status';
import { JournalPersistenceEngine } from './journal-engine';
import { ReminderPoller } from './reminder-poller';
import { defaultRuntimeLogger, type RuntimeLogger } from './runtime-logger';
import { ShardBalancer } from './shard-balancer';
import { ShardHost } from './shard-host';

/** What a runtime is built from. */
export interface ActorRuntimeDeps {
  dataSource: DataSource;
  bus: Bus;
  leases: LeaseProvider;
  publisher: EventPublisher;
  behaviors: AnyActorBehavior[];
  options: RuntimeOptions;
  logger?: RuntimeLogger;
  /** Runs last in `stop()` (closes the NATS connection in cluster mode). */
  onStopped?: () => Promise<void>;
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
  private readonly poller: ReminderPoller;
  private readonly client: ActorClient;
  private readonly cluster: ActorClusterRepository;
  private stopping: Promise<void> | undefined;

  private constructor(private readonly deps: ActorRuntimeDeps) {
    const logger = deps.logger ?? defaultRuntimeLogger();
    const { dataSource, options } = deps;
    const journal = new ActorJournalRepository(dataSource, deps.journalIdleTimeoutMs ?? options.leaseTimeoutMs);
    const commands = new ActorCommandRepository(dataSource);
    this.cluster = new ActorClusterRepository(dataSource);
    this.system = startSystem(new JournalPersistenceEngine(journal, (key) => this.host.fenceOf(shardOf(key.slice(key.indexOf(':') + 1), options.shardCount))));
    const behaviors = new Map(deps.behaviors.map((behavior) => [behavior.kind, behavior]));
    this.relay = new OutboxRelay({ outbox: new ActorOutboxRepository(dataSource), publisher: deps.publisher, shards: () => this.host.owned(), pollMs: options.outboxPollMs, logger });
    this.host = new ShardHost({ system: this.system, bus: deps.bus, behaviors, journal, commands, options, logger, onPublished: () => this.relay.nudge() });
    this.balancer = new ShardBalancer({ cluster: this.cluster, leases: deps.leases, host: this.host, options, logger });
    this.poller = new ReminderPoller({ reminders: new ActorReminderRepository(dataSource), commands, host: this.host, pollMs: options.reminderPollMs, logger });
    this.client = new ActorClient({ bus: deps.bus, commands, options, logger });
  }

  /**
   * Starts a node: checks the shard count, joins the membership, takes its
   * first shards, then starts the outbox relay and the reminder poller.
   * @throws FailedPreconditionError when the cluster runs another shard count.
   */
  static async start(deps: ActorRuntimeDeps): Promise<ActorRuntime> {
    const runtime = new ActorRuntime(deps);
    await runtime.cluster.ensureShardCount(deps.options.shardCount);
    await runtime.balancer.start();
    runtime.relay.start();
    runtime.poller.start();
    return runtime;
  }

  /** This node's id. */
  get nodeId(): string {
    return this.deps.options.nodeId;
  }

  /** See ActorClient.ask. */
  ask<Reply = unknown>(kind: string, id: string, message: unknown, options?: CallOptions): Promise<Reply> {
    return this.client.ask<Reply>(kind, id, message, options);
  }

  /** See ActorClient.tell. */
  tell(kind: string, id: string, message: unknown, options?: CallOptions): Promise<void> {
    return this.client.tell(kind, id, message, options);
  }

  /** See ActorClient.send (durable). */
  send(kind: string, id: string, message: unknown, options?: CallOptions): Promise<string> {
    return this.client.send(kind, id, message, options);
  }

  /** Shards owned by this node now. */
  ownedShards(): number[] {
    return this.host.owned();
  }

  /** Entities active on this node now. */
  activeActors(): number {
    return this.host.activeActors();
  }

  /** Runs a balancing round now (tests and operators; the loop runs it anyway). */
  rebalance(): Promise<void> {
    return this.balancer.round();
  }

  /** Publishes what the outbox holds for this node's shards now. */
  flushOutbox(): Promise<void> {
    return this.relay.flush();
  }

  /** The membership table as the operator view. */
  clusterStatus(): Promise<ClusterStatus> {
    return readClusterStatus(this.deps.dataSource, this.deps.options.shardCount);
  }

  /**
   * Graceful stop (SIGTERM): stops polling, hands every shard off (no message
   * accepted is lost: mailboxes drain and actors snapshot), releases the
   * leases, leaves the membership and closes the bus. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  // Events still in the outbox after the handoff are published by the shards' next owners.
  private async shutdown(): Promise<void> {
    await this.poller.stop();
    await this.relay.stop();
    await this.balancer.stop();
    stopActor(this.system);
    await this.deps.bus.close();
    await this.deps.publisher.close();
    await this.deps.onStopped?.();
  }
}
