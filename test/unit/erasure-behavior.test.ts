// The erasure job's decisions (src/tenants/erasure.behavior.ts): a start stores
// the job and starts its run once, a failed run is retried on a durable
// reminder with a growing delay, a successful one completes the job, and an
// unknown job is NOT_FOUND.
import assert from 'node:assert/strict';
import { NotFoundError } from '../../src/errors';
import type { ActorDecision, EffectOutcome } from '../../src/ports/actor-behavior';
import { erasureBehavior, erasureRetryDelayMs, RUN_ERASURE_EFFECT, type ErasureEvent, type ErasureJob, type ErasureState } from '../../src/tenants/erasure.behavior';

const target = { accountId: 'acc_1', workspaceId: 'ws_1', subjectIds: ['subject_1'] };

describe('erasure job behaviour', () => {
  let state: ErasureState;
  let now: Date;
  const context = () => ({ kind: 'erasure', id: 'erasure_1', now });
  const absorb = (decision: ActorDecision<ErasureEvent, ErasureJob, never, ErasureState>) => {
    state = (decision.events ?? []).reduce(erasureBehavior.evolve, state);
    return decision;
  };
  const outcome = (id: string, result: { value: unknown } | { error: string }): EffectOutcome => ({
    id, name: RUN_ERASURE_EFFECT, input: target, timeoutMs: 1000, attempt: 1,
    ...('value' in result ? { ok: true as const, value: result.value } : { ok: false as const, error: { code: 'UNAVAILABLE', message: result.error } }),
  });

  beforeEach(() => {
    state = erasureBehavior.initialState('erasure_1');
    now = new Date('2026-11-27T03:00:00.000Z');
  });

  it('stores the job and starts its run on the first start only', async () => {
    const started = absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    assert.equal(started.reply?.status, 'ERASURE_STATUS_RUNNING');
    assert.deepEqual(started.effects?.start?.map((effect) => [effect.id, effect.name, effect.input]), [['run-1', RUN_ERASURE_EFFECT, target]]);
    const again = absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    assert.equal(again.effects, undefined, 'a repeated start runs nothing more');
    assert.equal(again.reply?.attempts, 1);
  });

  it('retries a failed run on a reminder, 1 s then doubling, and completes on success', async () => {
    absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    const failed = absorb(await erasureBehavior.onEffectResult!(state, outcome('run-1', { error: '3 events are not published yet' }), context()));
    assert.deepEqual(failed.reminders?.set?.map((reminder) => reminder.dueAt.getTime() - now.getTime()), [1000]);
    assert.equal(state.job?.lastError, 'UNAVAILABLE: 3 events are not published yet');
    assert.equal(state.job?.status, 'ERASURE_STATUS_RUNNING');
    now = new Date(now.getTime() + 1000);
    const retried = absorb(await erasureBehavior.onReminder!(state, { name: 'retry', dueAt: now, payload: null }, context()));
    assert.deepEqual(retried.effects?.start?.map((effect) => effect.id), ['run-2']);
    const failedAgain = absorb(await erasureBehavior.onEffectResult!(state, outcome('run-2', { error: 'NATS down' }), context()));
    assert.equal(failedAgain.reminders!.set![0].dueAt.getTime() - now.getTime(), 2000);
    absorb(await erasureBehavior.onReminder!(state, { name: 'retry', dueAt: now, payload: null }, context()));
    const done = absorb(await erasureBehavior.onEffectResult!(state, outcome('run-3', { value: { objectiveCount: 4 } }), context()));
    assert.equal(done.passivate, true);
    assert.deepEqual(
      { status: state.job?.status, attempts: state.job?.attempts, objectiveCount: state.job?.objectiveCount, lastError: state.job?.lastError },
      { status: 'ERASURE_STATUS_COMPLETED', attempts: 3, objectiveCount: 4, lastError: null },
    );
    assert.deepEqual(await erasureBehavior.onReminder!(state, { name: 'retry', dueAt: now, payload: null }, context()), {}, 'a completed job runs nothing again');
    assert.equal(erasureRetryDelayMs(20), 5 * 60_000, 'the delay stops growing at 5 minutes');
  });

  it('answers NOT_FOUND for a job never started', async () => {
    await assert.rejects(async () => erasureBehavior.decide(state, { type: 'get' }, context()), NotFoundError);
  });
});
