// The shards this node owns right now: for each, a router actor, a bus
// subscription and the fencing epoch of the lease. Opens a shard after its
// lease is claimed, hands it off gracefully (stop taking messages, drain
// mailboxes, snapshot) or abandons it at once when the lease is lost.
import { toApiError } from '../../src/errors';
import type { AnyActorBehavior } from '../../src/ports/actor-behavior';
import type { Bus, BusMessage, BusSubscription } from '../../src/ports/bus';
import { actorAddress, persistenceKey, shardSubject } from '../../src/sharding/addressing';
import { isRetryable, ShardMovedError } from '../../src/sharding/sharding.errors';
import { InvalidArgumentError } from '../../src/errors';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { ActorJournalRepository, Fence } from '../../persistence/runtime/actor-journal.repository';
import { runtimeMetrics } from '../metrics';
import { dispatch, spawnActor, spawnPersistent, stopActor, type ActorRef, type SystemRef } from '../nact/nact';
import type { RuntimeOptions } from '../runtime-options';
import { abandonMessage, entityFunction, initialEnvelope, type EntityMessage, type EntityReply } from './entity.actor';
import type { RuntimeLogger } from './runtime-logger';
import { abandonRouterMessage, routerFunction, sendToEntity, type RouterMessage } from './shard-router.actor';
import { errorReply, type WireReply, type WireRequest } from './wire';

interface ShardSlot {
  shard: number;
  epoch: number;
  router: ActorRef<RouterMessage>;
  subscription: BusSubscription;
  accepting: boolean;
}

export interface ShardHostDeps {
  system: SystemRef;
  bus: Bus;
  behaviors: ReadonlyMap<string, AnyActorBehavior>;
  journal: ActorJournalRepository;
  commands: ActorCommandRepository;
  options: RuntimeOptions;
  logger: RuntimeLogger;
  /** Called when an entity wrote outbox events (wakes the relay). */
  onPublished: () => void;
}

function wireReply(reply: EntityReply): WireReply {
  return reply.ok ? reply : errorReply(reply.error, isRetryable(reply.error));
}

/** Owned shards and their actors on this node. */
export class ShardHost {
  private readonly slots = new Map<number, ShardSlot>();
  private active = 0;

  constructor(private readonly deps: ShardHostDeps) {}

  /** Shards currently owned, ascending. */
  owned(): number[] {
    return [...this.slots.keys()].sort((a, b) => a - b);
  }

  /** The fence of an owned shard, or undefined. */
  fenceOf(shard: number): Fence | undefined {
    const slot = this.slots.get(shard);
    return slot ? { shard, epoch: slot.epoch } : undefined;
  }

  /** Number of entities active on this node. */
  activeActors(): number {
    return this.active;
  }

  /** Starts serving a shard whose lease is held with `epoch`. */
  open(shard: number, epoch: number): void {
    if (this.slots.has(shard)) throw new Error(`shard ${shard} already open`);
    const spawn = (parent: ActorRef<RouterMessage>, kind: string, id: string, name: string) => this.spawnEntity(parent, kind, id, name, shard, epoch);
    const onError = (error: unknown) => this.deps.logger.error({ err: error, shard }, 'actor activation failed');
    const router = spawnActor(this.deps.system, routerFunction(spawn, onError), `shard-${shard}-${epoch}`, {
      initialState: null,
      onUnhandled: (messages) => this.answerUnhandled(messages, (message) => abandonRouterMessage(message, shard)),
    });
    const subscription = this.deps.bus.subscribe(shardSubject(this.deps.options.subjectPrefix, shard), (message) => this.onBusMessage(shard, message));
    this.slots.set(shard, { shard, epoch, router, subscription, accepting: true });
    runtimeMetrics.ownedShards.set(this.slots.size);
  }

  /**
   * Hands a shard off: stops taking messages (callers get a retryable "moved"
   * reply at once), drains every mailbox (each actor handles what it accepted),
   * snapshots, unsubscribes and stops the actors. The caller then releases the lease.
   */
  async handoff(shard: number): Promise<void> {
    const slot = this.slots.get(shard);
    if (!slot) return;
    slot.accepting = false;
    const errors = await this.drain(slot);
    if (errors.length) this.deps.logger.warn({ shard, errors: errors.map(String) }, 'handoff snapshot failed for some actors');
    slot.subscription.unsubscribe();
    this.close(slot);
  }

  /** Drops a shard at once (lease lost): no snapshot, actors stop now. */
  abandon(shard: number): void {
    const slot = this.slots.get(shard);
    if (!slot) return;
    slot.accepting = false;
    slot.subscription.unsubscribe();
    this.close(slot);
  }

