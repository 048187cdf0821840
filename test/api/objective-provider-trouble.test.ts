// Provider trouble and runaway models through the API (issue 24 items 3 and
// 4), with the embedded runtime and the fake OpenRouter over HTTP: a 429 with
// Retry-After 45 s and a 50 s run of 503s both end COMPLETED, the objective
// RUNNING meanwhile with ERROR events that show each wait; the retry budget
// ends an objective FAILED with the provider's last error; a model that keeps
// calling a failing tool ends FAILED naming maxModelTurns at the default cap
// (and the variation's maxModelTurns and maxTokens at theirs); one whose
// variation sets no maxTokens ends FAILED naming maxTokens past the node's
// default (AGENTRT_OBJECTIVE_MAX_TOKENS, lowered on this node), which the
// variation's maxTokens overrides (0: no limit); past maxToolCalls the next
// request offers no tools. Also: a Retry-After as an HTTP date, a
// Retry-After longer than the retry budget and a 401 failing at once, a
// failed call's reported usage counted.
//
// Time: the test node runs the objective's retry waits and budget at 1/100
// of real time (AGENTRT_MODEL_RETRY_TIME_SCALE=0.01): a 45 s Retry-After is
// a durable reminder 450 ms later, 50 s of 503s last 500 ms of real time.
// Everything else is as in production: the objective's decisions, its
// reminders fired by the reminder poller, the provider over HTTP. With
// AGENTRT_MODEL_CALL_ATTEMPTS=1 every failure reaches the objective at once
// (no in-call retries, which would wait in real time).
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createVariation } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODEL = 'openai/gpt-4o-mini';
const ERROR = 'OBJECTIVE_EVENT_TYPE_ERROR';
const TIME_SCALE = 0.01;
/** This node's AGENTRT_OBJECTIVE_MAX_TOKENS: far above the fake's default 15 tokens per answer, reached only by large usage. */
const NODE_MAX_TOKENS = 1_000_000;

