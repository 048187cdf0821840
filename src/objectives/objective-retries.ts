// Provider trouble pauses an objective instead of ending it (issue 24 item 3):
// a model call that fails with a retryable error (429, 5xx, a network error,
// a time-out) is started again on a durable reminder, after the provider's
// Retry-After or else an exponential backoff with jitter, while the objective
// stays RUNNING and an ERROR event (with `retryAt`) shows the wait. The delay
// is decided here, in the turn, and journaled with the wait, so a replay
// never draws it again; its jitter comes from the objective id and the
// failure's number, so it does not depend on a random source either. Once
// the failures of one model turn would last longer than the retry budget,
// the objective ends FAILED with the provider's last error. Errors that
// trying again cannot cure (400, 401, 403 …) end it at once. A test node may
// run the waits and the budget faster than real time
// (`limits.modelRetryTimeScale`, AGENTRT_MODEL_RETRY_TIME_SCALE); the events
// still name the provider's waits.
import { createHash } from 'node:crypto';
import { ModelCallErrorType, modelCallFailureOf } from '../models/model-call-error';
import type { EffectError, FiredReminder } from '../ports/actor-behavior';
import { failObjective, startModelCall } from './objective-loop';
import { isTerminal, ObjectiveStatus, type ModelCallRetries, type ObjectiveState } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/** The reminder that starts a failed model call again. */
export const MODEL_RETRY_REMINDER = 'model_retry';
/** How long consecutive failures of one model turn are retried when the start sets no budget: 30 minutes. */
export const DEFAULT_MODEL_RETRY_BUDGET_MS = 30 * 60_000;
/** The wait after the first failure without Retry-After; doubled per failure. */
export const MODEL_RETRY_INITIAL_DELAY_MS = 2000;
/** The longest wait without Retry-After. */
export const MODEL_RETRY_MAX_DELAY_MS = 5 * 60_000;
/** ±20 % around the backoff, so objectives failing together do not all call again at once. */
const JITTER = 0.2;

export function modelRetryBudgetMsOf(state: ObjectiveState): number {
  return state.config?.limits.modelRetryBudgetMs ?? DEFAULT_MODEL_RETRY_BUDGET_MS;
}