  /** Drops every shard (lease session lost). */
  abandonAll(): void {
    for (const shard of this.owned()) this.abandon(shard);
  }

  /**
   * Delivers a message to a local entity of an owned shard.
   * @returns false when the shard is not owned (or is being handed off).
   */
  deliver(kind: string, id: string, shard: number, message: EntityMessage): boolean {
    const slot = this.slots.get(shard);
    if (!slot?.accepting || !this.deps.behaviors.has(kind)) return false;
    dispatch(slot.router, { type: 'deliver', kind, id, message });
    return true;
  }

  private drain(slot: ShardSlot): Promise<unknown[]> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve([new Error(`drain of shard ${slot.shard} timed out`)]), this.deps.options.handoffTimeoutMs);
      dispatch(slot.router, {
        type: 'drain',
        done: (errors) => {
          clearTimeout(timer);
          resolve(errors);
        },
      });
    });
  }

  private close(slot: ShardSlot): void {
    stopActor(slot.router);
    this.slots.delete(slot.shard);
    runtimeMetrics.ownedShards.set(this.slots.size);
  }

  private spawnEntity(router: ActorRef<RouterMessage>, kind: string, id: string, name: string, shard: number, epoch: number): ActorRef<EntityMessage> {
    const behavior = this.deps.behaviors.get(kind)!;
    const key = persistenceKey(kind, id);
    const deps = {
      behavior,
      id,
      key,
      fence: { shard, epoch },
      journal: this.deps.journal,
      commands: this.deps.commands,
      snapshotEvery: this.deps.options.snapshotEvery,
      retryWindowMs: this.deps.options.askTimeoutMs,
      eventSubject: `${this.deps.options.subjectPrefix}.events.${kind}.${id}`,
      onPublished: this.deps.onPublished,
      onError: (message: string, error: unknown) => this.deps.logger.error({ err: error, key }, message),
    };
    const child = spawnPersistent(router, entityFunction(deps), key, name, {
      initialState: initialEnvelope(behavior, id),
      shutdownAfterMs: this.deps.options.passivateAfterMs,
      afterStop: () => this.entityStopped(kind),
      onCrash: (error) => this.deps.logger.warn({ err: error, key }, 'actor stopped after a failed turn'),
      onUnhandled: (messages) => {
        runtimeMetrics.mailboxDepth.dec(messages.length);
        this.answerUnhandled(messages, (message) => abandonMessage(message, shard));
      },
    });
    this.active++;
    runtimeMetrics.activeActors.inc();
    runtimeMetrics.activations.inc({ kind });
    // Commands stored while the actor was not active come first.
    sendToEntity(child, { type: 'pending', done: () => undefined });
    return child;
  }

  // Runs on nact's afterStop (a setImmediate): a throw here would crash the process.
  private answerUnhandled<M>(messages: M[], answer: (message: M) => void): void {
    for (const message of messages) {
      try {
        answer(message);
      } catch (error) {
        this.deps.logger.warn({ err: error }, 'could not answer a message left by a stopped actor');
      }
    }
  }

  private entityStopped(kind: string): void {
    this.active--;
    runtimeMetrics.activeActors.dec();
    runtimeMetrics.passivations.inc({ kind });
  }

  private onBusMessage(shard: number, message: BusMessage): void {
    let request: WireRequest;
    try {
      request = JSON.parse(message.data) as WireRequest;
      actorAddress(request.kind, request.id, this.deps.options.shardCount);
    } catch (error) {
      message.respond(JSON.stringify(errorReply(toApiError(error instanceof SyntaxError ? new InvalidArgumentError('malformed request') : error), false)));
      return;
    }
    if (!this.deps.behaviors.has(request.kind)) {
      message.respond(JSON.stringify(errorReply(InvalidArgumentError.forField('kind', `unknown actor kind ${request.kind}`), false)));
      return;
    }
    this.accept(shard, request, message);
  }

  private accept(shard: number, request: WireRequest, message: BusMessage): void {
    const respond = (reply: EntityReply) => message.respond(JSON.stringify(wireReply(reply)));
    const command: EntityMessage = {
      type: 'command',
      cid: request.cid,
      command: request.body,
      durable: request.durable,
      reply: request.type === 'ask' ? respond : undefined,
    };
    if (!this.deliver(request.kind, request.id, shard, command)) {
      respond({ ok: false, error: new ShardMovedError(shard) });
      return;
    }
    if (request.type === 'tell') respond({ ok: true, value: null });
  }
}
