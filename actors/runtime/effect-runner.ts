// Runs effects outside the actors' turns. A run gets an AbortSignal and a
// deadline; its outcome is handed to `onOutcome` (which records it as a
// durable command under the fence of the run) unless the run was abandoned:
// aborted by its actor, or dropped because this node gave up the shard, in
// which case the next owner decides what to do with it. A run counts as in
// progress until its outcome is safe: stored (durable), or applied by a
// committed turn of its actor (handed over in memory), so that an activation
// meanwhile never takes it for lost and starts it again. A shard being handed
// off holds back new runs: its actors' journals keep them as started, and the
// next owner starts them.
import { toApiError } from '../../src/errors';
import { runInTrace, tracingEnabled } from '../../src/tracing/tracing';
import type { ActorKind, EffectOutcome, RunningEffect } from '../../src/ports/actor-behavior';
import type { Fence } from '../../persistence/runtime/turn-writer';
import { runtimeMetrics } from '../metrics';

/** One effect run on this node. */
export interface EffectRun {
  kind: string;
  actorId: string;
  key: string;
  fence: Fence;
  effect: RunningEffect;
  /**
   * The span of the turn that started the run (in memory only, never
   * journaled): the handler runs with it as the active parent, so the
   * effect's own span and the requests it sends continue that trace. A run
   * without one runs outside any trace.
   */
  traceparent?: string;
}

export interface EffectRunnerDeps {
  kinds: ReadonlyMap<string, ActorKind>;
  /**
   * Called once per run that finished while still wanted. A durable outcome's
   * run stays in progress until the returned promise settles (it is stored);
   * an in-memory one's until its actor `settle`s it.
   */
  onOutcome: (run: EffectRun, outcome: EffectOutcome) => void | Promise<void>;
}

interface LiveRun extends EffectRun {
  controller: AbortController;
  abandoned: boolean;
  deadlineHit: boolean;
  /** Set once the run returned: its outcome is being stored, or waits for its actor's turn. */
  outcome?: EffectOutcome;
}

class DeadlineReached extends Error {}

/** The effects running on this node, by actor key and effect id. */
export class EffectRunner {
  private readonly runs = new Map<string, Map<string, LiveRun>>();
  private readonly perShard = new Map<number, number>();
  private readonly heldShards = new Set<number>();
  private readonly idleWaiters = new Map<number, Array<() => void>>();
  private count = 0;

  constructor(private readonly deps: EffectRunnerDeps) {}

  /** True while a run of `effectId` for `key` is in progress on this node, or its outcome is not safe yet. */
  isRunning(key: string, effectId: string): boolean {
    return this.runs.get(key)?.has(effectId) ?? false;
  }

  /** Number of runs in progress (outcomes not yet safe included). */
  running(): number {
    return this.count;
  }

  /** Runs of this actor in progress: an actor with any must not passivate (its outcome would wake a new activation). */
  activeFor(key: string): number {
    return this.runs.get(key)?.size ?? 0;
  }

  /** Outcomes handed over in memory that no committed turn of the actor has applied yet (a new activation applies them first). */
  heldOutcomes(key: string): EffectOutcome[] {
    const held: EffectOutcome[] = [];
    for (const live of this.runs.get(key)?.values() ?? []) if (live.outcome && live.effect.durableResult === false) held.push(live.outcome);
    return held;
  }

  /** A turn applying (or ignoring) this in-memory outcome committed: the run is over. */
  settle(key: string, effectId: string, attempt: number): void {
    const live = this.runs.get(key)?.get(effectId);
    if (live?.outcome && live.effect.attempt === attempt) this.forget(live);
  }

  /** Starts a run; a run of the same effect still in progress is abandoned first. Not started while its shard is handed off. */
  start(run: EffectRun): void {
    this.abandon(run.key, run.effect.id);
    if (this.heldShards.has(run.fence.shard)) return;
    const live: LiveRun = { ...run, controller: new AbortController(), abandoned: false, deadlineHit: false };
    let ofActor = this.runs.get(run.key);
    if (!ofActor) this.runs.set(run.key, (ofActor = new Map()));
    ofActor.set(run.effect.id, live);
    this.count++;
    this.perShard.set(run.fence.shard, (this.perShard.get(run.fence.shard) ?? 0) + 1);
    runtimeMetrics.effectsRunning.inc();
    void this.execute(live);
  }

  /** Aborts a run whose result is no longer wanted (the actor aborted it). */
  abandon(key: string, effectId: string): void {
    const live = this.runs.get(key)?.get(effectId);
    if (!live) return;
    live.abandoned = true;
    live.controller.abort(new Error('effect aborted'));
    this.forget(live);
  }

