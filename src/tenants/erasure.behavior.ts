// The `erasure` actor: one durable job per tenant or subject erasure
// (api-decisions.md "Tenants, subjects, uploads"). The DELETE request only
// stores the job (this actor's first turn) and answers; the work runs outside
// any request, in batches of objectives (in id order), each through three
// steps, each step one effect (erasure-run.ts): the batch's objectives erase
// themselves, then their messages leave OBJECTIVE_EVENTS, then the webhook
// endpoints erase the bodies they hold of them. The actor journals each
// step's end (the batch's objectives, then the cursor past them), so a failed
// step is retried on a durable reminder, with a growing delay, from where the
// job stood, and the node that takes the actor over when its node stops or
// dies runs the interrupted step again (every step is idempotent): no run
// starts the job from scratch, however many objectives it has. Pure: the
// effects are bound where the kind is composed.
import { NotFoundError } from '../errors';
import type { ObjectiveEventsAddress } from '../objectives/objective-events';
import type { ActorBehavior, ActorContext, ActorDecision, EffectOutcome, EffectRequest } from '../ports/actor-behavior';

export const ERASURE_KIND = 'erasure';
/** Step 1 of a batch: the next objectives after the cursor erase themselves through their actors. */
export const ERASE_OBJECTIVES_EFFECT = 'erasure.objectives';
/** Step 2: the batch's messages leave OBJECTIVE_EVENTS once none waits in the outbox. */
export const PURGE_EVENTS_EFFECT = 'erasure.events';
/** Step 3: the webhook endpoints holding deliveries of the batch erase their bodies. */
export const ERASE_WEBHOOK_BODIES_EFFECT = 'erasure.webhooks';
const RETRY_REMINDER = 'retry';
/** One step's deadline: a batch is small (ErasureKindDependencies.batchSize), so this is far above its usual time. */
export const ERASURE_STEP_TIMEOUT_MS = 5 * 60_000;
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
export type ErasureStep = 'ERASURE_STEP_OBJECTIVES' | 'ERASURE_STEP_EVENTS' | 'ERASURE_STEP_WEBHOOKS';

/** How far the job is (the API shows it). */
export interface ErasureProgress {
  /** Batches through all three steps. */
  batchesCompleted: number;
  /** Objectives erased through their actors so far (the current batch's too, once its first step is done). */
  objectivesErased: number;
  /** The step the current batch is at. */
  step: ErasureStep;
}

/** The job as its actor keeps it (and as the API shows it, but `cursor` and `batch`). */
export interface ErasureJob {
  id: string;
  target: ErasureTarget;
  status: ErasureStatus;
  createdAt: string;
  /** Step runs started so far (a run lost with its node is run again as the same run). */
  attempts: number;
  /** Failed runs since the last step that succeeded: the retry delay grows with them. */
  failedRuns: number;
  /** The error of the last failed run, while it is retried. */
  lastError: string | null;
  nextAttemptAt: string | null;
  progress: ErasureProgress;
  /** The last objective id of the completed batches: the next batch starts after it. */
  cursor: string | null;
  /** The current batch's objectives, once they are erased (its later steps work on them). */
  batch: ObjectiveEventsAddress[] | null;
  /** Objectives erased, once completed. */
  objectiveCount: number | null;
  completedAt: string | null;
}

/** The input of ERASE_OBJECTIVES_EFFECT: the batch is the first objectives of the target after `after`. */
export interface EraseObjectivesInput {
  target: ErasureTarget;
  after: string | null;
}

/** What ERASE_OBJECTIVES_EFFECT answers: the batch, empty once every objective is erased. */
export interface EraseObjectivesResult {
  objectives: ObjectiveEventsAddress[];
}

/** The input of PURGE_EVENTS_EFFECT. */
export interface PurgeEventsInput {
  objectives: ObjectiveEventsAddress[];
}

/** The input of ERASE_WEBHOOK_BODIES_EFFECT: `batch` (1, 2 …) makes each batch's endpoint commands their own. */
export interface EraseWebhookBodiesInput {
  objectives: ObjectiveEventsAddress[];
  batch: number;
}

export type ErasureCommand = { type: 'start'; target: ErasureTarget } | { type: 'get' };

export type ErasureEvent =
  | { type: 'accepted'; target: ErasureTarget; at: string }
  | { type: 'run_started' }
  | { type: 'run_failed'; error: string; nextAttemptAt: string }
  /** Step 1 done: these objectives are erased. */
  | { type: 'batch_erased'; objectives: ObjectiveEventsAddress[] }
  /** Step 2 done. */
  | { type: 'batch_purged' }
  /** Step 3 done: the cursor moves past the batch. */
  | { type: 'batch_completed' }
  | { type: 'completed'; objectiveCount: number; at: string };

export type ErasureState = { id: string; job: ErasureJob | null };
type Decision = ActorDecision<ErasureEvent, ErasureJob, never, ErasureState>;

/** A step succeeded: the retry delay starts again from 1 s. */
const succeeded = { failedRuns: 0, lastError: null, nextAttemptAt: null };

