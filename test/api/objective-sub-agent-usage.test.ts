// A sub-objective's usage reaches its parent even after the parent ended
// (issue 24 item 11), through the API with the embedded runtime, a fake
// OpenRouter that reports chosen usage and the real tool server. The only
// way the API lets a child end after its parent is the parent's end itself:
// cancelling the parent (as a turn time-out or an erasure does) ends it at
// once and then cancels its running children, which report afterwards. Here
// the child waits for an approval, so it is surely still running when the
// parent is cancelled.
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

describe('a sub-objective that ends after its parent', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let openRouter: FakeOpenRouter;

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const objective = async (id: string) => {
    const response = await api.request('GET', `${base()}/objectives/${id}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  /** An agent on the fake provider with these assignments. */
  const agentWith = async (name: string, assignments: Array<Record<string, unknown>>) => {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL } } });
    for (const assignment of assignments) await created(api, ws.token, `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, assignment);
    return agentId;
  };

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    openRouter = await startFakeOpenRouter();
    await created(api, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-test-sub-usage', openrouter: { baseUrl: openRouter.baseUrl } } });
  });

  after(async () => {
    await api?.close();
    await tools?.close();
    await openRouter?.close();
  });

  it("adds its usage to the cancelled parent's info.usage once it ends", async () => {
    const risky = await created(api, ws.token, `${base()}/tools`, {
      metadata: { name: 'risky' }, spec: { description: 'needs a yes', http: { url: `${tools.url}/echo`, method: 'POST' }, requiresApproval: true },
    });
    const researcher = await agentWith('researcher', [{ toolId: risky.metadata.id }]);
    const lead = await agentWith('lead', [{ agentId: researcher }]);
    openRouter.answer(
      // The parent's model calls the sub-agent; the child's calls the tool that waits for approval.
      fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'researcher', arguments: '{"prompt":"find X"}' }], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }),
      fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'risky', arguments: '{}' }], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }),
    );
    const started = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId: lead, initialMessage: 'research X' } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const parentId = started.body.metadata.id as string;

    let childId = '';
    await eventually(async () => {
      const events = await api.request('GET', `${base()}/objectives/${parentId}/events?limit=100`, { token: ws.token });
      childId = (events.body.items as any[]).find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_SPAWNED')?.data.subAgentSpawned.metadata.id ?? '';
      return childId !== '';
    }, 'the child was spawned', 20_000);
    await eventually(async () => {
      // The child's row appears once it takes its start, a moment after the parent spawned it.
      const read = await api.request('GET', `${base()}/objectives/${childId}`, { token: ws.token });
      return read.status === 200 && read.body.info.status === 'OBJECTIVE_STATUS_AWAITING_APPROVAL';
    }, 'the child waits for approval', 20_000);

    const cancelled = await api.request('POST', `${base()}/objectives/${parentId}/cancel`, { token: ws.token, body: { reason: 'enough' } });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.info.status, 'OBJECTIVE_STATUS_CANCELLED');
    const own = { promptTokens: 100, completionTokens: 20 };
    assert.deepEqual({ promptTokens: cancelled.body.info.usage.promptTokens, completionTokens: cancelled.body.info.usage.completionTokens }, own, 'the parent ended with its own usage only');

    let child: any;
    await eventually(async () => {
      child = await objective(childId);
      return TERMINAL_OBJECTIVE_STATUSES.includes(child.info.status);
    }, 'the child ended', 20_000);
    assert.equal(child.info.status, 'OBJECTIVE_STATUS_CANCELLED');
    assert.equal(child.info.usage.promptTokens, 7);
    assert.ok(child.info.finishedAt >= cancelled.body.info.finishedAt, 'the child ended after its parent');

    const expected = {
      promptTokens: own.promptTokens + child.info.usage.promptTokens,
      completionTokens: own.completionTokens + child.info.usage.completionTokens,
      costCents: cancelled.body.info.usage.costCents + child.info.usage.costCents,
    };
    let parent: any;
    await eventually(async () => {
      parent = await objective(parentId);
      return parent.info.usage.promptTokens !== own.promptTokens;
    }, 'the child\'s usage reached the parent', 20_000);
    assert.deepEqual(parent.info.usage, expected);
    assert.equal(parent.info.status, 'OBJECTIVE_STATUS_CANCELLED', 'the parent stays ended');
  });
});
