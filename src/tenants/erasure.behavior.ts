// The `erasure` actor: one durable job per tenant or subject erasure
// (api-decisions.md "Tenants, subjects, uploads"). The DELETE request only
// stores the job (this actor's first turn) and answers; the work runs as the
// job's effect (erasure-run.ts), outside any request: retried on a durable
// reminder with a growing delay until it succeeds, and run again by the node
// that takes the actor over when its node dies mid-way (every step is
// idempotent). Pure: the effect is bound where the kind is composed.
import { NotFoundError } from '../errors';
import type { ActorBehavior, ActorContext, ActorDecision, EffectOutcome, EffectRequest } from '../ports/actor-behavior';

export const ERASURE_KIND = 'erasure';
export const RUN_ERASURE_EFFECT = 'erasure.run';
const RETRY_REMINDER = 'retry';
/** One run's deadline: objectives are erased one ask at a time, the stream purged per objective. */
export const ERASURE_RUN_TIMEOUT_MS = 10 * 60_000;
const FIRST_RETRY_DELAY_MS = 1000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/** What one erasure erases: the objectives naming the tenant or one of the subjects. */
export interface ErasureTarget {
  accountId: string;
  workspaceId: string;
  tenantId?: string;
  subjectIds: string[];
}

export type ErasureStatus = 'ERASURE_STATUS_RUNNING' | 'ERASURE_STATUS_COMPLETED';

/** The job as its actor keeps it (and as the API shows it). */
export interface ErasureJob {
  id: string;
  target: ErasureTarget;
  status: ErasureStatus;
  createdAt: string;
  /** Runs started so far (a run lost with its node is run again as the same run). */
  attempts: number;
  /** The error of the last failed run, while it is retried. */
  lastError: string | null;
  nextAttemptAt: string | null;
  /** Objectives erased, once completed. */
  objectiveCount: number | null;
  completedAt: string | null;
}

/** What the run reports. */
export interface ErasureRunResult {
  objectiveCount: number;
}

export type ErasureCommand = { type: 'start'; target: ErasureTarget } | { type: 'get' };

export type ErasureEvent =
  | { type: 'accepted'; target: ErasureTarget; at: string }
  | { type: 'run_started' }
  | { type: 'run_failed'; error: string; nextAttemptAt: string }
  | { type: 'completed'; objectiveCount: number; at: string };

export type ErasureState = { id: string; job: ErasureJob | null };
type Decision = ActorDecision<ErasureEvent, ErasureJob, never, ErasureState>;

function evolve(state: ErasureState, event: ErasureEvent): ErasureState {
  if (event.type === 'accepted') {
    return {
      ...state,
      job: {
        id: state.id, target: event.target, status: 'ERASURE_STATUS_RUNNING', createdAt: event.at, attempts: 0,
        lastError: null, nextAttemptAt: null, objectiveCount: null, completedAt: null,
      },
    };
  }
  const job = state.job;
  if (!job) return state;
  switch (event.type) {
    case 'run_started':
      return { ...state, job: { ...job, attempts: job.attempts + 1, nextAttemptAt: null } };
    case 'run_failed':
      return { ...state, job: { ...job, lastError: event.error, nextAttemptAt: event.nextAttemptAt } };
    case 'completed':
      return { ...state, job: { ...job, status: 'ERASURE_STATUS_COMPLETED', objectiveCount: event.objectiveCount, completedAt: event.at, lastError: null, nextAttemptAt: null } };
  }
}

/** The next run: its effect id counts the runs, so a run and its retry never share an id. */
function nextRun(state: ErasureState): { events: ErasureEvent[]; start: EffectRequest } {
  const job = state.job!;
  return {
    events: [{ type: 'run_started' }],
    start: { id: `run-${job.attempts + 1}`, name: RUN_ERASURE_EFFECT, input: job.target, timeoutMs: ERASURE_RUN_TIMEOUT_MS },
  };
}

/** 1 s, 2 s, 4 s … up to 5 minutes between failed runs. */
export function erasureRetryDelayMs(failedRuns: number): number {
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, failedRuns - 1), MAX_RETRY_DELAY_MS);
}

export const erasureBehavior: ActorBehavior<ErasureState, ErasureCommand, ErasureEvent, ErasureJob, never> = {
  kind: ERASURE_KIND,
  initialState: (id) => ({ id, job: null }),
  evolve,

  decide(state, command, context: ActorContext): Decision {
    if (command.type === 'get') {
      if (!state.job) throw NotFoundError.resource('erasure', state.id);
      return { reply: state.job };
    }
    // A start repeated (the same request retried) finds the job stored and answers it.
    if (state.job) return { reply: state.job };
    const accepted: ErasureEvent = { type: 'accepted', target: command.target, at: context.now.toISOString() };
    const afterAccept = evolve(state, accepted);
    const run = nextRun(afterAccept);
    return { events: [accepted, ...run.events], reply: afterAccept.job!, effects: { start: [run.start] } };
  },

  onEffectResult(state, outcome: EffectOutcome, context: ActorContext): Decision {
    const job = state.job;
    if (!job || job.status === 'ERASURE_STATUS_COMPLETED') return {};
    if (outcome.ok) {
      const { objectiveCount } = outcome.value as ErasureRunResult;
      // Done: nothing more will happen to this actor but reads.
      return { events: [{ type: 'completed', objectiveCount, at: context.now.toISOString() }], passivate: true };
    }
    const dueAt = new Date(context.now.getTime() + erasureRetryDelayMs(job.attempts));
    return {
      events: [{ type: 'run_failed', error: `${outcome.error.code}: ${outcome.error.message}`, nextAttemptAt: dueAt.toISOString() }],
      reminders: { set: [{ name: RETRY_REMINDER, dueAt }] },
      // It waits on the reminder, which wakes it.
      passivate: true,
    };
  },

  onReminder(state): Decision {
    if (!state.job || state.job.status === 'ERASURE_STATUS_COMPLETED') return {};
    const run = nextRun(state);
    return { events: run.events, effects: { start: [run.start] } };
  },
};
