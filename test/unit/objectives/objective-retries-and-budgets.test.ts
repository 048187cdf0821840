// The objective's decisions on provider trouble and on runaway loops (issue
// 24 items 3 and 4), driven without a runtime: a retryable model call
// failure waits on a durable reminder (Retry-After, else backoff with
// jitter) while the objective stays RUNNING, a budget of consecutive
// failures ends it FAILED with the provider's last error, and the model
// turn, token, cost and tool budgets end or narrow a loop: no model call
// starts once a spending budget is used up, so it is passed by at most the
// call that crossed it (issue 27 item 3; sub-objectives' shares in
// objective-sub-agents.test.ts).
import assert from 'node:assert/strict';
import { ModelCallError } from '../../../src/models/model-call-error';
import { DEFAULT_MAX_MODEL_TURNS } from '../../../src/objectives/objective-budgets';
import { MODEL_RETRY_REMINDER, modelRetryDelayMs } from '../../../src/objectives/objective-retries';
import type { EffectError } from '../../../src/ports/actor-behavior';
import { ObjectiveDriver, toolSuccess } from './objective-driver';

const statusOf = (driver: ObjectiveDriver) => driver.state.status?.replace('OBJECTIVE_STATUS_', '');

function effectErrorOf(error: ModelCallError): EffectError {
  return { code: error.code, message: error.message, details: error.details };
}

const rateLimited = (retryAfterMs?: number) =>
  effectErrorOf(new ModelCallError('RATE_LIMITED', 'the provider rate-limited calls (HTTP 429: slow down)', { retryable: true, status: 429, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }));
const unavailable = () => effectErrorOf(new ModelCallError('PROVIDER_UNAVAILABLE', 'the provider is unavailable (HTTP 503: no capacity)', { retryable: true, status: 503 }));

function lastError(driver: ObjectiveDriver): Record<string, unknown> {
  return (driver.published.filter((event) => event.type === 'objective_event.error').at(-1)!.data as { error: Record<string, unknown> }).error;
}

