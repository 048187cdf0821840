// The erasure job's decisions (src/tenants/erasure.behavior.ts): a start
// stores the job and starts its first step once; each batch goes through its
// three steps, the job journaling each step's end and the cursor past the
// batch; a failed step is retried on a durable reminder with a growing delay
// from where the job stood; an empty batch completes it; an unknown job is
// NOT_FOUND.
import assert from 'node:assert/strict';
import { NotFoundError } from '../../src/errors';
import type { ActorDecision, EffectOutcome } from '../../src/ports/actor-behavior';
import {
  ERASE_OBJECTIVES_EFFECT, ERASE_WEBHOOK_BODIES_EFFECT, erasureBehavior, erasureRetryDelayMs, PURGE_EVENTS_EFFECT,
  type ErasureEvent, type ErasureJob, type ErasureState,
} from '../../src/tenants/erasure.behavior';

const target = { accountId: 'acc_1', workspaceId: 'ws_1', subjectIds: ['subject_1'] };
const address = (objectiveId: string) => ({ objectiveId, accountId: 'acc_1', workspaceId: 'ws_1', agentId: 'agt_1' });

describe('erasure job behaviour', () => {
  let state: ErasureState;
  let now: Date;
  let started: Array<{ id: string; name: string; input: unknown }>;
  const context = () => ({ kind: 'erasure', id: 'erasure_1', now });
  const absorb = (decision: ActorDecision<ErasureEvent, ErasureJob, never, ErasureState>) => {
    state = (decision.events ?? []).reduce(erasureBehavior.evolve, state);
    for (const effect of decision.effects?.start ?? []) started.push({ id: effect.id!, name: effect.name, input: effect.input });
    return decision;
  };
  const last = () => started[started.length - 1];
  /** The outcome of the last step started. */
  const finish = async (result: { value: unknown } | { error: string }) => {
    const { id, name, input } = last();
    const outcome: EffectOutcome = {
      id, name, input, timeoutMs: 1000, attempt: 1,
      ...('value' in result ? { ok: true as const, value: result.value } : { ok: false as const, error: { code: 'UNAVAILABLE', message: result.error } }),
    };
    return absorb(await erasureBehavior.onEffectResult!(state, outcome, context()));
  };
  const retry = async () => absorb(await erasureBehavior.onReminder!(state, { name: 'retry', dueAt: now, payload: null }, context()));

  beforeEach(() => {
    state = erasureBehavior.initialState('erasure_1');
    now = new Date('2026-11-27T03:00:00.000Z');
    started = [];
  });

  it('stores the job and starts its first step on the first start only', async () => {
    const first = absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    assert.equal(first.reply?.status, 'ERASURE_STATUS_RUNNING');
    assert.deepEqual(started, [{ id: 'run-1', name: ERASE_OBJECTIVES_EFFECT, input: { target, after: null } }]);
    const again = absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    assert.equal(again.effects, undefined, 'a repeated start runs nothing more');
    assert.equal(again.reply?.attempts, 1);
  });

  it('takes each batch through its three steps, the next batch after the last, and completes on an empty batch', async () => {
    absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    await finish({ value: { objectives: [address('obj_1'), address('obj_2')] } });
    assert.deepEqual(last(), { id: 'run-2', name: PURGE_EVENTS_EFFECT, input: { objectives: [address('obj_1'), address('obj_2')] } });
    assert.deepEqual(state.job?.progress, { batchesCompleted: 0, objectivesErased: 2, step: 'ERASURE_STEP_EVENTS' });
    await finish({ value: {} });
    assert.deepEqual(last(), { id: 'run-3', name: ERASE_WEBHOOK_BODIES_EFFECT, input: { objectives: [address('obj_1'), address('obj_2')], batch: 1 } });
    await finish({ value: { endpointCount: 1 } });
    assert.deepEqual(last(), { id: 'run-4', name: ERASE_OBJECTIVES_EFFECT, input: { target, after: 'obj_2' } }, 'the next batch starts after the last objective');
    assert.deepEqual(state.job?.progress, { batchesCompleted: 1, objectivesErased: 2, step: 'ERASURE_STEP_OBJECTIVES' });
    assert.equal(state.job?.batch, null, 'a completed batch is forgotten');
    await finish({ value: { objectives: [address('obj_3')] } });
    await finish({ value: {} });
    await finish({ value: { endpointCount: 0 } });
    assert.deepEqual(last().input, { target, after: 'obj_3' });
    const done = await finish({ value: { objectives: [] } });
    assert.equal(done.passivate, true);
    assert.equal(done.effects, undefined);
    assert.deepEqual(
      { status: state.job?.status, objectiveCount: state.job?.objectiveCount, progress: state.job?.progress },
      { status: 'ERASURE_STATUS_COMPLETED', objectiveCount: 3, progress: { batchesCompleted: 2, objectivesErased: 3, step: 'ERASURE_STEP_OBJECTIVES' } },
    );
  });

  it('retries a failed step from where the job stood, on a reminder, 1 s then doubling, and starts again at 1 s after a success', async () => {
    absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    await finish({ value: { objectives: [address('obj_1')] } });
    const failed = await finish({ error: '3 events are not published yet' });
    assert.deepEqual(failed.reminders?.set?.map((reminder) => reminder.dueAt.getTime() - now.getTime()), [1000]);
    assert.equal(failed.passivate, true);
    assert.equal(state.job?.lastError, 'UNAVAILABLE: 3 events are not published yet');
    assert.equal(state.job?.status, 'ERASURE_STATUS_RUNNING');
    await retry();
    assert.deepEqual(last(), { id: 'run-3', name: PURGE_EVENTS_EFFECT, input: { objectives: [address('obj_1')] } }, 'the same step again, not the batch');
    const failedAgain = await finish({ error: 'NATS down' });
    assert.equal(failedAgain.reminders!.set![0].dueAt.getTime() - now.getTime(), 2000);
    await retry();
    await finish({ value: {} });
    assert.equal(state.job?.lastError, null, 'a success clears the error');
    const afterSuccess = await finish({ error: 'endpoint actor unavailable' });
    assert.equal(afterSuccess.reminders!.set![0].dueAt.getTime() - now.getTime(), 1000, 'the delay starts again');
    assert.equal(erasureRetryDelayMs(20), 5 * 60_000, 'the delay stops growing at 5 minutes');
  });

  it('ignores the outcome of a run that is not the current one, and a reminder once completed', async () => {
    absorb(await erasureBehavior.decide(state, { type: 'start', target }, context()));
    const stale: EffectOutcome = { id: 'run-0', name: ERASE_OBJECTIVES_EFFECT, input: {}, timeoutMs: 1000, attempt: 1, ok: true, value: { objectives: [] } };
    assert.deepEqual(await erasureBehavior.onEffectResult!(state, stale, context()), {});
    await finish({ value: { objectives: [] } });
    assert.equal(state.job?.status, 'ERASURE_STATUS_COMPLETED');
    assert.deepEqual(await erasureBehavior.onReminder!(state, { name: 'retry', dueAt: now, payload: null }, context()), {}, 'a completed job runs nothing again');
  });

  it('answers NOT_FOUND for a job never started', async () => {
    await assert.rejects(async () => erasureBehavior.decide(state, { type: 'get' }, context()), NotFoundError);
  });
});
