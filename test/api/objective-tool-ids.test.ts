// Tool call ids and tool names inside objectives (issue 24 item 5), through
// the API with the embedded runtime, a fake OpenRouter that answers what each
// test queues and the real tool server: two calls with one provider id in one
// answer both reach the tool (each under an Idempotency-Key of its own) and
// both results reach the model under the provider's id; two objectives (of
// two workspaces) whose model reuses `call_0` reach a tool that de-duplicates
// by Idempotency-Key under different keys, each getting its own result; tools whose names
// sanitize alike, a sub-agent named like a tool and a tool named like a
// service tool are offered under distinct names, each call reaching its own.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODEL = 'openai/gpt-4o-mini';

describe('tool call ids and tool names inside objectives', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let openRouter: FakeOpenRouter;

  /** A workspace and its full-access key (the fixture's, or another one's). */
  type Space = { workspaceId: string; token: string };
  const base = (space: Space = ws) => `/v1/workspaces/${space.workspaceId}`;
  const get = async (path: string, space: Space = ws) => {
    const response = await api.request('GET', path, { token: space.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const tool = (name: string, marker: string, space: Space = ws, path = '/echo') =>
    created(api, space.token, `${base(space)}/tools`, { metadata: { name }, spec: { description: `the ${marker} tool`, http: { url: `${tools.url}${path}?tool=${marker}`, method: 'POST' } } });
  /** An agent on the fake provider with these assignments. */
  const agentWith = async (assignments: Array<Record<string, unknown>>, space: Space = ws) => {
    const agentId = (await createAgent(api, space.token, space.workspaceId)).metadata.id as string;
    const variation = await createVariation(api, space.token, space.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL } } });
    for (const assignment of assignments) await created(api, space.token, `${base(space)}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, assignment);
    return agentId;
  };
  /** Runs an objective to a terminal status; returns it with its events. */
  const run = async (agentId: string, initialMessage: string, space: Space = ws) => {
    const response = await api.request('POST', `${base(space)}/objectives`, { token: space.token, body: { agentId, initialMessage } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.metadata.id as string;
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base(space)}/objectives/${id}`, space);
      return TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status);
    }, 'objective finished', 20_000);
    const events = (await get(`${base(space)}/objectives/${id}/events?limit=1000`, space)).items as any[];
    return { objective, of: (type: string) => events.filter((event) => event.data.type === `OBJECTIVE_EVENT_TYPE_${type}`) };
  };
  const providerKey = (space: Space) =>
    created(api, space.token, `${base(space)}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-test-tool-ids', openrouter: { baseUrl: openRouter.baseUrl } } });
  const echoedMarkers = (since: number) => tools.requestsTo('/echo').slice(since).map((request) => new URL(request.url, tools.url).searchParams.get('tool')).sort();

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    openRouter = await startFakeOpenRouter();
    await providerKey(ws);
  });

  beforeEach(() => openRouter.reset());

  after(async () => {
    await api?.close();
    await tools?.close();
    await openRouter?.close();
  });

  it('runs two calls that share a provider id, each under its own Idempotency-Key, and gives the model both results under its id', async () => {
    const lookup = await tool('lookup', 'lookup');
    const agentId = await agentWith([{ toolId: lookup.metadata.id }]);
    openRouter.answer(
      fakeAnswers.completion({ toolCalls: [{ id: 'call_dup', name: 'lookup', arguments: '{"q":"first"}' }, { id: 'call_dup', name: 'lookup', arguments: '{"q":"second"}' }] }),
      fakeAnswers.completion({ content: 'both found' }),
    );
    const before = tools.requestsTo('/echo').length;
    const { objective, of } = await run(agentId, 'look both up');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));

    const received = tools.requestsTo('/echo').slice(before);
    assert.deepEqual(received.map((request) => JSON.parse(request.body).q).sort(), ['first', 'second'], 'both calls reached the tool');
    const keys = received.map((request) => request.headers['idempotency-key']);
    assert.equal(new Set(keys).size, 2, `distinct Idempotency-Keys: ${keys.join(', ')}`);
    const calledIds = of('TOOL_CALLED').map((event) => event.data.toolCalled.toolCallId);
    assert.deepEqual([...keys].sort(), [...calledIds].sort(), 'the Idempotency-Key is the id the events show');
    assert.deepEqual(of('TOOL_RESULT').map((event) => event.data.toolResult.toolCallId).sort(), [...calledIds].sort());
    assert.equal(objective.info.toolCallCount, 2);
    // The answer's calls name the service's ids, each the one its own run went under (not the provider's call_dup).
    const argumentsByKey = new Map(received.map((request) => [request.headers['idempotency-key'], JSON.parse(request.body).q]));
    const [answer] = of('ASSISTANT_MESSAGE');
    assert.deepEqual(answer.data.assistantMessage.toolCalls.map((call: any) => argumentsByKey.get(call.id)), ['first', 'second']);

    const second = openRouter.requests[1].body.messages as any[];
    const toolMessages = second.filter((message) => message.role === 'tool');
    assert.deepEqual(toolMessages.map((message) => message.tool_call_id), ['call_dup', 'call_dup'], 'the provider sees its own ids');
    assert.deepEqual(toolMessages.map((message) => JSON.parse(message.content).body).map((body: string) => JSON.parse(body).q), ['first', 'second']);
  });

  it('sends calls of two objectives whose model reuses call_0 under different Idempotency-Keys, so a tool that de-duplicates by key answers each its own', async () => {
    const other = await ws.otherWorkspace();
    await providerKey(other);
    const before = tools.requestsTo('/idempotent').length;
    const runIn = async (space: Space, q: string) => {
      const dedup = await tool('dedup', 'dedup', space, '/idempotent');
      const agentId = await agentWith([{ toolId: dedup.metadata.id }], space);
      openRouter.answer(
        fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'dedup', arguments: JSON.stringify({ q }) }] }),
        fakeAnswers.completion({ content: `found ${q}` }),
      );
      const requestsBefore = openRouter.requests.length;
      const { objective, of } = await run(agentId, `look ${q} up`, space);
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      const [result] = of('TOOL_RESULT').map((event) => event.data.toolResult);
      const toolMessages = (openRouter.requests[requestsBefore + 1].body.messages as any[]).filter((message) => message.role === 'tool');
      assert.deepEqual(toolMessages.map((message) => message.tool_call_id), ['call_0'], 'the provider sees its own id');
      return { toolCallId: result.toolCallId as string, answeredFor: JSON.parse(JSON.parse(result.content).body).q as string };
    };
    const first = await runIn(ws, 'first');
    const second = await runIn(other, 'second');

    const keys = tools.requestsTo('/idempotent').slice(before).map((request) => request.headers['idempotency-key']);
    assert.deepEqual(keys, [first.toolCallId, second.toolCallId], 'each call reached the tool under the id its events show');
    assert.notEqual(first.toolCallId, second.toolCallId, 'the two objectives\' calls have different Idempotency-Keys');
    assert.deepEqual([first.answeredFor, second.answeredFor], ['first', 'second'], 'each objective got its own call\'s result');
  });

  it('offers tools whose names collide (alike after sanitizing, a sub-agent, a service tool) under distinct names, each call reaching its own', async () => {
    const dotted = await tool('lookup.v1', 'dotted');
    const spaced = await tool('lookup v1', 'spaced');
    const memory = await tool('memory_read', 'memory');
    const helper = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'lookup/v1' } });
    await createVariation(api, ws.token, ws.workspaceId, helper.metadata.id, { spec: { prompt: 'You help too.', modelConfig: { modelId: MODEL } } });
    const agentId = await agentWith([{ toolId: dotted.metadata.id }, { toolId: spaced.metadata.id }, { toolId: memory.metadata.id }, { agentId: helper.metadata.id }]);
    openRouter.answer(
      fakeAnswers.completion({
        toolCalls: [
          { id: 'c1', name: 'lookup_v1', arguments: '{}' },
          { id: 'c2', name: 'lookup_v1_2', arguments: '{}' },
          { id: 'c3', name: 'memory_read_2', arguments: '{}' },
        ],
      }),
      fakeAnswers.completion({ content: 'done' }),
    );
    const before = tools.requestsTo('/echo').length;
    const { objective, of } = await run(agentId, 'use them all');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));

    const offered = (openRouter.requests[0].body.tools as any[]).map((entry) => entry.function.name);
    assert.deepEqual(offered, ['lookup_v1', 'lookup_v1_2', 'memory_read_2', 'lookup_v1_3'], 'tools first, then the sub-agent; no name twice, none a service tool\'s');
    assert.deepEqual(echoedMarkers(before), ['dotted', 'memory', 'spaced'], 'each call reached its own tool');
    assert.equal(of('TOOL_RESULT').length, 3);
    const [assistant] = of('ASSISTANT_MESSAGE');
    assert.deepEqual(assistant.data.assistantMessage.toolCalls.map((call: any) => call.tool.tool.id), [dotted.metadata.id, spaced.metadata.id, memory.metadata.id]);
  });
});
