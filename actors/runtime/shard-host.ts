// The shards this node owns right now: for each, a router actor, a bus
// subscription and the fencing epoch of the lease. Opening a shard activates
// every actor of it with unfinished work (effects in flight, commands pending,
// reminders due), with bounded concurrency. A shard is handed off gracefully
// (stop taking messages, let its effects finish and record their outcomes,
// drain mailboxes, snapshot) or dropped at once when the lease is lost or a
// write finds the fence moved. The host also runs the actors' effects and
// records their outcomes.
import { InvalidArgumentError, toApiError } from '../../src/errors';
import type { ActorKind, EffectOutcome } from '../../src/ports/actor-behavior';
import { RequestTimeoutError, type Bus, type BusMessage, type BusSubscription } from '../../src/ports/bus';
import { actorAddress, persistenceKey, shardSubject } from '../../src/sharding/addressing';
import { isRetryable, ShardFencedError, ShardMovedError } from '../../src/sharding/sharding.errors';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { OutboxEvent } from '../../persistence/runtime/actor-outbox.repository';
import type { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import type { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import type { ActorWorkRepository } from '../../persistence/runtime/actor-work.repository';
import type { CommandInsert, Fence, TurnWriter } from '../../persistence/runtime/turn-writer';
import { runtimeMetrics } from '../metrics';
import { dispatch, spawnActor, stopActor, type ActorRef, type SystemRef } from '../nact/nact';
import type { RuntimeOptions } from '../runtime-options';
import { EffectRunner, type EffectRun } from './effect-runner';
import { abandonMessage, effectOutcomeCommand, entityFunction, type EntityMessage, type EntityReply } from './entity.actor';
import { RecoveryQueue } from './recovery-queue';
import type { RuntimeLogger } from './runtime-logger';
import { abandonRouterMessage, routerFunction, type RouterMessage } from './shard-router.actor';
import { errorReply, type WireReply, type WireRequest } from './wire';

interface ShardSlot {
  shard: number;
  epoch: number;
  router: ActorRef<RouterMessage>;
  subscription: BusSubscription;
  accepting: boolean;
  /** Set while the shard is handed off: its end can be brought forward (a stop during a rebalancing handoff). */
  handoff?: { done: Promise<void>; bringForward: (endsAt: number) => void };
}

/** Resolves once its time (ms since the epoch) has come; the time can be brought forward. */
class Alarm {
  readonly rung: Promise<void>;
  private ring!: () => void;
  private timer: NodeJS.Timeout | undefined;

  constructor(private at: number) {
    this.rung = new Promise((resolve) => (this.ring = resolve));
    this.arm();
  }

  bringForward(at: number): void {
    if (at >= this.at) return;
    this.at = at;
    this.arm();
  }

  cancel(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.ring, Math.max(0, this.at - Date.now()));
  }
}

export interface ShardHostDeps {
  system: SystemRef;
  bus: Bus;
  kinds: ReadonlyMap<string, ActorKind>;
  journal: ActorJournalRepository;
  commands: ActorCommandRepository;
  reminders: ActorReminderRepository;
  work: ActorWorkRepository;
  writer: TurnWriter;
  options: RuntimeOptions;
  logger: RuntimeLogger;
  /** Called with the outbox rows an entity's turn committed. */
  onPublished: (rows: OutboxEvent[]) => void;
  /** Called when the node starts serving a shard, before its actors run (its previous owner may have left events). */
  onShardOpened: (shard: number) => void;
  /** Called with the durable commands a turn sent to other actors, after commit. */
  onSent: (sends: CommandInsert[]) => void;
  /** Called after a shard was dropped because a write found its fence moved (release the lease). */
  onShardLost: (shard: number) => void;
}

const RESULT_RETRY_MS = 1000;

function wireReply(reply: EntityReply): WireReply {
  return reply.ok ? reply : errorReply(reply.error, isRetryable(reply.error));
}

/** Owned shards and their actors on this node. */
export class ShardHost {
  private readonly slots = new Map<number, ShardSlot>();
  private readonly effects: EffectRunner;
  private readonly recoveries: RecoveryQueue;
  private active = 0;

  constructor(private readonly deps: ShardHostDeps) {
    this.effects = new EffectRunner({ kinds: deps.kinds, onOutcome: (run, outcome) => this.recordOutcome(run, outcome) });
    this.recoveries = new RecoveryQueue(deps.options.recoveryConcurrency);
  }

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

  /** Effect runs in progress on this node. */
  runningEffects(): number {
    return this.effects.running();
  }

  /** Recoveries queued or in progress. */
  pendingRecoveries(): number {
    return this.recoveries.size();
  }

  /** Starts serving a shard whose lease is held with `epoch`, and activates its actors with unfinished work. */
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
    this.deps.onShardOpened(shard);
    runtimeMetrics.ownedShards.set(this.slots.size);
    void this.resumeShard(shard, epoch);
  }

  /**
   * Hands a shard off, done by `endsAt` (ms since the epoch; default: the
   * drain time from now): stops taking messages (callers get a retryable
   * "moved" reply at once) and starting effects, lets the effects running
   * finish (each within its deadline, all until `handoffTimeoutMs` before the
   * end) and records their outcomes under this owner's fence, the actors
   * applying them (an effect their turns start is only journaled: the next
   * owner starts it). Effects still running then are abandoned (the next owner
   * runs them again). Then drains every mailbox and snapshots (until the end),
   * unsubscribes and stops the actors. The caller then releases the lease. A
   * second call while the shard is handed off may bring its end forward.
   */
  handoff(shard: number, endsAt = Date.now() + this.deps.options.drainTimeoutMs): Promise<void> {
    const slot = this.slots.get(shard);
    if (!slot) return Promise.resolve();
    if (slot.handoff) {
      slot.handoff.bringForward(endsAt);
      return slot.handoff.done;
    }
    const effectsEnd = new Alarm(endsAt - this.deps.options.handoffTimeoutMs);
    const handoffEnd = new Alarm(endsAt);
    const bringForward = (earlier: number) => {
      effectsEnd.bringForward(earlier - this.deps.options.handoffTimeoutMs);
      handoffEnd.bringForward(earlier);
    };
    const done = this.handOver(slot, effectsEnd, handoffEnd).finally(() => {
      effectsEnd.cancel();
      handoffEnd.cancel();
    });
    slot.handoff = { done, bringForward };
    return done;
  }

  private async handOver(slot: ShardSlot, effectsEnd: Alarm, handoffEnd: Alarm): Promise<void> {
    const { shard } = slot;
    slot.accepting = false;
    this.effects.holdShard(shard);
    const finished = await Promise.race([this.effects.whenShardIdle(shard).then(() => true), effectsEnd.rung.then(() => false)]);
    // Dropped meanwhile (lease lost): nothing is left to hand over.
    if (this.slots.get(shard) !== slot) return;
    if (!finished) {
      this.deps.logger.warn({ shard }, 'effects still running at the end of the drain time: the next owner runs them again');
      this.effects.abandonShard(shard);
    }
    const errors = await this.drain(slot, handoffEnd);
    if (errors.length) this.deps.logger.warn({ shard, errors: errors.map(String) }, 'handoff snapshot failed for some actors');
    if (this.slots.get(shard) !== slot) return;
    slot.subscription.unsubscribe();
    this.close(slot);
  }

  /** Drops a shard at once (lease lost, fence moved): no snapshot, effects abandoned, actors stop now. */
  abandon(shard: number): void {
    const slot = this.slots.get(shard);
    if (!slot) return;
    slot.accepting = false;
    this.effects.abandonShard(shard);
    slot.subscription.unsubscribe();
    this.close(slot);
  }

  /** Drops every shard (lease session lost). */
  abandonAll(): void {
    for (const shard of this.owned()) this.abandon(shard);
  }

  /**
   * Delivers a message from this node's own machinery (an effect outcome) to
   * an entity of a shard it still holds, also while the shard is handed off.
   * @returns false when the shard is not held.
   */
  private deliverInternally(kind: string, id: string, shard: number, message: EntityMessage): boolean {
    const slot = this.slots.get(shard);
    if (!slot) return false;
    dispatch(slot.router, { type: 'deliver', kind, id, message });
    return true;
  }

  /**
   * Delivers a message to a local entity of an owned shard.
   * @returns false when the shard is not owned (or is being handed off).
   */
  deliver(kind: string, id: string, shard: number, message: EntityMessage): boolean {
    const slot = this.slots.get(shard);
    if (!slot?.accepting || !this.deps.kinds.has(kind)) return false;
    dispatch(slot.router, { type: 'deliver', kind, id, message });
    return true;
  }

  /** Activates the shard's actors with unfinished work, a bounded number at a time. */
  private async resumeShard(shard: number, epoch: number): Promise<void> {
    let actors: Array<{ kind: string; actorId: string }>;
    try {
      actors = await this.deps.work.listActorsWithWork(shard, [...this.deps.kinds.keys()]);
    } catch (error) {
      // The pollers still find pending commands and due reminders; effects in flight wait for the next message or owner.
      this.deps.logger.warn({ err: error, shard }, 'could not read the actors to resume');
      return;
    }
    for (const actor of actors) {
      this.recoveries.push(
        () =>
          new Promise<void>((resolve) => {
            if (this.slots.get(shard)?.epoch !== epoch) return resolve();
            runtimeMetrics.recoveries.inc();
            if (!this.deliver(actor.kind, actor.actorId, shard, { type: 'wake', done: resolve })) resolve();
          }),
      );
    }
  }

  /**
   * Records an effect's outcome as a durable command under the fence of its
   * run, then wakes the actor. A stale fence means another node owns the
   * actor now: the outcome is refused (that node runs the effect again).
   */
  private async recordOutcome(run: EffectRun, outcome: EffectOutcome): Promise<void> {
    const command = effectOutcomeCommand(run.key, outcome);
    if (run.effect.durableResult === false) {
      // Not stored: the runner keeps it until a committed turn applied it; an activation before that applies it first.
      const handedOver: EntityMessage = { type: 'stored', command: { id: command.id, kind: run.kind, actorId: run.actorId, payload: command.payload, unstored: true } };
      if (!this.deliverInternally(run.kind, run.actorId, run.fence.shard, handedOver)) this.effects.settle(run.key, outcome.id, outcome.attempt);
      return;
    }
    for (;;) {
      try {
        const stored = { id: command.id, kind: run.kind, actorId: run.actorId, payload: command.payload };
        await this.deps.commands.insertFenced({ ...stored, shard: run.fence.shard }, run.fence);
        this.deliverInternally(run.kind, run.actorId, run.fence.shard, { type: 'stored', command: stored });
        return;
      } catch (error) {
        if (error instanceof ShardFencedError) {
          runtimeMetrics.staleEffectResults.inc();
          this.deps.logger.warn({ key: run.key, effect: outcome.id, shard: run.fence.shard }, 'effect result refused: the shard moved on while it ran');
          return;
        }
        if (this.slots.get(run.fence.shard)?.epoch !== run.fence.epoch) return;
        this.deps.logger.warn({ err: error, key: run.key, effect: outcome.id }, 'could not record an effect result; retrying');
        await new Promise((resolve) => setTimeout(resolve, RESULT_RETRY_MS));
      }
    }
  }

  /** Drains the shard's mailboxes behind a barrier and snapshots its actors, until `end` rings. */
  private drain(slot: ShardSlot, end: Alarm): Promise<unknown[]> {
    return new Promise((resolve) => {
      void end.rung.then(() => resolve([new Error(`drain of shard ${slot.shard} timed out`)]));
      dispatch(slot.router, { type: 'drain', done: resolve });
    });
  }

  private close(slot: ShardSlot): void {
    stopActor(slot.router);
    this.effects.releaseShard(slot.shard);
    this.slots.delete(slot.shard);
    runtimeMetrics.ownedShards.set(this.slots.size);
  }

  private shardFenced(shard: number): void {
    if (!this.slots.has(shard)) return;
    this.deps.logger.warn({ shard }, 'a write found the shard taken over: dropping it');
    this.abandon(shard);
    this.deps.onShardLost(shard);
  }

  private spawnEntity(router: ActorRef<RouterMessage>, kind: string, id: string, name: string, shard: number, epoch: number): ActorRef<EntityMessage> {
    const actorKind = this.deps.kinds.get(kind)!;
    const key = persistenceKey(kind, id);
    const { options } = this.deps;
    const child = spawnActor(
      router,
      entityFunction({
        kind: actorKind,
        id,
        key,
        fence: { shard, epoch },
        journal: this.deps.journal,
        commands: this.deps.commands,
        reminders: this.deps.reminders,
        writer: this.deps.writer,
        effects: this.effects,
        snapshotEvery: options.snapshotEvery,
        retryWindowMs: options.askTimeoutMs,
        shardCount: options.shardCount,
        eventSubject: `${options.subjectPrefix}.events.${kind}.${id}`,
        reminderPollMs: options.reminderPollMs,
        nodeId: options.nodeId,
        logger: this.deps.logger,
        onPublished: this.deps.onPublished,
        onSent: this.deps.onSent,
        onFenced: (lost) => this.shardFenced(lost),
      }),
      name,
      {
        initialState: null,
        shutdownAfterMs: options.passivateAfterMs,
        // An actor passivated with effects running would be woken by their outcomes anyway, recovering for nothing.
        keepAlive: () => this.effects.activeFor(key) > 0,
        afterStop: () => this.entityStopped(kind),
        onCrash: (error) => {
          this.deps.logger.warn({ err: error, key }, 'actor stopped after a failed turn');
          this.wakeForHeldOutcomes(kind, id, key, { shard, epoch });
        },
        onUnhandled: (messages) => {
          runtimeMetrics.mailboxDepth.dec(messages.length);
          this.answerUnhandled(messages, (message) => abandonMessage(message, shard));
        },
      },
    );
    this.active++;
    runtimeMetrics.activeActors.inc({ kind });
    runtimeMetrics.activations.inc({ kind });
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

  /**
   * An actor that stopped on a failed turn may have lost outcomes handed over
   * in memory with it: it is woken (after a pause, the database may be down)
   * while the runner still holds any, and its activation applies them.
   */
  private wakeForHeldOutcomes(kind: string, id: string, key: string, fence: Fence): void {
    setTimeout(() => {
      if (this.slots.get(fence.shard)?.epoch !== fence.epoch || this.effects.heldOutcomes(key).length === 0) return;
      this.deliverInternally(kind, id, fence.shard, { type: 'wake', done: () => undefined });
    }, RESULT_RETRY_MS).unref();
  }

  private entityStopped(kind: string): void {
    this.active--;
    runtimeMetrics.activeActors.dec({ kind });
    runtimeMetrics.passivations.inc({ kind });
  }

  /**
   * A request for an actor of a shard this node serves, handled here without
   * the bus: the same wire text in and out (so the actor and the caller never
   * share objects), without the two bus hops. null when the shard is not
   * served here (the caller goes through the bus).
   * @throws RequestTimeoutError (rejected) when no reply came within `timeoutMs`
   */
  requestLocally(shard: number, request: string, timeoutMs: number): Promise<string> | null {
    if (!this.slots.get(shard)?.accepting) return null;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new RequestTimeoutError(`shard ${shard} (this node)`, timeoutMs)), timeoutMs);
      // On the next turn of the event loop, as a bus message would come: a tell is answered at
      // once, and a caller telling in a loop must not starve timers and I/O (its mailboxes would grow without end).
      setImmediate(() =>
        this.onBusMessage(shard, {
          subject: '',
          data: request,
          respond: (reply) => {
            clearTimeout(timer);
            resolve(reply);
          },
        }),
      );
    });
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
    if (!this.deps.kinds.has(request.kind)) {
      message.respond(JSON.stringify(errorReply(InvalidArgumentError.forField('kind', `unknown actor kind ${request.kind}`), false)));
      return;
    }
    this.accept(shard, request, message);
  }

  private accept(shard: number, request: WireRequest, message: BusMessage): void {
    const respond = (reply: EntityReply) => message.respond(JSON.stringify(wireReply(reply)));
    const entityMessage: EntityMessage = request.durable
      ? { type: 'stored' }
      : {
        type: 'command', cid: request.cid, command: request.body, reply: request.type === 'ask' ? respond : undefined, traceparent: request.traceparent,
        ...(request.newActor ? { newActor: true } : {}),
      };
    if (!this.deliver(request.kind, request.id, shard, entityMessage)) {
      respond({ ok: false, error: new ShardMovedError(shard) });
      return;
    }
    if (request.type === 'tell') respond({ ok: true, value: null });
  }
}
