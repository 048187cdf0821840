// Compaction (issue 25 item 4), driven without a runtime: the pure parts
// (the prompt estimate, tool result clearing, the tail, dropping the oldest
// turns, builtin/scripted's remainder), then the objective's decisions: tool
// result clearing alone, a summarization into a new context window, a
// summarizer that fails or answers nothing (drop the oldest turns), a crash
// and a cancel during summarization, the provider's context-length error
// (forced compaction, one retry), and builtin/scripted performing a long
// script across compactions. The driver replays the journal after every
// decision, so each test also proves that `evolve` alone rebuilds the state.
import assert from 'node:assert/strict';
import { ModelCallError } from '../../../src/models/model-call-error';
import { SCRIPT_DONE_SUMMARY, ScriptedChatModel } from '../../../src/models/scripted-model';
import { scriptRemainder, scriptTurns } from '../../../src/models/scripted-script';
import {
  clearingOf, CONTINUE_INSTRUCTIONS, DEFAULT_SUMMARIZATION_INSTRUCTIONS, dropOldestTurns, promptTokensEstimate, tailStartOf, wholeRequestTokens,
} from '../../../src/objectives/objective-compaction';
import { objectiveEventBody } from '../../../src/objectives/objective-events';
import type { ChatMessage, ChatRequest, ChatResponse } from '../../../src/objectives/chat-model-types';
import type { ToolCallEffectInput } from '../../../src/objectives/objective-loop';
import { isTerminal, type ObjectiveCompaction, type ObjectiveEventRecord } from '../../../src/objectives/objective-state';
import type { EffectError } from '../../../src/ports/actor-behavior';
import { lookupTool, ObjectiveDriver, startOf, toolSuccess } from './objective-driver';

/* eslint-disable @typescript-eslint/no-explicit-any */

const statusOf = (driver: ObjectiveDriver) => driver.state.status?.replace('OBJECTIVE_STATUS_', '');
const RESULT = (size: number, fill = 'r') => fill.repeat(size);
/** 500 tokens: 2,000 characters. */
const COMPACTION: ObjectiveCompaction = { maxInputTokens: 1000, triggerThreshold: 0.5, preserveRecentResults: 2 };

function effectErrorOf(error: ModelCallError): EffectError {
  return { code: error.code, message: error.message, details: error.details };
}

const contextTooLong = () => effectErrorOf(new ModelCallError('CONTEXT_TOO_LONG', 'the conversation is longer than model m accepts (HTTP 400: maximum context length exceeded)'));

function call(id: string, args = '{}'): ChatResponse {
  return { content: null, toolCalls: [{ id, name: 'lookup', arguments: args }], usage: undefined };
}

function answerWith(response: ChatResponse, promptTokens: number): ChatResponse {
  return { ...response, usage: { promptTokens, completionTokens: 5, costCents: 0 } };
}

/** The published events' `objectiveEvent` bodies. */
function bodies(driver: ObjectiveDriver): any[] {
  return driver.published.map((event) => (event.payload as any).data.objectiveEvent);
}

function compactedEvents(driver: ObjectiveDriver): any[] {
  return bodies(driver).filter((body) => body.data.type === 'OBJECTIVE_EVENT_TYPE_CONTEXT_WINDOW_COMPACTED');
}

/** One tool call answered with a result of `size` characters. */
async function toolTurn(driver: ObjectiveDriver, providerId: string, size: number, promptTokens: number): Promise<void> {
  await driver.modelAnswers(answerWith(call(providerId), promptTokens));
  const id = driver.callId(providerId);
  await driver.succeed(id, toolSuccess(id, RESULT(size)));
}

