// Objective limits through the API (issue 9 item 8), with the embedded
// runtime and builtin/scripted: a call beyond the variation's maxToolCalls is
// answered `limit reached: maxToolCalls` and not sent, the model goes on; a
// run longer than AGENTRT_OBJECTIVE_TURN_TIMEOUT_MS fails with an ERROR of
// type TIMED_OUT; usage is summed into info.usage from the assistant messages.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('objective limits', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let agentId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const finished = async (initialMessage: string) => {
    const response = await api.request('POST', base(), { token: ws.token, body: { agentId, initialMessage } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.metadata.id as string;
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base()}/${id}`);
      return !['OBJECTIVE_STATUS_PENDING', 'OBJECTIVE_STATUS_RUNNING'].includes(objective.info.status);
    }, 'objective ended', 15_000);
    return { objective, events: (await get(`${base()}/${id}/events?limit=1000`)).items as any[] };
  };

  before(async () => {
    api = await startTestApi({ runtime: { reminderPollMs: 100 }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_OBJECTIVE_TURN_TIMEOUT_MS: '1500' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, {
      spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID }, constraints: { maxToolCalls: 1 } },
    });
    const echo = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name: 'echo' }, spec: { description: 'Echoes', http: { url: `${tools.url}/echo`, method: 'POST' } } });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: echo.metadata.id });
  });

  after(async () => {
    await api?.close();
    await tools?.close();
  });

  it('answers a call beyond maxToolCalls with `limit reached: maxToolCalls` without sending it, and the model goes on', async () => {
    const before = tools.requestsTo('/echo').length;
    const { objective, events } = await finished('CALL echo {"n":1}\nCALL echo {"n":2}\nSAY one was enough');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(tools.requestsTo('/echo').length, before + 1, 'only the call within the limit is sent');
    const errors = events.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_ERROR');
    assert.equal(errors.length, 1);
    assert.match(errors[0].data.toolError.message, /limit reached: maxToolCalls/);
    assert.equal(objective.info.toolCallCount, 1);
    const assistant = events.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE');
    const summed = assistant.reduce((sum, event) => sum + event.data.assistantMessage.usage.promptTokens, 0);
    assert.equal(objective.info.usage.promptTokens, summed, 'info.usage is the sum of the assistant messages');
  });

  it('fails a run longer than the turn limit with an ERROR of type TIMED_OUT', async () => {
    const started = Date.now();
    const { objective, events } = await finished('SLEEP 60000\nSAY too late');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.equal(objective.info.error.type, 'TIMED_OUT');
    assert.ok(Date.now() - started < 10_000, 'failed at the limit, not at the model call');
    assert.equal(events.at(-1).data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    assert.ok(events.some((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_ERROR' && event.data.error.type === 'TIMED_OUT'));
  });
});