/** A fraction in [0, 1) drawn from the objective and the failure's number: the same on every replay and node. */
function jitterDraw(objectiveId: string, failure: number): number {
  return createHash('sha256').update(`${objectiveId}:${failure}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The wait before attempt `failure + 1`: the provider's Retry-After when it
 * gave one, else MODEL_RETRY_INITIAL_DELAY_MS doubled per failure up to
 * MODEL_RETRY_MAX_DELAY_MS, ±20 % jitter.
 */
export function modelRetryDelayMs(objectiveId: string, failure: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined && retryAfterMs > 0) return Math.ceil(retryAfterMs);
  const backoff = Math.min(MODEL_RETRY_MAX_DELAY_MS, MODEL_RETRY_INITIAL_DELAY_MS * 2 ** Math.min(failure - 1, 30));
  return Math.round(backoff * (1 - JITTER + 2 * JITTER * jitterDraw(objectiveId, failure)));
}

/**
 * The running model call failed: wait and try again (a retryable error
 * within the budget), or end the objective FAILED with the error.
 */
export function acceptModelCallFailure(turn: ObjectiveTurn, effectId: string, error: EffectError): void {
  const failure = modelCallFailureOf(error);
  const lastError = { message: failure.message, type: failure.type };
  // A failed call the provider reported usage for was paid for: it counts, and its ERROR event shows it.
  if (failure.usage) turn.apply({ type: 'usage_added', usage: failure.usage });
  const usage = failure.usage ? { usage: failure.usage } : {};
  if (failure.type === ModelCallErrorType.CONTEXT_TOO_LONG && turn.config.compaction && !turn.state.contextRetried) {
    return retryAfterForcedCompaction(turn, effectId, failure.message, usage);
  }
  if (!failure.retryable) return failObjective(turn, lastError, usage);
  const now = Date.parse(turn.now);
  const previous = turn.state.modelRetries;
  const failures = (previous?.failures ?? 0) + 1;
  const firstFailedAt = previous?.firstFailedAt ?? turn.now;
  const delayMs = modelRetryDelayMs(turn.config.objectiveId, failures, failure.retryAfterMs);
  const budgetMs = modelRetryBudgetMsOf(turn.state);
  // Waits and budget in the objective's time: real time, unless a test node runs it faster.
  const scale = turn.config.limits.modelRetryTimeScale ?? 1;
  const spentMs = (now - Date.parse(firstFailedAt)) / scale;
  // Waiting past the budget only to give up then would hold the objective for nothing: give up now.
  if (spentMs + delayMs > budgetMs) {
    const seconds = Math.round(spentMs / 1000);
    const failed = failures === 1 ? 'once' : `${failures} times in a row`;
    return failObjective(turn, {
      ...lastError,
      message: `${failure.message} (the model call failed ${failed} over ${seconds} s; its retry budget is ${Math.round(budgetMs / 1000)} s)`,
    }, usage);
  }
  const dueAt = new Date(now + Math.round(delayMs * scale)).toISOString();
  const retries: ModelCallRetries = { failures, firstFailedAt, dueAt };
  turn.apply({ type: 'model_retry_scheduled', effectId, retries });
  turn.record('ERROR', {
    message: `${failure.message}; the model call is tried again at ${dueAt} (in ${Math.ceil(delayMs / 1000)} s, failure ${failures})`,
    type: failure.type,
    retryAt: dueAt,
    ...usage,
  });
  turn.setReminder({ name: MODEL_RETRY_REMINDER, dueAt: new Date(dueAt), payload: { failures } });
}

/**
 * The provider refused the conversation as longer than the model's context
 * (CONTEXT_TOO_LONG): it is compacted whatever the estimate said (tool result
 * clearing and summarization, objective-compaction.ts) and the model call is
 * tried once more at once; an ERROR event without `retryAt` shows it. A second
 * refusal before the model answers fails the objective.
 */
function retryAfterForcedCompaction(turn: ObjectiveTurn, effectId: string, message: string, usage: Record<string, unknown>): void {
  turn.apply({ type: 'model_call_ended', effectId });
  turn.apply({ type: 'context_retry_started' });
  turn.record('ERROR', {
    message: `${message}; the context is compacted and the model call tried once more`,
    type: ModelCallErrorType.CONTEXT_TOO_LONG,
    ...usage,
  });
  startModelCall(turn, { forceCompaction: true });
}

/** Whether the objective waits for a model call retry (nothing else moves it on meanwhile). */
export function awaitsModelRetry(state: ObjectiveState): boolean {
  return !!state.modelRetries?.dueAt && !isTerminal(state.status);
}

/**
 * The retry reminder fired: the model call starts again, with whatever the
 * user sent meanwhile. Matched by the failure's number rather than the due
 * time, so the wait it belongs to is recognised even when the reminder was
 * delivered late or its time moved; anything else is stale.
 */
export function retryModelCall(turn: ObjectiveTurn, reminder: FiredReminder): void {
  const { state } = turn;
  const failures = (reminder.payload as { failures?: unknown } | null)?.failures;
  if (!awaitsModelRetry(state) || state.status !== ObjectiveStatus.RUNNING || state.modelCallEffectId || failures !== state.modelRetries!.failures) return;
  // startModelCall checks the budgets: the failed calls' usage may have used one up meanwhile.
  startModelCall(turn);
}

/** Ends a wait for a retry (the objective ends): its reminder is cancelled. */
export function stopModelRetryWait(turn: ObjectiveTurn): void {
  if (awaitsModelRetry(turn.state)) turn.cancelReminder(MODEL_RETRY_REMINDER);
}