describe('compaction: the pure parts', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c1', content: 'one' },
    { role: 'assistant', content: 'thinking', toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{}' }, { id: 'c3', name: 'lookup', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'c2', content: 'two' },
    { role: 'tool', toolCallId: 'c3', content: 'three' },
    { role: 'user', content: 'and then?' },
  ];

  it('clearing keeps the newest preserveRecentResults tool results and counts the others not cleared yet', () => {
    assert.deepEqual(clearingOf(messages, 3), { before: 2, count: 0, from: 2 }, 'as many results as preserved: nothing to clear');
    assert.deepEqual(clearingOf(messages, 4), { before: 0, count: 0, from: 0 }, 'fewer results than preserved: nothing to clear');
    const older: ChatMessage[] = [
      ...messages.slice(0, 6),
      { role: 'assistant', content: null, toolCalls: [{ id: 'c4', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c4', content: 'four' },
    ];
    assert.deepEqual(clearingOf(older, 2), { before: 5, count: 2, from: 2 });
    assert.deepEqual(clearingOf(older, 3), { before: 4, count: 1, from: 2 });
    const cleared = older.map((message, index) => (index === 2 ? { ...message, content: '[result cleared]' } : message));
    assert.deepEqual(clearingOf(cleared, 2), { before: 5, count: 1, from: 4 }, 'a cleared result is not counted again');
  });

  it('clearing never touches the tail: results the model has not read yet', () => {
    // The tail starts at the assistant message of index 3 (its results c2, c3 and the user message after them).
    assert.deepEqual(clearingOf(messages, 2), { before: 3, count: 1, from: 2 });
    assert.deepEqual(clearingOf(messages, 1), { before: 3, count: 1, from: 2 });
    assert.deepEqual(clearingOf(messages, 0), { before: 3, count: 1, from: 2 }, 'preserveRecentResults 0 still leaves the unread results');
  });

  it('the tail is the latest assistant tool-call message with its results and the user messages after them', () => {
    assert.equal(tailStartOf(messages), 3);
    assert.equal(tailStartOf([...messages, { role: 'assistant', content: 'done' }, { role: 'user', content: 'more' }]), 8, 'after a final answer: the user messages waiting');
    assert.equal(tailStartOf([{ role: 'user', content: 'task' }]), 0, 'no assistant message: nothing before the tail');
  });

  it('dropping the oldest turns keeps the first user message and the tail, drops whole turns, and stops under the threshold', () => {
    const long = (text: string) => text.repeat(400);
    const conversation: ChatMessage[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: long('a') },
      { role: 'user', content: long('u') },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c2', content: long('b') },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c3', name: 'lookup', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c3', content: 'tail' },
    ];
    // 4 + 8 + 400 + 400 + 8 + 400 + 8 + 4 = 1,232 characters: 308 tokens.
    assert.deepEqual(dropOldestTurns(conversation, 6, 0, 250), { keepFirst: true, keepFrom: 3, dropped: 2 }, 'the first turn (call and result) goes: 206 tokens');
    assert.deepEqual(dropOldestTurns(conversation, 6, 0, 150), { keepFirst: true, keepFrom: 4, dropped: 3 });
    assert.deepEqual(dropOldestTurns(conversation, 6, 0, 10), { keepFirst: true, keepFrom: 6, dropped: 5 }, 'never into the tail');
    assert.deepEqual(dropOldestTurns(conversation, 6, 0, 400), { keepFirst: true, keepFrom: 1, dropped: 0 }, 'under the threshold: nothing');
    assert.deepEqual(dropOldestTurns(conversation, 6, 800, 250), { keepFirst: true, keepFrom: 6, dropped: 5 }, 'the system prompt and tools count');
  });

  it('the estimate is the last reported prompt plus what came since, else the whole request', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION });
    const whole = wholeRequestTokens(driver.state);
    const request = driver.modelRequest();
    const characters = (request.messages[0].content ?? '').length + JSON.stringify(request.tools).length + 'hello'.length;
    assert.equal(whole, Math.ceil(characters / 4), 'system prompt, tool definitions and messages, a token per 4 characters');
    assert.equal(promptTokensEstimate(driver.state), whole, 'no usage reported yet');
    await driver.modelAnswers(answerWith(call('c1', '{"q":"x"}'), 1234));
    const id = driver.callId('c1');
    await driver.succeed(id, toolSuccess(id, RESULT(400)));
    // The running call's request added the assistant call (6 + 9 characters) and the result (400).
    assert.equal(promptTokensEstimate(driver.state), 1234 + Math.ceil((6 + 9 + 400) / 4));
  });

  it('builtin/scripted summarizes as the rest of its script, counted over the summarized messages', () => {
    const script = 'Do this:\nCALL a {}\nSLEEP 5\nCALL b {}\nCALL c {}\nSAY half way\nSLEEP 1\nOUTPUT {"x":1}';
    assert.equal(scriptRemainder(script, 0), 'CALL a {}\nSLEEP 5\nCALL b {}\nCALL c {}\nSAY half way\nSLEEP 1\nOUTPUT {"x":1}');
    assert.equal(scriptRemainder(script, 1), 'SLEEP 5\nCALL b {}\nCALL c {}\nSAY half way\nSLEEP 1\nOUTPUT {"x":1}');
    assert.equal(scriptRemainder(script, 4), '');
    for (let performed = 0; performed <= 4; performed++) {
      assert.deepEqual(scriptTurns(scriptRemainder(script, performed)), scriptTurns(script).slice(performed), `the remainder after ${performed} turns performs the same turns`);
    }
  });

  it('an event carries its context window id at the top of objectiveEvent, and none when it has none', () => {
    const record: ObjectiveEventRecord = { id: 'objevt_1', objectiveId: 'obj_1', sequence: 1, type: 'USER_MESSAGE', createdAt: '2026-11-23T12:00:00.000Z', data: { userMessage: { content: 'hi' } } };
    const objective = startOf().metadata.objective;
    assert.equal(objectiveEventBody(objective, { ...record, contextWindowId: 'ctxwin_1' }).contextWindowId, 'ctxwin_1');
    assert.ok(!('contextWindowId' in objectiveEventBody(objective, record)));
  });
});