describe('objective model call retries', () => {
  it('a 429 waits for its Retry-After on a reminder, stays RUNNING, shows the wait, then calls the model again', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.fail('model_call_1', rateLimited(45_000));
    assert.equal(statusOf(driver), 'RUNNING');
    assert.equal(driver.running.size, 0, 'no model call runs during the wait');
    const reminder = driver.reminders.get(MODEL_RETRY_REMINDER)!;
    assert.equal(reminder.dueAt.getTime(), driver.now.getTime() + 45_000, 'Retry-After honoured');
    assert.deepEqual(lastError(driver), {
      message: `the provider rate-limited calls (HTTP 429: slow down); the model call is tried again at ${reminder.dueAt.toISOString()} (in 45 s, failure 1)`,
      type: 'RATE_LIMITED',
      retryAt: reminder.dueAt.toISOString(),
    });
    assert.equal(driver.state.error, null, 'the objective has no error while it waits');

    await driver.send({ type: 'message', content: 'still there?' });
    assert.equal(driver.running.size, 0, 'a follow-up waits for the retry too');
    driver.now = reminder.dueAt;
    await driver.fireReminder(MODEL_RETRY_REMINDER);
    assert.deepEqual(driver.modelRequest().messages.slice(-2), [{ role: 'user', content: 'hello' }, { role: 'user', content: 'still there?' }]);
    await driver.modelAnswers({ content: 'here' });
    assert.equal(statusOf(driver), 'COMPLETED');
    assert.equal(driver.state.modelRetries, null);
  });

  it('without Retry-After it backs off exponentially with jitter drawn from the objective, the same on replay', () => {
    const delays = [1, 2, 3, 4, 5].map((failure) => modelRetryDelayMs('obj_1', failure, undefined));
    delays.forEach((delay, index) => {
      const base = 2000 * 2 ** index;
      assert.ok(delay >= base * 0.8 && delay <= base * 1.2, `failure ${index + 1}: ${delay} ms within ±20 % of ${base}`);
    });
    assert.deepEqual([1, 2, 3, 4, 5].map((failure) => modelRetryDelayMs('obj_1', failure, undefined)), delays);
    assert.notDeepEqual([1, 2, 3, 4, 5].map((failure) => modelRetryDelayMs('obj_2', failure, undefined)), delays, 'another objective waits otherwise');
    assert.ok(modelRetryDelayMs('obj_1', 40, undefined) <= 5 * 60_000 * 1.2, 'capped');
  });

  it('a run of 503s is retried until the provider answers; the next failure starts a new budget', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, modelRetryBudgetMs: 60_000 } });
    for (let failure = 1; failure <= 4; failure++) {
      await driver.fail(driver.runningModelCall().id, unavailable());
      assert.equal(statusOf(driver), 'RUNNING');
      driver.now = driver.reminders.get(MODEL_RETRY_REMINDER)!.dueAt;
      await driver.fireReminder(MODEL_RETRY_REMINDER);
    }
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c1'), toolSuccess(driver.callId('c1'), 'found'));
    await driver.fail(driver.runningModelCall().id, unavailable());
    assert.equal(driver.state.modelRetries?.failures, 1, 'an answer ended the earlier run of failures');
  });

  it('gives up FAILED with the provider\'s last error once the failures would outlast the retry budget', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, modelRetryBudgetMs: 10_000 } });
    await driver.fail('model_call_1', unavailable());
    driver.now = driver.reminders.get(MODEL_RETRY_REMINDER)!.dueAt;
    await driver.fireReminder(MODEL_RETRY_REMINDER);
    await driver.fail(driver.runningModelCall().id, rateLimited(30_000));
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error?.type, 'RATE_LIMITED');
    assert.match(driver.state.error!.message, /^the provider rate-limited calls \(HTTP 429: slow down\) \(the model call failed 2 times in a row over \d+ s; its retry budget is 10 s\)$/u);
    assert.deepEqual(driver.kinds().slice(-2), ['error', 'finalized']);
  });

  it('says "once" when the first failure already outlasts the retry budget', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, modelRetryBudgetMs: 10_000 } });
    await driver.fail('model_call_1', rateLimited(30_000));
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error!.message, 'the provider rate-limited calls (HTTP 429: slow down) (the model call failed once over 0 s; its retry budget is 10 s)');
  });

  it('an error trying again cannot cure (401) fails at once', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.fail('model_call_1', effectErrorOf(new ModelCallError('PROVIDER_KEY_REFUSED', 'the provider refused AI provider key (HTTP 401)', { status: 401 })));
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.reminders.size, 0);
  });

  it('a time-out is retried; a cancel during the wait ends the objective and drops the reminder', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.fail('model_call_1', { code: 'DEADLINE_EXCEEDED', message: 'the effect passed its deadline' });
    assert.equal(statusOf(driver), 'RUNNING');
    await driver.send({ type: 'cancel' });
    assert.equal(statusOf(driver), 'CANCELLED');
    assert.equal(driver.reminders.has(MODEL_RETRY_REMINDER), false, 'the retry reminder is cancelled');
    assert.deepEqual(driver.lastDecision.reminders?.cancel, [MODEL_RETRY_REMINDER]);
  });

  it('counts the usage a failed model call reported, on the ERROR event and in the objective\'s usage', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    const usage = { promptTokens: 100, completionTokens: 20, costCents: 0.5 };
    await driver.fail('model_call_1', effectErrorOf(new ModelCallError('PROVIDER_UNAVAILABLE', 'the stream broke (HTTP 502)', { retryable: true, status: 502, usage })));
    assert.deepEqual(lastError(driver).usage, usage);
    assert.deepEqual(driver.state.usage, usage);
    await driver.fireReminder(MODEL_RETRY_REMINDER);
    await driver.fail(driver.runningModelCall().id, effectErrorOf(new ModelCallError('CONTENT_REFUSED', 'moderation (HTTP 403)', { status: 403, usage })));
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(lastError(driver), { message: 'moderation (HTTP 403)', type: 'CONTENT_REFUSED', usage });
    assert.deepEqual(driver.state.usage, { promptTokens: 200, completionTokens: 40, costCents: 1 });
    const finalized = driver.published.at(-1)!.data as { finalized: { usage: unknown } };
    assert.deepEqual(finalized.finalized.usage, { promptTokens: 200, completionTokens: 40, costCents: 1 });
    // The usage roll-ups take the failed calls too, in the turns that reported them.
    const deltas = driver.projected.flatMap((change) => (change.type === 'objective_usage' ? [change.delta] : []));
    assert.deepEqual(deltas.map((delta) => [delta.promptTokens, delta.completionTokens, delta.costCents, delta.objectives]), [[0, 0, 0, 1], [100, 20, 0.5, 0], [100, 20, 0.5, 0]]);
  });

  it('the turn timeout still ends an objective that waits for a retry', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ turnTimeoutMs: 30_000 });
    await driver.fail('model_call_1', rateLimited(60_000));
    await driver.fireReminder('turn_deadline');
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error?.type, 'TIMED_OUT');
    assert.equal(driver.reminders.has(MODEL_RETRY_REMINDER), false);
  });
});