function evolve(state: ErasureState, event: ErasureEvent): ErasureState {
  if (event.type === 'accepted') {
    return {
      ...state,
      job: {
        id: state.id, target: event.target, status: 'ERASURE_STATUS_RUNNING', createdAt: event.at, attempts: 0, failedRuns: 0,
        lastError: null, nextAttemptAt: null, progress: { batchesCompleted: 0, objectivesErased: 0, step: 'ERASURE_STEP_OBJECTIVES' },
        cursor: null, batch: null, objectiveCount: null, completedAt: null,
      },
    };
  }
  const job = state.job;
  if (!job) return state;
  const { progress } = job;
  switch (event.type) {
    case 'run_started':
      return { ...state, job: { ...job, attempts: job.attempts + 1, nextAttemptAt: null } };
    case 'run_failed':
      return { ...state, job: { ...job, failedRuns: job.failedRuns + 1, lastError: event.error, nextAttemptAt: event.nextAttemptAt } };
    case 'batch_erased':
      return {
        ...state,
        job: { ...job, ...succeeded, batch: event.objectives, progress: { ...progress, objectivesErased: progress.objectivesErased + event.objectives.length, step: 'ERASURE_STEP_EVENTS' } },
      };
    case 'batch_purged':
      return { ...state, job: { ...job, ...succeeded, progress: { ...progress, step: 'ERASURE_STEP_WEBHOOKS' } } };
    case 'batch_completed': {
      const last = job.batch?.[job.batch.length - 1];
      return {
        ...state,
        job: { ...job, ...succeeded, cursor: last?.objectiveId ?? job.cursor, batch: null, progress: { ...progress, batchesCompleted: progress.batchesCompleted + 1, step: 'ERASURE_STEP_OBJECTIVES' } },
      };
    }
    case 'completed':
      return { ...state, job: { ...job, ...succeeded, status: 'ERASURE_STATUS_COMPLETED', objectiveCount: event.objectiveCount, completedAt: event.at } };
  }
}

/** The effect of the job's current step; its id counts the runs, so a run and its retry never share an id. */
function stepRequest(job: ErasureJob): EffectRequest {
  const id = `run-${job.attempts}`;
  const batch = job.batch ?? [];
  switch (job.progress.step) {
    case 'ERASURE_STEP_OBJECTIVES':
      return { id, name: ERASE_OBJECTIVES_EFFECT, input: { target: job.target, after: job.cursor } satisfies EraseObjectivesInput, timeoutMs: ERASURE_STEP_TIMEOUT_MS };
    case 'ERASURE_STEP_EVENTS':
      return { id, name: PURGE_EVENTS_EFFECT, input: { objectives: batch } satisfies PurgeEventsInput, timeoutMs: ERASURE_STEP_TIMEOUT_MS };
    case 'ERASURE_STEP_WEBHOOKS':
      return {
        id, name: ERASE_WEBHOOK_BODIES_EFFECT, input: { objectives: batch, batch: job.progress.batchesCompleted + 1 } satisfies EraseWebhookBodiesInput, timeoutMs: ERASURE_STEP_TIMEOUT_MS,
      };
  }
}

/** After `events`, the run of the step the job is then at. */
function thenRun(state: ErasureState, events: ErasureEvent[]): Decision {
  const all: ErasureEvent[] = [...events, { type: 'run_started' }];
  const after = all.reduce(evolve, state);
  return { events: all, effects: { start: [stepRequest(after.job!)] } };
}

/** 1 s, 2 s, 4 s … up to 5 minutes between failed runs. */
export function erasureRetryDelayMs(failedRuns: number): number {
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, failedRuns - 1), MAX_RETRY_DELAY_MS);
}

/** The events a successful step records. */
function stepDone(job: ErasureJob, outcome: EffectOutcome & { ok: true }, now: Date): { events: ErasureEvent[]; done: boolean } {
  switch (outcome.name) {
    case ERASE_OBJECTIVES_EFFECT: {
      const { objectives } = outcome.value as EraseObjectivesResult;
      if (objectives.length === 0) return { events: [{ type: 'completed', objectiveCount: job.progress.objectivesErased, at: now.toISOString() }], done: true };
      return { events: [{ type: 'batch_erased', objectives }], done: false };
    }
    case PURGE_EVENTS_EFFECT:
      return { events: [{ type: 'batch_purged' }], done: false };
    default:
      return { events: [{ type: 'batch_completed' }], done: false };
  }
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
    return { ...thenRun(state, [accepted]), reply: evolve(state, accepted).job! };
  },

  onEffectResult(state, outcome: EffectOutcome, context: ActorContext): Decision {
    const job = state.job;
    // Only the current run's outcome moves the job (each run has its own id).
    if (!job || job.status === 'ERASURE_STATUS_COMPLETED' || outcome.id !== `run-${job.attempts}`) return {};
    if (outcome.ok) {
      const { events, done } = stepDone(job, outcome, context.now);
      // Done: nothing more will happen to this actor but reads.
      if (done) return { events, passivate: true };
      return thenRun(state, events);
    }
    const dueAt = new Date(context.now.getTime() + erasureRetryDelayMs(job.failedRuns + 1));
    return {
      events: [{ type: 'run_failed', error: `${outcome.error.code}: ${outcome.error.message}`, nextAttemptAt: dueAt.toISOString() }],
      reminders: { set: [{ name: RETRY_REMINDER, dueAt }] },
      // It waits on the reminder, which wakes it.
      passivate: true,
    };
  },

  onReminder(state): Decision {
    if (!state.job || state.job.status === 'ERASURE_STATUS_COMPLETED') return {};
    return thenRun(state, []);
  },
};
