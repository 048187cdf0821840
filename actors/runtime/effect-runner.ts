// Runs effects outside the actors' turns. A run gets an AbortSignal and a
// deadline; its outcome is handed to `onOutcome` (which records it as a
// durable command under the fence of the run) unless the run was abandoned:
// aborted by its actor, or dropped because this node gave up the shard, in
// which case the next owner decides what to do with it.
import { toApiError } from '../../src/errors';
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
}

export interface EffectRunnerDeps {
  kinds: ReadonlyMap<string, ActorKind>;
  /** Called once per run that finished while still wanted. */
  onOutcome: (run: EffectRun, outcome: EffectOutcome) => void;
}

interface LiveRun extends EffectRun {
  controller: AbortController;
  abandoned: boolean;
  deadlineHit: boolean;
}

class DeadlineReached extends Error {}

/** The effects running on this node, by actor key and effect id. */
export class EffectRunner {
  private readonly runs = new Map<string, LiveRun>();

  constructor(private readonly deps: EffectRunnerDeps) {}

  /** True while a run of `effectId` for `key` is in progress on this node. */
  isRunning(key: string, effectId: string): boolean {
    return this.runs.has(runKey(key, effectId));
  }

  /** Number of runs in progress. */
  running(): number {
    return this.runs.size;
  }

  /** Starts a run; a run of the same effect still in progress is abandoned first. */
  start(run: EffectRun): void {
    this.abandon(run.key, run.effect.id);
    const live: LiveRun = { ...run, controller: new AbortController(), abandoned: false, deadlineHit: false };
    this.runs.set(runKey(run.key, run.effect.id), live);
    runtimeMetrics.effectsRunning.inc();
    void this.execute(live);
  }

  /** Aborts a run whose result is no longer wanted (the actor aborted it). */
  abandon(key: string, effectId: string): void {
    const live = this.runs.get(runKey(key, effectId));
    if (!live) return;
    live.abandoned = true;
    live.controller.abort(new Error('effect aborted'));
    this.forget(live);
  }

  /** Aborts every run of a shard this node no longer serves; the next owner finds them unfinished. */
  abandonShard(shard: number): void {
    for (const live of [...this.runs.values()]) if (live.fence.shard === shard) this.abandon(live.key, live.effect.id);
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
      const value = await handler(effect.input, {
        signal: live.controller.signal, deadline, effectId: effect.id, attempt: effect.attempt, actorId: live.actorId,
        ...(effect.transientInput !== undefined ? { transientInput: effect.transientInput } : {}),
      });
      if (live.deadlineHit) throw new DeadlineReached(`effect ${effect.name} passed its ${effect.timeoutMs} ms deadline`);
      outcome = { ...ran, ok: true, value: value ?? null };
    } catch (error) {
      if (!live.abandoned) runtimeMetrics.effectFailures.inc({ kind: live.kind });
      outcome = { ...ran, ok: false, error: live.deadlineHit ? { code: 'DEADLINE_EXCEEDED', message: `effect ${effect.name} passed its ${effect.timeoutMs} ms deadline` } : effectError(error) };
    } finally {
      clearTimeout(timer);
    }
    if (live.abandoned) return;
    this.forget(live);
    this.deps.onOutcome(live, outcome);
  }

  private forget(live: LiveRun): void {
    if (this.runs.get(runKey(live.key, live.effect.id)) !== live) return;
    this.runs.delete(runKey(live.key, live.effect.id));
    runtimeMetrics.effectsRunning.dec();
  }
}

/** The effect as the journal, the envelope and the stored outcome keep it: without its transient input (in memory only). */
export function withoutTransientInput(effect: RunningEffect): RunningEffect {
  if (effect.transientInput === undefined) return effect;
  const { transientInput: _inMemoryOnly, ...kept } = effect;
  return kept;
}

function runKey(key: string, effectId: string): string {
  return `${key}\u0000${effectId}`;
}

function effectError(error: unknown): { code: string; message: string; details?: unknown[] } {
  const status = toApiError(error);
  // toApiError hides the message of unknown errors (INTERNAL); an effect's own message is what the behaviour needs to decide.
  const message = status.code === 'INTERNAL' && error instanceof Error ? error.message : status.message;
  return status.details.length ? { code: status.code, message, details: status.details } : { code: status.code, message };
}