  /** Aborts every run of a shard this node no longer serves; the next owner finds them unfinished. */
  abandonShard(shard: number): void {
    for (const ofActor of [...this.runs.values()]) for (const live of [...ofActor.values()]) if (live.fence.shard === shard) this.abandon(live.key, live.effect.id);
  }

  /** Holds back the new runs of a shard being handed off (see the module comment), until `releaseShard`. */
  holdShard(shard: number): void {
    this.heldShards.add(shard);
  }

  releaseShard(shard: number): void {
    this.heldShards.delete(shard);
  }

  /** Resolves once no run of the shard is in progress and every outcome of its runs is safe. */
  whenShardIdle(shard: number): Promise<void> {
    if (!this.perShard.get(shard)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.idleWaiters.get(shard);
      if (waiters) waiters.push(resolve);
      else this.idleWaiters.set(shard, [resolve]);
    });
  }

  private async execute(live: LiveRun): Promise<void> {
    const { effect } = live;
    // The outcome (stored as a command when durable) names the run without its transient input.
    const ran = withoutTransientInput(effect);
    const deadline = new Date(Date.now() + effect.timeoutMs);
    const timer = setTimeout(() => {
      live.deadlineHit = true;
      live.controller.abort(new DeadlineReached(`effect ${effect.name} passed its ${effect.timeoutMs} ms deadline`));
    }, effect.timeoutMs);
    let outcome: EffectOutcome;
    try {
      const handler = this.deps.kinds.get(live.kind)?.effects?.[effect.name];
      if (!handler) throw new Error(`actor kind ${live.kind} has no effect handler named ${effect.name}`);
      const context = {
        signal: live.controller.signal, deadline, effectId: effect.id, attempt: effect.attempt, actorId: live.actorId,
        ...(effect.transientInput !== undefined ? { transientInput: effect.transientInput } : {}),
      };
      // The run continues its turn's trace; checked first, so a node not tracing wraps nothing.
      const value = await (tracingEnabled() ? runInTrace(live.traceparent, () => handler(effect.input, context)) : handler(effect.input, context));
      if (live.deadlineHit) throw new DeadlineReached(`effect ${effect.name} passed its ${effect.timeoutMs} ms deadline`);
      outcome = { ...ran, ok: true, value: value ?? null };
    } catch (error) {
      if (!live.abandoned) runtimeMetrics.effectFailures.inc({ kind: live.kind });
      outcome = { ...ran, ok: false, error: live.deadlineHit ? { code: 'DEADLINE_EXCEEDED', message: `effect ${effect.name} passed its ${effect.timeoutMs} ms deadline` } : effectError(error) };
    } finally {
      clearTimeout(timer);
    }
    if (live.abandoned) return;
    live.outcome = outcome;
    if (live.effect.durableResult === false) {
      // In progress until its actor's turn settles it (a crashed turn leaves it for the next activation).
      this.deps.onOutcome(live, outcome);
      return;
    }
    try {
      await this.deps.onOutcome(live, outcome);
    } finally {
      this.forget(live);
    }
  }

  private forget(live: LiveRun): void {
    const ofActor = this.runs.get(live.key);
    if (ofActor?.get(live.effect.id) !== live) return;
    ofActor.delete(live.effect.id);
    if (ofActor.size === 0) this.runs.delete(live.key);
    this.count--;
    runtimeMetrics.effectsRunning.dec();
    const left = (this.perShard.get(live.fence.shard) ?? 1) - 1;
    if (left > 0) {
      this.perShard.set(live.fence.shard, left);
      return;
    }
    this.perShard.delete(live.fence.shard);
    const waiters = this.idleWaiters.get(live.fence.shard);
    this.idleWaiters.delete(live.fence.shard);
    for (const resolve of waiters ?? []) resolve();
  }
}

/** The effect as the journal, the envelope and the stored outcome keep it: without its transient input (in memory only). */
export function withoutTransientInput(effect: RunningEffect): RunningEffect {
  if (effect.transientInput === undefined) return effect;
  const { transientInput: _inMemoryOnly, ...kept } = effect;
  return kept;
}

function effectError(error: unknown): { code: string; message: string; details?: unknown[] } {
  const status = toApiError(error);
  // toApiError hides the message of unknown errors (INTERNAL); an effect's own message is what the behaviour needs to decide.
  const message = status.code === 'INTERNAL' && error instanceof Error ? error.message : status.message;
  return status.details.length ? { code: status.code, message, details: status.details } : { code: status.code, message };
}
