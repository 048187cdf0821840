import { ModelCallError } from '../../../src/models/model-call-error';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors';
import { isId } from '../../../src/ids';
import type { ChatMessage } from '../../../src/objectives/chat-model-types';
import type { ObjectiveChange } from '../../../src/objectives/objective-events';
import type { ObjectiveEvent } from '../../../src/objectives/objective-state';
import { createObjectiveBehavior, objectiveKindDeclaration } from '../../../src/objectives/objective.behavior';
import { lookupTool, ObjectiveDriver, toolSuccess } from './objective-driver';

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.code === code);
}

const statusOf = (driver: ObjectiveDriver) => driver.state.status?.replace('OBJECTIVE_STATUS_', '');

function toolMessages(messages: ChatMessage[]): Array<{ toolCallId: string; content: string }> {
  return messages.flatMap((message) => (message.role === 'tool' ? [{ toolCallId: message.toolCallId, content: message.content }] : []));
}

describe('objective behaviour', () => {
  it('declares the OBJECTIVE_EVENTS stream and no effect handlers', () => {
    assert.deepEqual(objectiveKindDeclaration.streams, [{ name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'] }]);
    assert.equal('effects' in objectiveKindDeclaration, false);
    assert.equal(objectiveKindDeclaration.behavior.kind, 'objective');
  });

  it('runs a model turn with one tool call to completion, with gapless events', async () => {
    const driver = new ObjectiveDriver();
    const reply = await driver.start();
    assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_RUNNING');
    const first = driver.runningModelCall();
    assert.equal(first.id, 'model_call_1');
    assert.deepEqual(driver.modelRequest().messages, [{ role: 'system', content: 'You help.' }, { role: 'user', content: 'hello' }]);
    assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup']);

    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }], usage: { promptTokens: 10, completionTokens: 2, costCents: 1 } });
    assert.equal(statusOf(driver), 'RUNNING');
    const toolCallId = driver.callId('call_1');
    assert.ok(isId('toolCall', toolCallId), `the service's own id: ${toolCallId}`);
    const toolEffect = driver.running.get(toolCallId);
    assert.equal(toolEffect?.name, 'tool.call', 'the tool call runs as an effect whose id is the tool call id');
    assert.deepEqual(toolEffect?.input, { toolCallId, tool: lookupTool().executable, arguments: '{"q":"x"}', context: { workspaceId: 'ws_1' } });
    assert.equal(toolEffect?.timeoutMs, 35_000);

    await driver.succeed(driver.callId('call_1'), toolSuccess(driver.callId('call_1'), '42'));
    assert.equal(driver.runningModelCall().id, 'model_call_2');
    const messages = driver.modelRequest().messages;
    assert.deepEqual(messages.slice(2), [
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { role: 'tool', toolCallId: 'call_1', content: '42' },
    ]);

    await driver.modelAnswers({ content: 'It is 42.', usage: { promptTokens: 20, completionTokens: 4, costCents: 2 } });
    assert.equal(statusOf(driver), 'COMPLETED');
    assert.equal(driver.running.size, 0);
    assert.deepEqual(driver.kinds(), ['user_message', 'assistant_message', 'tool_called', 'tool_result', 'assistant_message', 'finalized']);
    assert.deepEqual(driver.sequences(), [1, 2, 3, 4, 5, 6]);
    assert.equal(driver.state.lastMessage, 'It is 42.');
    assert.deepEqual(driver.state.usage, { promptTokens: 30, completionTokens: 6, costCents: 3 });
    assert.equal(driver.state.toolCallCount, 1);

    // Published: subject per kind, message id = event id, payload = the webhook envelope.
    const result = driver.published[3];
    assert.equal(result.subject, 'objective_events.acc_1.ws_1.agent_1.obj_1.tool_result');
    const envelope = result.payload as { type: string; timestamp: string; data: Record<string, { id?: string; sequence?: number; metadata?: { id: string }; data?: unknown }> };
    assert.equal(envelope.type, 'objective_event.tool_result');
    assert.equal(envelope.data.agent.id, 'agent_1');
    assert.equal(envelope.data.agentVariation.id, 'agentvar_1');
    assert.equal(envelope.data.objective.id, 'obj_1');
    assert.equal(envelope.data.objectiveEvent.metadata?.id, result.id);
    assert.match(result.id!, /^objevt_/u);
    assert.equal(envelope.data.objectiveEvent.sequence, 4);
    assert.deepEqual(envelope.data.objectiveEvent.data, { type: 'OBJECTIVE_EVENT_TYPE_TOOL_RESULT', toolResult: { content: '42', toolCallId, type: 'text' } });
    const finalized = driver.published[5].payload as { data: { objectiveEvent: { data: unknown } } };
    assert.deepEqual(finalized.data.objectiveEvent.data, {
      type: 'OBJECTIVE_EVENT_TYPE_FINALIZED', finalized: { status: 'OBJECTIVE_STATUS_COMPLETED', output: null, usage: { promptTokens: 30, completionTokens: 6, costCents: 3 } },
    });

    // Projected: one event row per published event, in order, and the objective row after each decision.
    const eventRows = driver.projected.filter((change): change is Extract<ObjectiveChange, { type: 'objective_event' }> => change.type === 'objective_event');
    assert.deepEqual(eventRows.map((row) => row.record.id), driver.published.map((event) => event.id));
    const rows = driver.projected.filter((change): change is Extract<ObjectiveChange, { type: 'objective' }> => change.type === 'objective');
    assert.equal(rows.at(-1)?.info.status, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(rows.at(-1)?.info.sequence, 6);
    assert.equal(rows.at(-1)?.info.finishedAt, '2026-11-23T12:00:00.000Z');
  });

  it('starts the consecutive tool calls of one turn together', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }, { id: 'b', name: 'lookup', arguments: '{}' }] });
    assert.deepEqual(driver.lastDecision.effects?.start?.map((effect) => effect.id), [driver.callId('a'), driver.callId('b')]);
    await driver.succeed(driver.callId('b'), toolSuccess(driver.callId('b'), 'B'));
    assert.equal([...driver.running.values()].some((effect) => effect.name === 'model.call'), false, 'the model waits for every call of the turn');
    await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
    assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'a', content: 'A' }, { toolCallId: 'b', content: 'B' }]);
  });

  describe('approvals', () => {
    async function awaitingApproval(): Promise<ObjectiveDriver> {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [lookupTool({ requiresApproval: true })] });
      await driver.modelAnswers({ content: 'Let me check.', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }] });
      return driver;
    }

    it('holds a call that needs approval, with nothing running', async () => {
      const driver = await awaitingApproval();
      assert.equal(statusOf(driver), 'AWAITING_APPROVAL');
      assert.equal(driver.running.size, 0);
      assert.deepEqual(driver.kinds(), ['user_message', 'assistant_message', 'tool_approval_requested']);
      const reply = await driver.send({ type: 'get' });
      assert.deepEqual(reply?.info.pendingToolCallIds, [driver.callId('call_1')]);
    });

    it('approve runs the call; a second decision is FAILED_PRECONDITION', async () => {
      const driver = await awaitingApproval();
      const reply = await driver.send({ type: 'approve', toolCallId: driver.callId('call_1') });
      assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_RUNNING');
      assert.deepEqual(reply?.info.pendingToolCallIds, []);
      assert.equal(driver.running.get(driver.callId('call_1'))?.name, 'tool.call');
      assert.deepEqual(driver.kinds().slice(-2), ['tool_approved', 'tool_called']);
      await rejectsWith(driver.send({ type: 'approve', toolCallId: driver.callId('call_1') }), 'FAILED_PRECONDITION');
      await rejectsWith(driver.send({ type: 'deny', toolCallId: driver.callId('call_1') }), 'FAILED_PRECONDITION');
      await driver.succeed(driver.callId('call_1'), toolSuccess(driver.callId('call_1'), 'ok'));
      await driver.modelAnswers({ content: 'Done.' });
      assert.equal(statusOf(driver), 'COMPLETED');
      assert.deepEqual(driver.sequences(), driver.sequences().map((_, index) => index + 1));
    });

    it('deny sends the memo back to the model as the tool result', async () => {
      const driver = await awaitingApproval();
      await driver.send({ type: 'deny', toolCallId: driver.callId('call_1'), memo: 'too risky' });
      assert.equal(statusOf(driver), 'RUNNING');
      assert.equal(driver.running.has(driver.callId('call_1')), false, 'a denied call never runs');
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'call_1', content: '[denied: too risky]' }]);
      const denied = driver.published.find((event) => event.type === 'objective_event.tool_denied');
      assert.deepEqual(denied?.data, { toolDenied: { toolCallId: driver.callId('call_1'), memo: 'too risky' } });
      await rejectsWith(driver.send({ type: 'approve', toolCallId: driver.callId('call_1') }), 'FAILED_PRECONDITION');
    });

    it('an unknown tool call id is NOT_FOUND; a call that never needed approval is FAILED_PRECONDITION', async () => {
      const driver = await awaitingApproval();
      await rejectsWith(driver.send({ type: 'approve', toolCallId: 'nope' }), 'NOT_FOUND');
      await rejectsWith(driver.send({ type: 'deny', toolCallId: 'nope', memo: 'x' }), 'NOT_FOUND');
      const free = new ObjectiveDriver();
      await free.start();
      await free.modelAnswers({ content: null, toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{}' }] });
      await rejectsWith(free.send({ type: 'approve', toolCallId: free.callId('call_9') }), 'FAILED_PRECONDITION');
    });

    it('a follow-up message while awaiting approval waits for the next model call', async () => {
      const driver = await awaitingApproval();
      await driver.send({ type: 'message', content: 'also this' });
      assert.equal(statusOf(driver), 'AWAITING_APPROVAL');
      assert.equal(driver.running.size, 0);
      await driver.send({ type: 'deny', toolCallId: driver.callId('call_1') });
      const messages = driver.modelRequest().messages;
      assert.deepEqual(messages.slice(-2), [{ role: 'tool', toolCallId: 'call_1', content: '[denied]' }, { role: 'user', content: 'also this' }]);
    });
  });

  describe('cancel', () => {
    it('aborts the running model call and ends CANCELLED, FINALIZED last', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      const reply = await driver.send({ type: 'cancel', reason: 'user left' });
      assert.deepEqual(driver.aborted, ['model_call_1']);
      assert.equal(driver.running.size, 0);
      assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_CANCELLED');
      assert.deepEqual(driver.kinds(), ['user_message', 'cancelled', 'finalized']);
      assert.deepEqual(driver.published[1].data, { cancelled: { reason: 'user left' } });
      await rejectsWith(driver.send({ type: 'cancel' }), 'FAILED_PRECONDITION');
      await rejectsWith(driver.send({ type: 'message', content: 'again' }), 'FAILED_PRECONDITION');
    });

    it('aborts running tool calls and drops calls awaiting approval', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [lookupTool(), lookupTool({ name: 'risky', requiresApproval: true })] });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }, { id: 'b', name: 'risky', arguments: '{}' }] });
      assert.equal(statusOf(driver), 'AWAITING_APPROVAL');
      await driver.send({ type: 'cancel' });
      assert.deepEqual(driver.aborted, [driver.callId('a')]);
      assert.equal(statusOf(driver), 'CANCELLED');
      await rejectsWith(driver.send({ type: 'approve', toolCallId: driver.callId('b') }), 'FAILED_PRECONDITION');
    });
  });

  it('a tool call beyond maxToolCalls is not executed: TOOL_ERROR and the limit result, and the model goes on', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ limits: { maxToolCalls: 2, maxSubObjectives: 0 } });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'b', name: 'lookup', arguments: '{}' }, { id: 'c', name: 'lookup', arguments: '{}' }] });
    assert.deepEqual([...driver.running.keys()], [driver.callId('b')]);
    const error = driver.published.find((event) => event.type === 'objective_event.tool_error');
    assert.deepEqual(error?.data, { toolError: { message: 'limit reached: maxToolCalls', toolCallId: driver.callId('c') } });
    await driver.succeed(driver.callId('b'), toolSuccess(driver.callId('b'), 'B'));
    assert.deepEqual(toolMessages(driver.modelRequest().messages).slice(-2), [{ toolCallId: 'b', content: 'B' }, { toolCallId: 'c', content: 'limit reached: maxToolCalls' }]);
    assert.equal(driver.state.toolCallCount, 2);
    await driver.modelAnswers({ content: 'Answer anyway.' });
    assert.equal(statusOf(driver), 'COMPLETED');
  });

  describe('emit_output', () => {
    const outputDefinition = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false };

    it('offers emit_output and completes with a valid output', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition });
      const emit = driver.modelRequest().tools.find((tool) => tool.name === 'emit_output');
      assert.deepEqual(emit?.parameters, outputDefinition);
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_1', name: 'emit_output', arguments: '{"answer":42}' }] });
      assert.equal(statusOf(driver), 'COMPLETED');
      assert.deepEqual(driver.state.output, { answer: 42 });
      assert.deepEqual(driver.kinds(), ['user_message', 'assistant_message', 'tool_called', 'tool_result', 'finalized']);
      const assistant = driver.published[1].data as { assistantMessage: { toolCalls: unknown[] } };
      // The call's id is the service's (not the model's out_1): the one its TOOL_* events name.
      const called = driver.published[2].data as { toolCalled: { toolCallId: string } };
      assert.match(called.toolCalled.toolCallId, /^toolcall_/);
      assert.deepEqual(assistant.assistantMessage.toolCalls, [
        { arguments: '{"answer":42}', functionName: 'emit_output', id: called.toolCalled.toolCallId, tool: { serviceProvidedTool: { name: 'emit_output' } } },
      ]);
      assert.deepEqual((driver.published.at(-1)?.data as { finalized: { output: unknown } }).finalized.output, { answer: 42 });
      assert.equal(driver.state.toolCallCount, 0, 'emit_output does not count against maxToolCalls');
    });

    it('an invalid output is a TOOL_ERROR the model sees, and the model goes on', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_1', name: 'emit_output', arguments: '{"answer":"many"}' }] });
      assert.equal(statusOf(driver), 'RUNNING');
      const [result] = toolMessages(driver.modelRequest().messages);
      assert.equal(result.toolCallId, 'out_1');
      assert.match(result.content, /^invalid output: .*integer/u);
      assert.equal(driver.kinds().at(-1), 'tool_error');
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_2', name: 'emit_output', arguments: '{"answer":7}' }] });
      assert.deepEqual(driver.state.output, { answer: 7 });
      assert.equal(statusOf(driver), 'COMPLETED');
    });

    it('wraps a definition that is not an object schema as {output}', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition: { type: 'array', items: { type: 'string' } } });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_1', name: 'emit_output', arguments: '{"output":["a","b"]}' }] });
      assert.deepEqual(driver.state.output, ['a', 'b']);
    });

    it('uses a validator passed in', async () => {
      const driver = new ObjectiveDriver('obj_1', createObjectiveBehavior({ validateOutput: () => 'never good enough' }));
      await driver.start({ outputDefinition });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_1', name: 'emit_output', arguments: '{"answer":1}' }] });
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'out_1', content: 'invalid output: never good enough' }]);
    });
  });

  it('a model error that trying again cannot cure ends FAILED with an ERROR event carrying the error type', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.fail('model_call_1', { code: 'FAILED_PRECONDITION', message: 'provider down' });
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.kinds(), ['user_message', 'error', 'finalized']);
    assert.deepEqual(driver.published[1].data, { error: { message: 'provider down', type: 'FAILED_PRECONDITION' } });
    assert.deepEqual(driver.state.error, { message: 'provider down', type: 'FAILED_PRECONDITION' });
    await rejectsWith(driver.send({ type: 'message', content: 'retry' }), 'FAILED_PRECONDITION');
  });

  it('a model call error carries its user-actionable type (no key, rate limited ...) to the ERROR event', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    const error = new ModelCallError('NO_PROVIDER_KEY', 'the workspace has no OpenRouter key');
    await driver.fail('model_call_1', { code: error.code, message: error.message, details: error.details });
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.published[1].data, { error: { message: 'the workspace has no OpenRouter key', type: 'NO_PROVIDER_KEY' } });
  });

  describe('interrupted effects', () => {
    it('runs an interrupted model call again with the same id and input, its request rebuilt from the state', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      const first = driver.runningModelCall();
      await driver.interrupt('model_call_1');
      const again = driver.runningModelCall();
      assert.deepEqual({ ...again, attempt: 1 }, first);
      assert.equal(again.attempt, 2);
      await driver.modelAnswers({ content: 'fine' });
      assert.equal(statusOf(driver), 'COMPLETED');
    });

    it('runs an interrupted tool call again with the same id (the same Idempotency-Key)', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }] });
      const first = driver.running.get(driver.callId('call_1'))!;
      await driver.interrupt(driver.callId('call_1'));
      const again = driver.running.get(driver.callId('call_1'))!;
      assert.deepEqual({ ...again, attempt: 1 }, first);
      assert.equal(driver.kinds().filter((kind) => kind === 'tool_called').length, 1, 'a re-run is no new event');
      await driver.succeed(driver.callId('call_1'), toolSuccess(driver.callId('call_1'), 'ok'));
      assert.equal(driver.runningModelCall().id, 'model_call_2');
    });

    it('drops an interrupted effect the objective no longer expects', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      const stale = driver.runningModelCall();
      await driver.send({ type: 'cancel' });
      const decision = await driver.behavior.onEffectInterrupted!(driver.state, stale, { kind: 'objective', id: 'obj_1', now: new Date() });
      assert.deepEqual(decision, {});
    });
  });

  describe('results and placeholders before the next model call', () => {
    it('a tool call past its deadline gets [timed out] and a TOOL_ERROR', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }, { id: 'b', name: 'lookup', arguments: '{}' }] });
      await driver.fail(driver.callId('a'), { code: 'DEADLINE_EXCEEDED', message: 'deadline passed' });
      await driver.succeed(driver.callId('b'), toolSuccess(driver.callId('b'), 'B'));
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'a', content: '[timed out]' }, { toolCallId: 'b', content: 'B' }]);
      const error = driver.published.find((event) => event.type === 'objective_event.tool_error');
      assert.deepEqual(error?.data, { toolError: { message: 'DEADLINE_EXCEEDED: deadline passed', toolCallId: driver.callId('a') } });
    });

    it('a failed tool outcome gives the model its explanation', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
      await driver.succeed(driver.callId('a'), {
        ok: false, toolCallId: driver.callId('a'), toolId: 'tool_1', kind: 'http', content: 'HTTP 500 from the tool', truncated: false, durationMs: 3, errorType: 'HTTP_ERROR', message: 'POST https://tools.example.com/lookup answered 500',
      });
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'a', content: 'HTTP 500 from the tool' }]);
    });

    it('an unknown tool name is answered without running anything', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'x', name: 'nonexistent', arguments: '{}' }] });
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'x', content: 'unknown tool: nonexistent' }]);
    });

    it('a call left without a result when an output ended the turn gets [cancelled] before the next model call', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition: { type: 'object' }, tools: [lookupTool({ requiresApproval: true })] });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out', name: 'emit_output', arguments: '{"done":true}' }, { id: 'held', name: 'lookup', arguments: '{}' }] });
      assert.equal(statusOf(driver), 'COMPLETED', 'a valid output does not wait for a pending approval');
      assert.deepEqual(driver.state.output, { done: true });
      await rejectsWith(driver.send({ type: 'approve', toolCallId: driver.callId('held') }), 'FAILED_PRECONDITION');
      await driver.send({ type: 'message', content: 'and then?' });
      assert.equal(statusOf(driver), 'RUNNING');
      assert.equal(driver.runningModelCall().id, 'model_call_2');
      assert.deepEqual(driver.modelRequest().messages.slice(-3), [
        { role: 'tool', toolCallId: 'out', content: 'output accepted' },
        { role: 'tool', toolCallId: 'held', content: '[cancelled]' },
        { role: 'user', content: 'and then?' },
      ]);
    });

    it('a valid output waits for the running calls of its turn, then completes', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition: { type: 'object' } });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }, { id: 'out', name: 'emit_output', arguments: '{}' }] });
      assert.equal(statusOf(driver), 'RUNNING');
      await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
      assert.equal(statusOf(driver), 'COMPLETED');
      assert.equal(driver.running.size, 0);
      assert.equal(driver.kinds().at(-1), 'finalized');
    });

    it('a follow-up after COMPLETED runs the objective again', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: 'first answer' });
      await driver.send({ type: 'message', content: 'and then?' });
      assert.equal(statusOf(driver), 'RUNNING');
      assert.deepEqual(driver.modelRequest().messages.slice(-2), [{ role: 'assistant', content: 'first answer' }, { role: 'user', content: 'and then?' }]);
      await driver.modelAnswers({ content: 'second answer' });
      assert.equal(statusOf(driver), 'COMPLETED');
      assert.deepEqual(driver.kinds(), ['user_message', 'assistant_message', 'finalized', 'user_message', 'assistant_message', 'finalized']);
      assert.deepEqual(driver.sequences(), [1, 2, 3, 4, 5, 6]);
    });

    it('a follow-up while a tool runs is taken at the next model call, after the tool results', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
      await driver.send({ type: 'message', content: 'hurry' });
      await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
      assert.deepEqual(driver.modelRequest().messages.slice(-2), [{ role: 'tool', toolCallId: 'a', content: 'A' }, { role: 'user', content: 'hurry' }]);
    });

    it('a message sent while the model produces its output is answered before the objective completes', async () => {
      const outputDefinition = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
      const driver = new ObjectiveDriver();
      await driver.start({ outputDefinition });
      await driver.send({ type: 'message', content: 'and in French?' });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'out_1', name: 'emit_output', arguments: '{"answer":42}' }] });
      assert.equal(statusOf(driver), 'RUNNING');
      assert.deepEqual(driver.modelRequest().messages.slice(-2), [{ role: 'tool', toolCallId: 'out_1', content: 'output accepted' }, { role: 'user', content: 'and in French?' }]);
      await driver.modelAnswers({ content: 'quarante-deux' });
      assert.equal(statusOf(driver), 'COMPLETED');
      assert.deepEqual(driver.state.output, { answer: 42 });
      assert.equal(driver.state.lastMessage, 'quarante-deux');
      assert.deepEqual(driver.kinds().filter((kind) => kind === 'finalized'), ['finalized'], 'one FINALIZED, after the answer');
    });

    it('a final answer while a user message waits calls the model again instead of completing', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.send({ type: 'message', content: 'one more thing' });
      await driver.modelAnswers({ content: 'first' });
      assert.equal(statusOf(driver), 'RUNNING');
      assert.deepEqual(driver.modelRequest().messages.at(-1), { role: 'user', content: 'one more thing' });
    });
  });

  describe('tool call ids', () => {
    it('two calls with one id in one answer both run under ids of their own; the model gets both results under its id', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'dup', name: 'lookup', arguments: '{"q":1}' }, { id: 'dup', name: 'lookup', arguments: '{"q":2}' }] });
      const [first, second] = driver.callIds('dup');
      assert.notEqual(first, second);
      assert.deepEqual([...driver.running.keys()], [first, second]);
      assert.deepEqual([...driver.running.values()].map((effect) => (effect.input as { toolCallId: string }).toolCallId), [first, second], 'the Idempotency-Keys differ');
      await driver.succeed(second, toolSuccess(second, 'second'));
      assert.equal(driver.running.has(first), true, 'the first call still runs');
      await driver.succeed(first, toolSuccess(first, 'first'));
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'dup', content: 'first' }, { toolCallId: 'dup', content: 'second' }]);
      const assistant = driver.modelRequest().messages.find((message) => message.role === 'assistant');
      assert.deepEqual(assistant && 'toolCalls' in assistant ? assistant.toolCalls?.map((call) => call.id) : null, ['dup', 'dup'], 'the model sees its own ids');
      const called = driver.published.filter((event) => event.type === 'objective_event.tool_called').map((event) => (event.data as { toolCalled: { toolCallId: string } }).toolCalled.toolCallId);
      assert.deepEqual(called, [first, second]);
      assert.equal(driver.state.toolCallCount, 2);
    });

    it('an id the model used in an earlier turn (or another objective) runs again under a new id', async () => {
      const driver = new ObjectiveDriver();
      const other = new ObjectiveDriver('obj_2');
      for (const objective of [driver, other]) {
        await objective.start();
        await objective.modelAnswers({ content: null, toolCalls: [{ id: 'call_0', name: 'lookup', arguments: '{}' }] });
      }
      await driver.succeed(driver.callId('call_0'), toolSuccess(driver.callId('call_0'), 'A'));
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_0', name: 'lookup', arguments: '{}' }] });
      const ids = [...driver.callIds('call_0'), ...other.callIds('call_0')];
      assert.equal(new Set(ids).size, 3, `every call its own id: ${ids.join(', ')}`);
      await driver.succeed(driver.callId('call_0'), toolSuccess(driver.callId('call_0'), 'B'));
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'call_0', content: 'A' }, { toolCallId: 'call_0', content: 'B' }]);
      assert.equal(driver.state.toolCallCount, 2);
    });

    it('approve and deny take the service\'s id of a call whose model id repeats', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [lookupTool({ requiresApproval: true })] });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'x', name: 'lookup', arguments: '{}' }, { id: 'x', name: 'lookup', arguments: '{}' }] });
      const [first, second] = driver.callIds('x');
      assert.deepEqual(driver.state.turnCalls.map((call) => [call.id, call.state]), [[first, 'awaiting_approval'], [second, 'awaiting_approval']]);
      await driver.send({ type: 'deny', toolCallId: second, memo: 'no' });
      await driver.send({ type: 'approve', toolCallId: first });
      await driver.succeed(first, toolSuccess(first, 'done'));
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'x', content: 'done' }, { toolCallId: 'x', content: '[denied: no]' }]);
    });

    it('a call whose model id is unfit for a path or a header (or empty) runs under the service\'s id', async () => {
      const driver = new ObjectiveDriver();
      await driver.start();
      await driver.modelAnswers({ content: null, toolCalls: [{ id: '', name: 'lookup', arguments: '{}' }, { id: 'a/b c', name: 'lookup', arguments: '{}' }] });
      assert.deepEqual([...driver.running.keys()], [driver.callId(''), driver.callId('a/b c')]);
      assert.ok([...driver.running.keys()].every((id) => isId('toolCall', id)));
    });

    it('replays a journal written before, whose calls kept the model\'s ids (a suffix where one repeated)', async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ tools: [lookupTool({ requiresApproval: true })] });
      await driver.modelAnswers({ content: null, toolCalls: [{ id: 'x', name: 'lookup', arguments: '{}' }, { id: 'x', name: 'lookup', arguments: '{}' }] });
      // What the journal held before: the model's id when new to the objective, else a suffix with the model's id as providerId.
      const [first, second] = driver.callIds('x');
      const renamed = JSON.parse(JSON.stringify(driver.journal).replaceAll(first, 'x').replaceAll(second, 'x_2')) as ObjectiveEvent[];
      const written = renamed.map((event): ObjectiveEvent => (event.type === 'tool_calls_received'
        ? { type: 'tool_calls_received', calls: [{ id: 'x', counted: true }, { id: 'x_2', providerId: 'x', counted: true }] }
        : event));
      driver.journal.splice(0, driver.journal.length, ...written);
      driver.state = written.reduce((state, event) => driver.behavior.evolve(state, event), driver.behavior.initialState('obj_1'));
      assert.deepEqual((await driver.send({ type: 'get' }))?.info.pendingToolCallIds, ['x', 'x_2']);
      await driver.send({ type: 'deny', toolCallId: 'x_2', memo: 'no' });
      await driver.send({ type: 'approve', toolCallId: 'x' });
      await driver.succeed('x', toolSuccess('x', 'done'));
      assert.deepEqual(toolMessages(driver.modelRequest().messages), [{ toolCallId: 'x', content: 'done' }, { toolCallId: 'x', content: '[denied: no]' }]);
    });
  });

  it('commands before start are NOT_FOUND; a second start is FAILED_PRECONDITION', async () => {
    const driver = new ObjectiveDriver();
    await rejectsWith(driver.send({ type: 'get' }), 'NOT_FOUND');
    await driver.start();
    await rejectsWith(driver.start(), 'FAILED_PRECONDITION');
  });

  it('a result of an effect the objective no longer waits for changes nothing', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    const stale = driver.runningModelCall();
    await driver.send({ type: 'cancel' });
    const decision = await driver.behavior.onEffectResult!(driver.state, { ...stale, ok: true, value: { content: 'late' } }, { kind: 'objective', id: 'obj_1', now: new Date() });
    assert.deepEqual(decision, {});
  });
});