describe('objectives under provider trouble and runaway models', function () {
  this.timeout(120_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let openRouter: FakeOpenRouter;
  let tools: TestToolServer;

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const objectiveOf = (id: string) => get(`${base()}/objectives/${id}`);
  const eventsOf = async (id: string) => (await get(`${base()}/objectives/${id}/events?limit=1000`)).items as any[];

  /** An agent of its own (its one variation runs) on the OpenRouter model, with `spec` merged into the variation's. */
  async function agentWith(name: string, spec: Record<string, unknown> = {}, toolPath?: string): Promise<string> {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL }, ...spec } });
    if (toolPath) {
      const tool = await created(api, ws.token, `${base()}/tools`, { metadata: { name: `${name}-tool` }, spec: { description: 'Looks up', http: { url: `${tools.url}${toolPath}`, method: 'POST' } } });
      await created(api, ws.token, `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
    }
    return agentId;
  }

  async function startObjective(agentId: string, initialMessage = 'Hello'): Promise<string> {
    const response = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId, initialMessage } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id as string;
  }

  async function ended(id: string, timeoutMs = 30_000): Promise<any> {
    let objective: any;
    await eventually(async () => {
      objective = await objectiveOf(id);
      return !['OBJECTIVE_STATUS_PENDING', 'OBJECTIVE_STATUS_RUNNING'].includes(objective.info.status);
    }, `objective ${id} ended`, timeoutMs);
    return objective;
  }

  /** A wait's length in the objective's time: its ERROR event's `retryAt` from its `createdAt`, scaled back. */
  const objectiveMsOf = (wait: any) => (Date.parse(wait.data.error.retryAt) - Date.parse(wait.metadata.createdAt)) / TIME_SCALE;

  before(async () => {
    api = await startTestApi({ runtime: { reminderPollMs: 100 }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1', AGENTRT_MODEL_RETRY_TIME_SCALE: String(TIME_SCALE), AGENTRT_OBJECTIVE_MAX_TOKENS: String(NODE_MAX_TOKENS) } });
    ws = await workspaceFixture(api);
    openRouter = await startFakeOpenRouter();
    tools = await startTestToolServer();
    await created(api, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
  });

  afterEach(() => openRouter.reset());

  after(async () => {
    await api?.close();
    await openRouter?.close();
    await tools?.close();
  });

  it('a 429 with Retry-After 45 s waits RUNNING for 45 s, shows the wait, and then COMPLETES', async () => {
    const agentId = await agentWith('rate-limited');
    openRouter.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': '45' } }), fakeAnswers.completion({ content: 'done after the wait' }));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(openRouter.requests.length, 2);
    const events = await eventsOf(id);
    assert.deepEqual(events.map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', '')), ['USER_MESSAGE', 'ERROR', 'ASSISTANT_MESSAGE', 'FINALIZED']);
    const [wait] = events.filter((event) => event.data.type === ERROR);
    assert.equal(wait.data.error.type, 'RATE_LIMITED');
    assert.match(wait.data.error.message, /HTTP 429: Rate limit exceeded.*; the model call is tried again at \S+ \(in 45 s, failure 1\)$/u);
    assert.equal(objectiveMsOf(wait), 45_000, 'Retry-After honoured');
    assert.equal(events[2].data.assistantMessage.content, 'done after the wait');
    assert.ok(Date.parse(events[2].metadata.createdAt) >= Date.parse(wait.data.error.retryAt), 'the model was called again only once the wait was over');
    assert.equal(objective.info.error, undefined, 'a wait is no error of the objective');
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const agentId = await agentWith('rate-limited-until');
    const until = new Date(Date.now() + 45_000).toUTCString();
    openRouter.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': until } }), fakeAnswers.completion({ content: 'done' }));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    const [wait] = (await eventsOf(id)).filter((event) => event.data.type === ERROR);
    const waitMs = objectiveMsOf(wait);
    // The date has whole seconds, and the request took a moment.
    assert.ok(waitMs >= 42_000 && waitMs <= 45_000, `waited ${waitMs} ms for ${until}`);
  });

  it('a Retry-After longer than the retry budget fails the objective at once, with the provider\'s error', async () => {
    const agentId = await agentWith('rate-limited-too-long', { constraints: { modelRetryBudgetSeconds: 30 } });
    openRouter.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': '45' } }), fakeAnswers.completion({ content: 'never asked' }));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'RATE_LIMITED');
    assert.match(objective.info.error.message, /HTTP 429: Rate limit exceeded.*retry after 45 s.*\(the model call failed once over 0 s; its retry budget is 30 s\)$/u);
    assert.equal(openRouter.requests.length, 1, 'no second call');
    assert.equal((await eventsOf(id)).filter((event) => event.data.type === ERROR && event.data.error.retryAt).length, 0, 'no wait');
  });

  it('an error trying again cannot cure (HTTP 401) fails the objective at once', async () => {
    const agentId = await agentWith('refused');
    openRouter.answer(fakeAnswers.error(401, 'User not found.'));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'PROVIDER_KEY_REFUSED');
    assert.equal(openRouter.requests.length, 1);
    assert.equal((await eventsOf(id)).filter((event) => event.data.type === ERROR && event.data.error.retryAt).length, 0);
  });

  it('a provider answering 503 for 50 s is retried with growing waits while RUNNING, and the objective COMPLETES', async () => {
    const agentId = await agentWith('unavailable');
    openRouter.fallback(fakeAnswers.error(503, 'No available providers'));
    const id = await startObjective(agentId);
    await openRouter.arrived(1);
    const downSince = Date.now();
    // Back 50 s (of the objective's time) after the first failure.
    const recovery = setTimeout(() => openRouter.fallback(null), 50_000 * TIME_SCALE);
    try {
      const objective = await ended(id);
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    } finally {
      clearTimeout(recovery);
    }
    assert.ok(Date.now() - downSince >= 50_000 * TIME_SCALE);
    const events = await eventsOf(id);
    const waits = events.filter((event) => event.data.type === ERROR);
    assert.ok(waits.length >= 3, `retried ${waits.length} times`);
    assert.equal(openRouter.requests.length, waits.length + 1, 'one request per attempt');
    assert.deepEqual(events.map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', '')), ['USER_MESSAGE', ...waits.map(() => 'ERROR'), 'ASSISTANT_MESSAGE', 'FINALIZED']);
    for (const wait of waits) {
      assert.equal(wait.data.error.type, 'PROVIDER_UNAVAILABLE');
      assert.match(wait.data.error.message, /HTTP 503: No available providers/u);
    }
    const lengths = waits.map(objectiveMsOf);
    assert.ok(lengths[0] >= 1600 && lengths[0] <= 2400, `the first wait is the initial backoff ±20 %: ${lengths[0]} ms`);
    lengths.slice(1).forEach((length, index) => assert.ok(length > lengths[index], `waits grow: ${lengths.join(', ')} ms`));
  });

  it('counts the usage a failed model call reported in the objective\'s usage', async () => {
    const agentId = await agentWith('billed-failure');
    const failedMidStream = `data: ${JSON.stringify({
      id: 'gen-broken', error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    })}`;
    openRouter.answer(fakeAnswers.rawStream([failedMidStream]), fakeAnswers.completion({ content: 'fine now' }));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    const events = await eventsOf(id);
    const [wait] = events.filter((event) => event.data.type === ERROR);
    assert.deepEqual([wait.data.error.usage.promptTokens, wait.data.error.usage.completionTokens], [100, 20]);
    const answered = events.find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE').data.assistantMessage.usage;
    assert.deepEqual(
      [objective.info.usage.promptTokens, objective.info.usage.completionTokens],
      [100 + answered.promptTokens, 20 + answered.completionTokens],
      'the failed call and the answer',
    );
  });

  it('gives up FAILED with the provider\'s last error once the variation\'s retry budget is spent', async () => {
    const agentId = await agentWith('budget', { constraints: { modelRetryBudgetSeconds: 3 } });
    openRouter.fallback(fakeAnswers.error(503, 'No available providers'));
    const id = await startObjective(agentId);
    const objective = await ended(id, 20_000);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'PROVIDER_UNAVAILABLE');
    assert.match(objective.info.error.message, /HTTP 503: No available providers.*failed 2 times in a row over \d+ s; its retry budget is 3 s/u);
    const events = await eventsOf(id);
    assert.deepEqual(events.filter((event) => event.data.type === ERROR).map((event) => Boolean(event.data.error.retryAt)), [true, false], 'one wait, then the end');
    assert.equal(events.at(-1).data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    assert.equal(openRouter.requests.length, 2);
  });

  it('a model that keeps calling a failing tool ends FAILED naming maxModelTurns after the default 50 turns', async () => {
    const agentId = await agentWith('runaway', {}, '/fail');
    openRouter.fallback(fakeAnswers.completion({ toolCalls: [{ id: 'call_again', name: 'runaway-tool', arguments: '{}' }] }));
    const id = await startObjective(agentId, 'Try until it works');
    const objective = await ended(id, 60_000);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'LIMIT_REACHED');
    assert.match(objective.info.error.message, /^limit reached: maxModelTurns \(the model answered 50 times in this run; the limit is 50\)$/u);
    assert.equal(openRouter.requests.length, 50);
  });

  it('the variation\'s maxModelTurns and maxTokens end it at their values', async () => {
    openRouter.fallback(fakeAnswers.completion({ toolCalls: [{ id: 'call_again', name: 'capped-tool', arguments: '{}' }] }));
    const capped = await agentWith('capped', { constraints: { maxModelTurns: 3 } }, '/fail');
    const byTurns = await ended(await startObjective(capped, 'Try until it works'));
    assert.equal(byTurns.info.error.message, 'limit reached: maxModelTurns (the model answered 3 times in this run; the limit is 3)');
    assert.equal(openRouter.requests.length, 3);

    // The fake reports 15 tokens per answer.
    const thrifty = await agentWith('thrifty', { constraints: { maxTokens: 40 } }, '/fail');
    const byTokens = await ended(await startObjective(thrifty, 'Try until it works'));
    assert.equal(byTokens.info.error.message, 'limit reached: maxTokens (45 tokens used; the limit is 40)');
    assert.equal(openRouter.requests.length, 3 + 3);
  });

  it('with no maxTokens on the variation, the node\'s default token cap ends it naming maxTokens; the variation\'s value overrides it', async () => {
    // A runaway on large contexts: 300,100 tokens per answer.
    openRouter.fallback(fakeAnswers.completion({
      toolCalls: [{ id: 'call_again', name: 'hungry-tool', arguments: '{}' }],
      usage: { prompt_tokens: 300_000, completion_tokens: 100, total_tokens: 300_100 },
    }));
    const byDefault = await ended(await startObjective(await agentWith('hungry', {}, '/fail'), 'Try until it works'));
    assert.equal(byDefault.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(byDefault.info.error.type, 'LIMIT_REACHED');
    assert.equal(byDefault.info.error.message, `limit reached: maxTokens (1200400 tokens used; the limit is ${NODE_MAX_TOKENS})`);
    assert.equal(openRouter.requests.length, 4, 'stopped before the fifth call');

    const higher = await agentWith('hungrier', { constraints: { maxTokens: 2_000_000 } }, '/fail');
    const byVariation = await ended(await startObjective(higher, 'Try until it works'));
    assert.equal(byVariation.info.error.message, 'limit reached: maxTokens (2100700 tokens used; the limit is 2000000)');
    assert.equal(openRouter.requests.length, 4 + 7);

    const unlimited = await agentWith('unlimited', { constraints: { maxTokens: 0, maxModelTurns: 5 } }, '/fail');
    const byTurns = await ended(await startObjective(unlimited, 'Try until it works'));
    assert.equal(byTurns.info.error.message, 'limit reached: maxModelTurns (the model answered 5 times in this run; the limit is 5)', 'maxTokens 0: no token cap');
    assert.equal(byTurns.info.usage.promptTokens + byTurns.info.usage.completionTokens, 1_500_500, 'past the node\'s default');
  });

  it('past maxToolCalls the next model call offers no tools, so the model answers', async () => {
    const agentId = await agentWith('one-call', { constraints: { maxToolCalls: 1 } }, '/echo');
    openRouter.answer(fakeAnswers.completion({ toolCalls: [{ id: 'call_1', name: 'one-call-tool', arguments: '{}' }] }), fakeAnswers.completion({ content: 'answered' }));
    const id = await startObjective(agentId);
    const objective = await ended(id);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.deepEqual((openRouter.requests[0].body.tools as any[]).map((tool) => tool.function.name), ['one-call-tool']);
    assert.equal(openRouter.requests[1].body.tools, undefined, 'no tools offered');
  });
});
