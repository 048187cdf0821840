// Spending budgets through the API (issue 27 item 3), with the embedded
// runtime and (the maxTokens case) in cluster mode over NATS (runtime-modes.ts), the fake OpenRouter over HTTP (15 tokens per answer unless told,
// the cost it reports) and the real tool server: a variation's maxTokens or
// maxCostCents ends a looping objective FAILED before the model call that the
// usage so far forbids, with an ERROR (LIMIT_REACHED, naming the constraint)
// and FINALIZED FAILED in its events, passed by at most the call that crossed
// it; a sub-objective runs on a share of its parent's free budget, and the
// usage it reports stops the parent at its next model call.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import type { TestApi } from '../support/api';
import { created, createAgent, createVariation } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { casesOf, RUNTIME_MODES } from '../support/runtime-modes';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODEL = 'openai/gpt-4o-mini';
/** The fake's usage per answer when a test sets none. */
const TOKENS_PER_CALL = 15;

for (const mode of RUNTIME_MODES) describe(`objective spending budgets (${mode.name})`, function () {
  const { representative, everyCase } = casesOf(mode);
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let openRouter: FakeOpenRouter;
  let tools: TestToolServer;
  let lookupId = '';

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const eventsOf = async (id: string) => (await get(`${base()}/objectives/${id}/events?limit=1000`)).items as any[];
  const typesOf = (events: any[]) => events.map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
  const tokensOf = (objective: any) => objective.info.usage.promptTokens + objective.info.usage.completionTokens;

  /** An agent whose one variation runs on the fake with `constraints`, the `lookup` tool and these sub-agents assigned. */
  async function agentWith(name: string, constraints: Record<string, unknown>, subAgents: string[] = []): Promise<string> {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL }, constraints } });
    const assignments = `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`;
    await created(api, ws.token, assignments, { toolId: lookupId });
    for (const subAgent of subAgents) await created(api, ws.token, assignments, { agentId: subAgent });
    return agentId;
  }

  async function runToEnd(agentId: string): Promise<any> {
    const response = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId, initialMessage: 'Keep looking' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return ended(response.body.metadata.id as string);
  }

  async function ended(id: string): Promise<any> {
    let objective: any;
    await eventually(async () => {
      const read = await api.request('GET', `${base()}/objectives/${id}`, { token: ws.token });
      objective = read.body;
      return read.status === 200 && TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status);
    }, `objective ${id} ended`, 30_000);
    return objective;
  }

  /** The ERROR and FINALIZED events an objective ended by a budget shows last. */
  async function assertEndedBy(objective: any, message: string): Promise<any[]> {
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED', JSON.stringify(objective.info));
    assert.deepEqual(objective.info.error, { type: 'LIMIT_REACHED', message });
    const events = await eventsOf(objective.metadata.id);
    assert.deepEqual(typesOf(events).slice(-2), ['ERROR', 'FINALIZED']);
    assert.deepEqual(events.at(-2).data.error, { type: 'LIMIT_REACHED', message });
    assert.equal(events.at(-1).data.finalized.status, 'OBJECTIVE_STATUS_FAILED');
    assert.deepEqual(events.at(-1).data.finalized.usage, objective.info.usage);
    return events;
  }

  const lookupCall = (usage?: Record<string, unknown>) => fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'lookup', arguments: '{}' }], ...(usage ? { usage } : {}) });

  before(async () => {
    api = await mode.start({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    openRouter = await startFakeOpenRouter();
    tools = await startTestToolServer();
    await created(api, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-budgets', openrouter: { baseUrl: openRouter.baseUrl } } });
    const lookup = await created(api, ws.token, `${base()}/tools`, { metadata: { name: 'lookup' }, spec: { description: 'Looks up', http: { url: `${tools.url}/echo`, method: 'POST' } } });
    lookupId = lookup.metadata.id as string;
  });

  afterEach(() => openRouter.reset());

  after(async () => {
    await api?.close();
    await openRouter?.close();
    await tools?.close();
  });

  representative('maxTokens: after two calls of 15 tokens under a budget of 20 no third call starts; FAILED naming maxTokens', async () => {
    openRouter.fallback(lookupCall());
    const objective = await runToEnd(await agentWith('token-budget', { maxTokens: 20 }));
    const events = await assertEndedBy(objective, 'limit reached: maxTokens (30 tokens used; the limit is 20)');
    assert.equal(openRouter.requests.length, 2);
    assert.deepEqual(typesOf(events), [
      'USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ERROR', 'FINALIZED',
    ]);
    assert.ok(tokensOf(objective) <= 20 + TOKENS_PER_CALL, 'passed by at most one call');
  });

  everyCase('maxCostCents: with 0.4 cents per call and a budget of 0.5, FAILED naming maxCostCents after the second call', async () => {
    // The provider reports cost in USD credits: 0.004 is 0.4 cents.
    openRouter.fallback(lookupCall({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.004 }));
    const objective = await runToEnd(await agentWith('cost-budget', { maxCostCents: 0.5 }));
    await assertEndedBy(objective, 'limit reached: maxCostCents (0.8 cents spent; the limit is 0.5)');
    assert.equal(openRouter.requests.length, 2);
    assert.equal(objective.info.usage.costCents, 0.8);
    assert.ok(objective.info.usage.costCents <= 0.5 + 0.4, 'passed by at most one call');
  });

  /**
   * A lead with maxTokens 40 whose first call (15 tokens) asks its researcher
   * once per prompt; then two calls of the lookup tool (15 tokens each) for
   * whichever objective asks next. Anything beyond answers, so a call the
   * budgets should have stopped shows as a COMPLETED objective. The lead ends
   * at 45 of 40 after three model calls.
   */
  async function leadOverBudget(names: { lead: string; researcher: string }, prompts: string[]): Promise<{ parent: any; parentEvents: any[] }> {
    const researcher = await agentWith(names.researcher, {});
    const lead = await agentWith(names.lead, { maxTokens: 40 }, [researcher]);
    openRouter.answer(
      fakeAnswers.completion({ toolCalls: prompts.map((prompt, index) => ({ id: `call_${index}`, name: names.researcher, arguments: JSON.stringify({ prompt }) })) }),
      lookupCall(),
      lookupCall(),
    );
    openRouter.fallback(fakeAnswers.completion({ content: 'done' }));
    const parent = await runToEnd(lead);
    const parentEvents = await assertEndedBy(parent, 'limit reached: maxTokens (45 tokens used; the limit is 40)');
    assert.equal(openRouter.requests.length, 3);
    return { parent, parentEvents };
  }

  everyCase("a sub-objective runs on its parent's free budget; the usage it reports stops the parent at its next model call", async () => {
    // The lead's call asks the researcher: the child starts with the 25 left as its share; its calls: 15, then 30 tokens, past its share: no third call.
    const { parent, parentEvents } = await leadOverBudget({ lead: 'lead', researcher: 'researcher' }, ['find X']);
    assert.ok(tokensOf(parent) <= 40 + TOKENS_PER_CALL, "the parent's budget passed by at most one call (the child's last)");

    const childId = parentEvents.find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_SPAWNED').data.subAgentSpawned.metadata.id as string;
    const childMessage = "limit reached: maxTokens (30 tokens used; the limit is 25, this sub-objective's share of its parent's budget)";
    const child = await ended(childId);
    await assertEndedBy(child, childMessage);
    assert.deepEqual(typesOf(parentEvents).slice(-5), ['SUB_AGENT_SPAWNED', 'SUB_AGENT_UPDATED', 'TOOL_ERROR', 'ERROR', 'FINALIZED']);
    assert.equal(parentEvents.at(-3).data.toolError.message, `sub-objective ${childId} ended OBJECTIVE_STATUS_FAILED: ${childMessage}`);
    assert.equal(tokensOf(parent), TOKENS_PER_CALL + tokensOf(child), "the child's usage is the parent's");
  });

  representative('two sub-agent calls under a budget run one after the other: the second child gets what the first left', async () => {
    // The lead asks the researcher twice: 25 free, 12 for each child. The first child's call (15, past its 12), then,
    // once it reported, the second child's (15, past the 10 left).
    const { parent, parentEvents } = await leadOverBudget({ lead: 'lead-in-turn', researcher: 'researcher-in-turn' }, ['find X', 'find Y']);
    assert.deepEqual(typesOf(parentEvents).filter((type) => type.startsWith('SUB_AGENT')), ['SUB_AGENT_SPAWNED', 'SUB_AGENT_UPDATED', 'SUB_AGENT_SPAWNED', 'SUB_AGENT_UPDATED'],
      'the second child is created once the first has ended');
    const childIds = parentEvents.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_SPAWNED').map((event) => event.data.subAgentSpawned.metadata.id as string);
    const share = (limit: number) => `limit reached: maxTokens (15 tokens used; the limit is ${limit}, this sub-objective's share of its parent's budget)`;
    await assertEndedBy(await ended(childIds[0]), share(12));
    await assertEndedBy(await ended(childIds[1]), share(10));
    assert.ok(tokensOf(parent) < 40 + TOKENS_PER_CALL, 'the tree passed the budget by less than one call');
  });
});