describe('compaction in the objective loop', () => {
  it('every event carries the first context window id, drawn at the start and journaled', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION });
    const [created] = driver.journal;
    assert.equal(created.type, 'created');
    const id = (created as any).contextWindowId as string;
    assert.match(id, /^ctxwin_[0-9A-Z]{26}$/u);
    assert.deepEqual(driver.state.contextWindow, { id, sequence: 1 });
    await driver.modelAnswers({ content: 'hi' });
    assert.deepEqual(bodies(driver).map((body) => body.contextWindowId), [id, id, id]);
  });

  it('an objective started without compaction settings never compacts', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await toolTurn(driver, 'c1', 8000, 10);
    await toolTurn(driver, 'c2', 8000, 4000);
    assert.equal(driver.modelRequest().messages.filter((message) => message.content === RESULT(8000)).length, 2);
    assert.equal(compactedEvents(driver).length, 0);
  });

  it('clears tool results older than preserveRecentResults, keeping the calls, when that brings the prompt under the threshold', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: { ...COMPACTION, preserveRecentResults: 1 } });
    const windowId = driver.state.contextWindow!.id;
    await toolTurn(driver, 'c1', 1200, 50);
    assert.equal(compactedEvents(driver).length, 0, '50 + 2 + 300 tokens: under 500');
    await toolTurn(driver, 'c2', 1200, 360);
    const [compacted] = compactedEvents(driver);
    assert.deepEqual(compacted.data.contextWindowCompacted, { messagesCompacted: 1, strategies: ['tool_result_clearing'] });
    assert.equal(compacted.contextWindowId, windowId, 'clearing keeps the window');
    const messages = driver.modelRequest().messages;
    assert.deepEqual(messages.filter((message) => message.role === 'tool').map((message) => message.content), ['[result cleared]', RESULT(1200)]);
    assert.equal(messages.filter((message) => message.role === 'assistant').length, 2, 'the tool-call messages stay');
    assert.ok(wholeRequestTokens(driver.state) <= 500);
    assert.deepEqual(driver.state.promptBase?.tokens, 360 - Math.floor((1200 - '[result cleared]'.length) / 4), 'the provider\'s count less what clearing removed');
  });

  /** Two turns of 1,400-character results with preserveRecentResults 2: 752 tokens, nothing to clear, a summarization. */
  async function summarizing(overrides: Partial<ObjectiveCompaction> = {}): Promise<ObjectiveDriver> {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: { ...COMPACTION, ...overrides } });
    await toolTurn(driver, 'c1', 1400, 50);
    await toolTurn(driver, 'c2', 1400, 400);
    return driver;
  }

  it('summarizes what precedes the tail into a new context window whose first message is the summary', async () => {
    const driver = await summarizing({ summarizationInstructions: 'Summarize tersely.' });
    const firstWindow = driver.state.contextWindow!.id;
    const summarize = driver.running.get('summarize_3')!;
    assert.ok(summarize, 'the summarization runs before the model call');
    assert.equal(summarize.name, 'model.summarize');
    assert.deepEqual(summarize.input, { workspaceId: 'ws_1' });
    assert.ok(![...driver.running.values()].some((effect) => effect.name === 'model.call'), 'the model call waits');
    const request = summarize.transientInput as ChatRequest;
    assert.equal(request.purpose, 'summarization');
    assert.equal(request.toolChoice, 'none');
    assert.deepEqual(request.messages.map((message) => message.role), ['system', 'user', 'assistant', 'tool', 'user']);
    assert.deepEqual(request.messages.at(-1), { role: 'user', content: 'Summarize tersely.' });
    await driver.send({ type: 'message', content: 'also this' });
    assert.equal(statusOf(driver), 'RUNNING');

    await driver.succeed('summarize_3', { content: ' The summary. ', usage: { promptTokens: 420, completionTokens: 12, costCents: 0.5 } });
    const [compacted] = compactedEvents(driver);
    const windowId = driver.state.contextWindow!.id;
    assert.notEqual(windowId, firstWindow);
    assert.equal(compacted.contextWindowId, windowId, 'the event opens the new window');
    assert.deepEqual(compacted.data.contextWindowCompacted, {
      messagesCompacted: 3,
      strategies: ['summarization'],
      summary: 'The summary.',
      usage: { promptTokens: 420, completionTokens: 12, costCents: 0.5 },
      newContextWindow: {
        objectiveId: 'obj_1', sequence: 2, promptTokens: wholeRequestTokens(driver.state), completionTokens: 12, previousWindowContinueInstructions: CONTINUE_INSTRUCTIONS,
      },
    });
    assert.ok(wholeRequestTokens(driver.state) <= 500, `${wholeRequestTokens(driver.state)} tokens after the summary`);
    const messages = driver.modelRequest().messages;
    assert.deepEqual(messages.slice(1).map((message) => message.role), ['user', 'assistant', 'tool'], 'the summary, then the tail');
    assert.equal(messages[1].content, `${CONTINUE_INSTRUCTIONS}\n\nThe summary.`);
    assert.equal((messages[2] as any).toolCalls[0].id, 'c2');
    assert.equal(messages[3].content, RESULT(1400));
    assert.deepEqual(driver.state.usage, { promptTokens: 50 + 400 + 420, completionTokens: 5 + 5 + 12, costCents: 0.5 }, 'the summarizer is paid for');

    await driver.modelAnswers({ content: 'done', usage: { promptTokens: 400, completionTokens: 1, costCents: 0 } });
    assert.deepEqual(driver.modelRequest().messages.at(-1), { role: 'user', content: 'also this' }, 'the message that came meanwhile is answered next');
    await driver.modelAnswers({ content: 'that too' });
    assert.equal(statusOf(driver), 'COMPLETED');
    const later = bodies(driver).slice(bodies(driver).indexOf(compacted));
    assert.ok(later.every((body) => body.contextWindowId === windowId), 'later events are in the new window');
  });

  it("the summarizer's usage counts against maxTokens: past it, the objective fails before the model call", async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION, limits: { maxToolCalls: 0, maxSubObjectives: 0, maxTokens: 1000 } });
    await toolTurn(driver, 'c1', 1400, 50);
    await toolTurn(driver, 'c2', 1400, 400);
    await driver.succeed('summarize_3', { content: 'The summary.', usage: { promptTokens: 500, completionTokens: 40, costCents: 0 } });
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error!.type, 'LIMIT_REACHED');
    assert.match(driver.state.error!.message, /maxTokens \(1000 tokens used/u);
    assert.equal(driver.running.size, 0, 'no model call started');
    assert.deepEqual(driver.kinds().slice(-3), ['context_window_compacted', 'error', 'finalized']);
  });

  it('a summarization interrupted by a crash runs again with the same request; a cancel aborts it', async () => {
    const driver = await summarizing();
    const first = driver.running.get('summarize_3')!.transientInput;
    await driver.interrupt('summarize_3');
    assert.deepEqual(driver.running.get('summarize_3')!.transientInput, first, 'the request is rebuilt from the state');
    assert.equal(driver.starts.at(-1)!.attempt, 2);
    await driver.send({ type: 'cancel', reason: 'stop' });
    assert.equal(statusOf(driver), 'CANCELLED');
    assert.deepEqual(driver.aborted, ['summarize_3']);
    assert.equal(driver.state.summarizing, null);
    assert.equal(driver.running.size, 0);
  });

  for (const [name, outcome] of [
    ['fails', { ok: false, error: effectErrorOf(new ModelCallError('PROVIDER_UNAVAILABLE', 'the provider is unavailable (HTTP 503)', { retryable: true, status: 503 })) }],
    ['answers no text', { ok: true, value: { content: '   ', toolCalls: [] } }],
  ] as const) {
    it(`a summarizer that ${name} falls back to dropping the oldest turns, and the objective goes on`, async () => {
      const driver = await summarizing();
      if (outcome.ok) await driver.succeed('summarize_3', outcome.value);
      else await driver.fail('summarize_3', outcome.error);
      const [compacted] = compactedEvents(driver);
      const fields = compacted.data.contextWindowCompacted;
      assert.deepEqual(fields.strategies, ['drop_oldest_turns']);
      assert.equal(fields.messagesCompacted, 2);
      assert.equal(fields.newContextWindow.sequence, 2);
      assert.deepEqual(fields.summarizationError, outcome.ok
        ? { message: 'the summarizer answered no text', type: 'PROVIDER_ERROR' }
        : { message: 'the provider is unavailable (HTTP 503)', type: 'PROVIDER_UNAVAILABLE' });
      assert.equal(fields.summary, undefined);
      const messages = driver.modelRequest().messages;
      assert.deepEqual(messages.slice(1).map((message) => message.role), ['user', 'assistant', 'tool']);
      assert.equal(messages[1].content, 'hello', 'the task stays');
      assert.equal((messages[2] as any).toolCalls[0].id, 'c2');
      await driver.modelAnswers({ content: 'done' });
      assert.equal(statusOf(driver), 'COMPLETED');
    });
  }

  it("a provider's context-length error forces a compaction and one retry; the answer completes the objective", async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION });
    await toolTurn(driver, 'c1', 100, 50);
    await driver.fail('model_call_2', contextTooLong());
    const error = bodies(driver).find((body) => body.data.type === 'OBJECTIVE_EVENT_TYPE_ERROR').data.error;
    assert.equal(error.type, 'CONTEXT_TOO_LONG');
    assert.match(error.message, /maximum context length exceeded.*; the context is compacted and the model call tried once more$/u);
    assert.equal(statusOf(driver), 'RUNNING');
    // Far under the threshold, still compacted: the head is only the first message.
    const request = driver.running.get('summarize_3')!.transientInput as ChatRequest;
    assert.deepEqual(request.messages.slice(1), [{ role: 'user', content: 'hello' }, { role: 'user', content: DEFAULT_SUMMARIZATION_INSTRUCTIONS }]);
    await driver.succeed('summarize_3', { content: 'Say hello.' });
    assert.deepEqual(compactedEvents(driver)[0].data.contextWindowCompacted.strategies, ['summarization']);
    assert.equal(driver.modelRequest().messages[1].content, `${CONTINUE_INSTRUCTIONS}\n\nSay hello.`);
    await driver.modelAnswers({ content: 'hello' });
    assert.equal(statusOf(driver), 'COMPLETED');
    assert.equal(driver.state.contextRetried, false);
  });

  it('counts each message once in messagesCompacted: results cleared, then summarized or kept', async () => {
    const forcedAfterThreeTurns = async () => {
      const driver = new ObjectiveDriver();
      await driver.start({ compaction: { ...COMPACTION, preserveRecentResults: 0 } });
      for (const [id, prompt] of [['c1', 50], ['c2', 80], ['c3', 110]] as const) await toolTurn(driver, id, 100, prompt);
      await driver.fail('model_call_4', contextTooLong());
      // preserveRecentResults 0 still leaves c3's result, which the model has not read: it is in the tail.
      const request = driver.running.get('summarize_5')!.transientInput as ChatRequest;
      assert.deepEqual(request.messages.filter((message) => message.role === 'tool').map((message) => message.content), ['[result cleared]', '[result cleared]']);
      return driver;
    };
    const summarized = await forcedAfterThreeTurns();
    await summarized.succeed('summarize_5', { content: 'Three lookups so far.' });
    const fields = compactedEvents(summarized)[0].data.contextWindowCompacted;
    assert.deepEqual([fields.strategies, fields.messagesCompacted], [['tool_result_clearing', 'summarization'], 5], 'user, c1, its result, c2, its result');
    assert.deepEqual(summarized.modelRequest().messages.filter((message) => message.role === 'tool').map((message) => message.content), [RESULT(100)]);

    const fallback = await forcedAfterThreeTurns();
    await fallback.fail('summarize_5', contextTooLong());
    const kept = compactedEvents(fallback)[0].data.contextWindowCompacted;
    assert.deepEqual([kept.strategies, kept.messagesCompacted], [['tool_result_clearing'], 2], 'nothing dropped under the threshold: the two results cleared');
  });

  it('does not summarize when even without everything before the tail the prompt stays above the threshold', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION });
    await toolTurn(driver, 'c1', 100, 50);
    await toolTurn(driver, 'c2', 100, 5000);
    assert.equal(driver.runningModelCall().id, 'model_call_3', 'the call goes as it is: no summarization before it');
    assert.equal([...driver.running.values()].filter((effect) => effect.name === 'model.summarize').length, 0);
    assert.deepEqual(compactedEvents(driver), [], 'nothing to clear either (the newest 2 results are kept)');
  });

  it('counts the definitions of tools search_tools found in the next estimate', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION, discovery: { hints: [], maxTools: 5, rerankThreshold: 0 } });
    await driver.modelAnswers(answerWith({ content: null, toolCalls: [{ id: 's1', name: 'search_tools', arguments: '{"query":"x"}' }] }, 100));
    const before = promptTokensEstimate(driver.state);
    const schema = { type: 'object', properties: { note: { type: 'string', description: 'd'.repeat(1600) } } };
    const found = lookupTool({ name: 'annotate', description: 'Annotates', inputSchema: schema, executable: { ...lookupTool().executable, id: 'tool_9' } });
    await driver.succeed(driver.callId('s1'), { ok: true, content: '', discoveredTools: [found] });
    assert.ok(promptTokensEstimate(driver.state) - before >= 400, `${promptTokensEstimate(driver.state) - before} more tokens for a 1,600-character schema`);
    assert.ok(promptTokensEstimate(driver.state) > 500, 'the new definitions take the estimate past the threshold (a compaction when there is a turn to compact)');
  });

  it('a second context-length error after the forced compaction fails the objective with it', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ compaction: COMPACTION });
    await toolTurn(driver, 'c1', 100, 50);
    await driver.fail('model_call_2', contextTooLong());
    await driver.succeed('summarize_3', { content: 'Say hello.' });
    await driver.fail('model_call_3', contextTooLong());
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error!.type, 'CONTEXT_TOO_LONG');
    assert.ok(!driver.state.error!.message.includes('tried once more'));
  });

  it('without compaction settings a context-length error fails at once, as before', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.fail('model_call_1', contextTooLong());
    assert.equal(statusOf(driver), 'FAILED');
    assert.equal(driver.state.error!.type, 'CONTEXT_TOO_LONG');
  });

  describe('builtin/scripted across compactions', () => {
    /** Runs every effect with builtin/scripted and 1,000-character tool results until the objective ends. */
    async function runScripted(driver: ObjectiveDriver): Promise<string[]> {
      const model = new ScriptedChatModel();
      const toolArguments: string[] = [];
      for (let step = 0; step < 1000 && !isTerminal(driver.state.status); step++) {
        const [effect] = driver.running.values();
        assert.ok(effect, 'something runs until the objective ends');
        if (effect.name === 'tool.call') {
          toolArguments.push((effect.input as ToolCallEffectInput).arguments);
          await driver.succeed(effect.id, toolSuccess(effect.id, RESULT(1000)));
        } else {
          await driver.succeed(effect.id, await model.complete(effect.transientInput as ChatRequest));
        }
      }
      return toolArguments;
    }

    for (const preserveRecentResults of [0, 1, 2]) {
      it(`a 12-call script is performed once and in order through clearing and summaries (preserveRecentResults ${preserveRecentResults})`, async () => {
        // SLEEP 0 between the calls makes each its own model turn (consecutive CALL lines are one turn's parallel calls).
        const lines = Array.from({ length: 12 }, (_, index) => `CALL lookup {"q":${index + 1}}`);
        const driver = new ObjectiveDriver();
        await driver.start({ compaction: { ...COMPACTION, preserveRecentResults }, initialMessage: `Run this:\n${lines.join('\nSLEEP 0\n')}\nSAY finished` });
        const toolArguments = await runScripted(driver);
        assert.equal(statusOf(driver), 'COMPLETED');
        assert.deepEqual(toolArguments, Array.from({ length: 12 }, (_, index) => `{"q":${index + 1}}`));
        const says = bodies(driver).filter((body) => body.data.type === 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE').map((body) => body.data.assistantMessage.content).filter(Boolean);
        assert.deepEqual(says, ['finished']);
        const strategies = compactedEvents(driver).flatMap((body) => body.data.contextWindowCompacted.strategies);
        // Clearing keeps up with 1,000-character results while one or none is preserved; with two it takes a summary each turn.
        const expected = preserveRecentResults < 2 ? 'tool_result_clearing' : 'summarization';
        assert.ok(strategies.length >= 5 && strategies.every((strategy) => strategy === expected), JSON.stringify(strategies));
        const prompts = bodies(driver).filter((body) => body.data.type === 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE').map((body) => body.data.assistantMessage.usage.promptTokens);
        assert.ok(Math.max(...prompts) <= 500, `every prompt under the threshold: ${prompts.join(', ')}`);
      });
    }

    it('the summary of a finished script is prose, and the objective completes with the last result', async () => {
      const model = new ScriptedChatModel();
      const answer = await model.complete({
        model: 'builtin/scripted', tools: [], purpose: 'summarization',
        messages: [{ role: 'user', content: 'SAY hi' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: DEFAULT_SUMMARIZATION_INSTRUCTIONS }],
      });
      assert.equal(answer.content, SCRIPT_DONE_SUMMARY);
    });
  });
});
