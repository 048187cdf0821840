// Compaction through the API (issue 25 item 4), with the embedded runtime,
// real Postgres and NATS, the fake OpenRouter over HTTP (a workspace key whose
// baseUrl points at it) and a real HTTP tool answering bodies of a known size.
// The catalog model's row gets a small maxInputTokens (2,000: the threshold
// is 1,500 tokens at the default 0.75), so a few tool results fill it: a
// compaction with a real summarization call (its request, the
// CONTEXT_WINDOW_COMPACTED event, the next request starting with the summary
// and under the threshold, the context window id changing), tool result
// clearing alone, a summarizer failure falling back to dropping the oldest
// turns, and the provider's context-length error (compaction and one retry;
// a second one fails the objective).
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createVariation } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { CONTINUE_INSTRUCTIONS } from '../../src/objectives/objective-compaction';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODEL = 'openai/gpt-4o-mini';
const MAX_INPUT_TOKENS = 2000;
const THRESHOLD_TOKENS = 1500;
const COMPACTED = 'OBJECTIVE_EVENT_TYPE_CONTEXT_WINDOW_COMPACTED';
const INSTRUCTIONS = 'Summarize for the test: keep the task.';
/** 800 tokens per tool result. */
const RESULT_BYTES = 3200;

describe('compaction through the API', function () {
  this.timeout(120_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let openRouter: FakeOpenRouter;
  let tools: TestToolServer;
  let agents = 0;

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const eventsOf = async (id: string) => (await get(`${base()}/objectives/${id}/events?limit=1000`)).items as any[];

  /** An agent on the small-window model with one tool, `sized`, answering RESULT_BYTES; `compactionConfig` as given. */
  async function agentWith(compactionConfig: Record<string, unknown>): Promise<string> {
    agents += 1;
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `compacting-${agents}` } })).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL }, compactionConfig } });
    const tool = await created(api, ws.token, `${base()}/tools`, {
      metadata: { name: `sized_${agents}` }, spec: { description: 'Returns a page', http: { url: `${tools.url}/sized?bytes=${RESULT_BYTES}`, method: 'POST' } },
    });
    await created(api, ws.token, `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
    return agentId;
  }

  const toolCall = (id: string, promptTokens: number) =>
    fakeAnswers.completion({ toolCalls: [{ id, name: `sized_${agents}`, arguments: '{}' }], usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 } });
  const final = (content: string, promptTokens = 700) =>
    fakeAnswers.completion({ content, usage: { prompt_tokens: promptTokens, completion_tokens: 3, total_tokens: promptTokens + 3 } });

  async function run(agentId: string): Promise<{ id: string; objective: any; events: any[] }> {
    const response = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId, initialMessage: 'Read the pages.' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.metadata.id as string;
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base()}/objectives/${id}`);
      return !['OBJECTIVE_STATUS_PENDING', 'OBJECTIVE_STATUS_RUNNING'].includes(objective.info.status);
    }, `objective ${id} ended`, 30_000);
    return { id, objective, events: await eventsOf(id) };
  }

  /** A wire request's prompt, estimated as the objective does: messages, then the tool definitions, a token per 4 characters. */
  function wireTokens(body: any): number {
    const characters = (body.messages as any[]).reduce((sum, message) => sum + (message.content?.length ?? 0)
      + (message.tool_calls ?? []).reduce((calls: number, call: any) => calls + call.function.name.length + call.function.arguments.length, 0), 0);
    const tools = (body.tools ?? []).map((tool: any) => ({ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters }));
    return Math.ceil((characters + (tools.length ? JSON.stringify(tools).length : 0)) / 4);
  }

  const typesOf = (events: any[]) => events.map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1' } });
    ws = await workspaceFixture(api);
    openRouter = await startFakeOpenRouter();
    tools = await startTestToolServer();
    await created(api, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
    // No API sets a model's window: the workspace's catalog row gets a small one.
    await api.dataSource.query('UPDATE models SET max_input_tokens = $1 WHERE workspace_id = $2 AND name = $3', [MAX_INPUT_TOKENS, ws.workspaceId, MODEL]);
  });

  afterEach(() => openRouter.reset());

  after(async () => {
    await api?.close();
    await openRouter?.close();
    await tools?.close();
  });

  it('summarizes with a real model call into a new context window that starts with the summary', async () => {
    const agentId = await agentWith({ summarization: { instructions: INSTRUCTIONS } });
    openRouter.answer(
      toolCall('c1', 100),
      toolCall('c2', 900),
      fakeAnswers.completion({ content: 'SUMMARY: page one was read.', usage: { prompt_tokens: 950, completion_tokens: 20, total_tokens: 970 } }),
      final('done'),
    );
    const { id, objective, events } = await run(agentId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(openRouter.requests.length, 4);

    // The third request is the summarization: what precedes the tail, then the instructions; no `purpose` on the wire.
    const summarization = (openRouter.requests[2].body as any);
    assert.equal(summarization.model, MODEL);
    assert.deepEqual(summarization.messages.map((message: any) => message.role), ['system', 'user', 'assistant', 'tool', 'user']);
    assert.deepEqual(summarization.messages.at(-1), { role: 'user', content: INSTRUCTIONS });
    assert.equal(summarization.tool_choice, 'none');
    assert.ok(!('purpose' in summarization));
    assert.ok(wireTokens((openRouter.requests[1].body as any)) <= THRESHOLD_TOKENS, 'the second call was under the threshold');

    // The next model call: the summary first, then the tail (the latest call and its result), under the threshold.
    const next = (openRouter.requests[3].body as any);
    assert.deepEqual(next.messages.map((message: any) => message.role), ['system', 'user', 'assistant', 'tool']);
    assert.equal(next.messages[1].content, `${CONTINUE_INSTRUCTIONS}\n\nSUMMARY: page one was read.`);
    assert.equal(next.messages[2].tool_calls[0].id, 'c2');
    assert.equal(next.messages[3].content.length, RESULT_BYTES);
    const nextTokens = wireTokens(next);
    assert.ok(nextTokens <= THRESHOLD_TOKENS, `${nextTokens} tokens after the summary`);

    assert.deepEqual(typesOf(events), [
      'USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'CONTEXT_WINDOW_COMPACTED', 'ASSISTANT_MESSAGE', 'FINALIZED',
    ]);
    const compacted = events.find((event) => event.data.type === COMPACTED);
    const fields = compacted.data.contextWindowCompacted;
    assert.equal(fields.messagesCompacted, 3);
    assert.deepEqual(fields.strategies, ['summarization']);
    assert.equal(fields.summary, 'SUMMARY: page one was read.');
    assert.equal(fields.usage.promptTokens, 950);
    assert.deepEqual(fields.newContextWindow, {
      objectiveId: id, sequence: 2, promptTokens: nextTokens, completionTokens: 20, previousWindowContinueInstructions: CONTINUE_INSTRUCTIONS,
    });
    // Every event has a window; the compaction opens the second, which the later events share.
    const windows = events.map((event) => event.contextWindowId);
    assert.ok(windows.every((window) => /^ctxwin_[0-9A-Z]{26}$/u.test(window)), JSON.stringify(windows));
    const at = events.indexOf(compacted);
    assert.equal(new Set(windows.slice(0, at)).size, 1);
    assert.equal(new Set(windows.slice(at)).size, 1);
    assert.notEqual(windows[0], windows[at]);
    // So does the event stream (SSE) of the finished objective…
    const stream = await fetch(`${api.url}${base()}/objectives/${id}/events/stream`, { headers: { authorization: `Bearer ${ws.token}` } });
    const streamed = (await stream.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
    assert.deepEqual(streamed.map((event) => event.contextWindowId), windows);
    // …and the published envelopes (webhooks, NATS).
    const stored = await api.dataSource.query(
      `SELECT sequence, envelope #>> '{data,objectiveEvent,contextWindowId}' AS window FROM objective_events WHERE objective_id = $1 ORDER BY sequence`, [id],
    ) as Array<{ window: string }>;
    assert.deepEqual(stored.map((row) => row.window), windows);
    // The summarizer's usage is the objective's too.
    assert.equal(objective.info.usage.promptTokens, 100 + 900 + 950 + 700);
  });

  it('clears old tool results alone when that is enough, keeping preserveRecentResults and the window', async () => {
    const agentId = await agentWith({ toolResultClearing: { preserveRecentResults: 1 } });
    openRouter.answer(toolCall('c1', 100), toolCall('c2', 1000), final('done'));
    const { objective, events } = await run(agentId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(openRouter.requests.length, 3, 'no summarization call');
    const toolMessages = (openRouter.requests[2].body as any).messages.filter((message: any) => message.role === 'tool').map((message: any) => message.content);
    assert.deepEqual(toolMessages.map((content: string) => (content === '[result cleared]' ? content : content.length)), ['[result cleared]', RESULT_BYTES]);
    assert.equal((openRouter.requests[2].body as any).messages.filter((message: any) => message.role === 'assistant').length, 2, 'the calls stay');
    const compacted = events.find((event) => event.data.type === COMPACTED);
    assert.deepEqual(compacted.data.contextWindowCompacted, { messagesCompacted: 1, strategies: ['tool_result_clearing'] });
    assert.equal(new Set(events.map((event) => event.contextWindowId)).size, 1, 'one window');
  });

  it('a failing summarizer falls back to dropping the oldest turns, and the objective completes', async () => {
    const agentId = await agentWith({});
    openRouter.answer(toolCall('c1', 100), toolCall('c2', 900), fakeAnswers.error(503, 'no capacity'), final('done'));
    const { objective, events } = await run(agentId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(openRouter.requests.length, 4);
    const next = (openRouter.requests[3].body as any);
    assert.deepEqual(next.messages.map((message: any) => message.role), ['system', 'user', 'assistant', 'tool']);
    assert.equal(next.messages[1].content, 'Read the pages.', 'the task stays');
    assert.equal(next.messages[2].tool_calls[0].id, 'c2');
    assert.ok(wireTokens(next) <= THRESHOLD_TOKENS);
    const fields = events.find((event) => event.data.type === COMPACTED).data.contextWindowCompacted;
    assert.deepEqual(fields.strategies, ['drop_oldest_turns']);
    assert.equal(fields.messagesCompacted, 2);
    assert.equal(fields.summarizationError.type, 'PROVIDER_UNAVAILABLE');
    assert.match(fields.summarizationError.message, /503/u);
    assert.equal(fields.newContextWindow.sequence, 2);
    assert.equal(events.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_ERROR').length, 0, 'no error event: the objective never failed');
  });

  it("a provider's context-length error compacts and retries once; the retry's answer completes the objective", async () => {
    const agentId = await agentWith({});
    openRouter.answer(
      toolCall('c1', 100),
      toolCall('c2', 300),
      fakeAnswers.error(400, "This model's maximum context length is 2000 tokens"),
      fakeAnswers.completion({ content: 'SUMMARY: one page read.' }),
      final('done'),
    );
    const { objective, events } = await run(agentId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(openRouter.requests.length, 5);
    assert.equal((openRouter.requests[3].body as any).messages.at(-1).role, 'user', 'the fourth request is the summarization');
    assert.equal((openRouter.requests[4].body as any).messages[1].content, `${CONTINUE_INSTRUCTIONS}\n\nSUMMARY: one page read.`);
    assert.deepEqual(typesOf(events).slice(7), ['ERROR', 'CONTEXT_WINDOW_COMPACTED', 'ASSISTANT_MESSAGE', 'FINALIZED']);
    const error = events[7].data.error;
    assert.equal(error.type, 'CONTEXT_TOO_LONG');
    assert.match(error.message, /the context is compacted and the model call tried once more$/u);
  });

  it('a second context-length error after the compaction fails the objective', async () => {
    const agentId = await agentWith({});
    const tooLong = () => fakeAnswers.error(400, "This model's maximum context length is 2000 tokens");
    openRouter.answer(toolCall('c1', 100), toolCall('c2', 300), tooLong(), fakeAnswers.completion({ content: 'SUMMARY' }), tooLong(), final('never asked'));
    const { objective, events } = await run(agentId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'CONTEXT_TOO_LONG');
    assert.equal(openRouter.requests.length, 5);
    // The first refusal's ERROR (the retry), the compaction, the second refusal's ERROR (the failure).
    assert.deepEqual(typesOf(events).slice(7), ['ERROR', 'CONTEXT_WINDOW_COMPACTED', 'ERROR', 'FINALIZED']);
    assert.doesNotMatch(objective.info.error.message, /tried once more/u);
  });
});