describe('objective budgets', () => {
  it('a model that keeps calling a failing tool ends FAILED naming maxModelTurns at the default cap', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    for (let turn = 1; ; turn++) {
      assert.ok(turn <= DEFAULT_MAX_MODEL_TURNS, 'ended within the cap');
      await driver.modelAnswers({ content: null, toolCalls: [{ id: `c${turn}`, name: 'lookup', arguments: '{}' }] });
      const id = driver.callId(`c${turn}`);
      await driver.succeed(id, { ok: false, toolCallId: id, toolId: 'tool_1', kind: 'http', errorType: 'HTTP_ERROR', message: 'HTTP 500', content: '[error: HTTP 500]', durationMs: 1 });
      if (statusOf(driver) !== 'RUNNING') break;
    }
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.state.error, { type: 'LIMIT_REACHED', message: `limit reached: maxModelTurns (the model answered ${DEFAULT_MAX_MODEL_TURNS} times in this run; the limit is ${DEFAULT_MAX_MODEL_TURNS})` });
    assert.equal(driver.state.modelTurn, DEFAULT_MAX_MODEL_TURNS);
  });

  it('says "once" when maxModelTurns is 1', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxModelTurns: 1 } });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c1'), toolSuccess(driver.callId('c1'), 'x'));
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxModelTurns (the model answered once in this run; the limit is 1)' });
  });

  it('maxModelTurns counts per run: a follow-up after COMPLETED starts afresh', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxModelTurns: 2 } });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c1'), toolSuccess(driver.callId('c1'), 'x'));
    await driver.modelAnswers({ content: 'done' });
    assert.equal(statusOf(driver), 'COMPLETED');
    await driver.send({ type: 'message', content: 'again' });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c2'), toolSuccess(driver.callId('c2'), 'x'));
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c3', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c3'), toolSuccess(driver.callId('c3'), 'x'));
    assert.equal(statusOf(driver), 'FAILED');
    assert.match(driver.state.error!.message, /^limit reached: maxModelTurns/u);
  });

  it('maxTokens ends the loop once the objective used that many tokens', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 100 } });
    const usage = { promptTokens: 40, completionTokens: 20, costCents: 1 };
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], usage });
    await driver.succeed(driver.callId('c1'), toolSuccess(driver.callId('c1'), 'x'));
    assert.equal(statusOf(driver), 'RUNNING');
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{}' }], usage });
    await driver.succeed(driver.callId('c2'), toolSuccess(driver.callId('c2'), 'x'));
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxTokens (120 tokens used; the limit is 100)' });
  });

  it('the usage of failed model calls counts against maxTokens before a retry', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 100 } });
    const usage = { promptTokens: 90, completionTokens: 20, costCents: 0 };
    await driver.fail('model_call_1', effectErrorOf(new ModelCallError('PROVIDER_UNAVAILABLE', 'the stream broke (HTTP 502)', { retryable: true, status: 502, usage })));
    await driver.fireReminder(MODEL_RETRY_REMINDER);
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxTokens (110 tokens used; the limit is 100)' });
    assert.equal(driver.running.size, 0);
  });

  it('past maxToolCalls the next model call is offered no tools', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 1, maxSubObjectives: 0 } });
    assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup']);
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('c1'), toolSuccess(driver.callId('c1'), 'x'));
    assert.deepEqual(driver.modelRequest().tools, [], 'the model has to answer');
  });
});

describe('objective spending budgets', () => {
  const lookupTurn = async (driver: ObjectiveDriver, id: string, usage: { promptTokens: number; completionTokens: number; costCents: number }) => {
    await driver.modelAnswers({ content: null, toolCalls: [{ id, name: 'lookup', arguments: '{}' }], usage });
    await driver.succeed(driver.callId(id), toolSuccess(driver.callId(id), 'x'));
  };
  const modelCalls = (driver: ObjectiveDriver) => driver.starts.filter((effect) => effect.name === 'model.call').length;

  it('maxCostCents: no model call starts once the cost reached it; FAILED with ERROR and FINALIZED naming it, passed by at most the last call', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxCostCents: 1 } });
    const usage = { promptTokens: 10, completionTokens: 5, costCents: 0.4 };
    await lookupTurn(driver, 'c1', usage);
    await lookupTurn(driver, 'c2', usage);
    assert.equal(statusOf(driver), 'RUNNING', '0.8 cents: under the budget, the third call starts');
    await lookupTurn(driver, 'c3', usage);
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(modelCalls(driver), 3, 'no fourth call');
    assert.equal(driver.running.size, 0);
    // 0.4 + 0.4 + 0.4 is 1.2000000000000002 in floats: cents are compared and shown rounded to a billionth.
    const error = { type: 'LIMIT_REACHED', message: 'limit reached: maxCostCents (1.2 cents spent; the limit is 1)' };
    assert.deepEqual(driver.state.error, error);
    assert.deepEqual(driver.kinds().slice(-2), ['error', 'finalized']);
    assert.deepEqual(lastError(driver), error);
    const finalized = (driver.published.at(-1)!.data as { finalized: { status: string; usage: { costCents: number } } }).finalized;
    assert.equal(finalized.status, 'OBJECTIVE_STATUS_FAILED');
    assert.ok(finalized.usage.costCents < 1 + usage.costCents, 'passed by less than one call');
  });

  it('a budget reached exactly stops the next call; one call under it lets the call start', async () => {
    const exact = new ObjectiveDriver();
    await exact.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 60 } });
    await lookupTurn(exact, 'c1', { promptTokens: 20, completionTokens: 10, costCents: 0 });
    await lookupTurn(exact, 'c2', { promptTokens: 20, completionTokens: 10, costCents: 0 });
    assert.equal(statusOf(exact), 'FAILED');
    assert.equal(exact.state.error!.message, 'limit reached: maxTokens (60 tokens used; the limit is 60)');

    const under = new ObjectiveDriver();
    await under.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 61 } });
    await lookupTurn(under, 'c1', { promptTokens: 20, completionTokens: 10, costCents: 0 });
    await lookupTurn(under, 'c2', { promptTokens: 20, completionTokens: 10, costCents: 0 });
    assert.equal(statusOf(under), 'RUNNING');
    assert.equal(modelCalls(under), 3);
  });

  it('maxCostCents 0 is no limit; the token cap and the cost cap each end it, whichever is reached first', async () => {
    const unlimited = new ObjectiveDriver();
    await unlimited.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxCostCents: 0 } });
    await lookupTurn(unlimited, 'c1', { promptTokens: 10, completionTokens: 5, costCents: 500 });
    assert.equal(statusOf(unlimited), 'RUNNING');

    const both = new ObjectiveDriver();
    await both.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 1000, maxCostCents: 2 } });
    await lookupTurn(both, 'c1', { promptTokens: 10, completionTokens: 5, costCents: 2.5 });
    assert.equal(both.state.error!.message, 'limit reached: maxCostCents (2.5 cents spent; the limit is 2)');
  });

  it('a follow-up to a COMPLETED objective whose usage reached its budget ends it FAILED without a model call', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 0, maxSubObjectives: 0, maxCostCents: 3 } });
    await driver.modelAnswers({ content: 'done', usage: { promptTokens: 10, completionTokens: 5, costCents: 3.5 } });
    assert.equal(statusOf(driver), 'COMPLETED', 'the answer that crossed the budget is taken');
    await driver.send({ type: 'message', content: 'one more' });
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error!.message, 'limit reached: maxCostCents (3.5 cents spent; the limit is 3)');
    assert.equal(modelCalls(driver), 1);
  });

  it('a context-length refusal whose usage used up the budget fails instead of compacting: no summarization starts', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: { maxInputTokens: 1000, triggerThreshold: 0.5, preserveRecentResults: 2 }, limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 100 } });
    const usage = { promptTokens: 120, completionTokens: 0, costCents: 0 };
    await driver.fail('model_call_1', effectErrorOf(new ModelCallError('CONTEXT_TOO_LONG', 'the conversation is too long (HTTP 400)', { usage })));
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxTokens (120 tokens used; the limit is 100)' });
    assert.deepEqual(driver.starts.map((effect) => effect.name), ['model.call'], 'neither a summary nor a second call');
  });
});
