// Tools inside objectives (issue 9 item 4), end to end through the API with
// the embedded runtime and builtin/scripted: consecutive CALLs of one model
// turn run in parallel (a rendezvous tool answers only once both requests are
// in), an MCP tool and a tool of a synced MCP tool set are called through the
// MCP SDK against a real MCP server with the tool call id as Idempotency-Key,
// a secret placeholder reaches the tool and never the events, and arguments
// that break the schema go back to the model as a TOOL_ERROR while the
// objective carries on.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { startTestMcpServer, type TestMcpServer } from '../support/mcp-server';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('tools inside objectives', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let mcp: TestMcpServer;
  let agentId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  /** Runs an objective to a terminal status; returns it with its events. */
  const run = async (initialMessage: string) => {
    const response = await api.request('POST', base(), { token: ws.token, body: { agentId, initialMessage } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const id = response.body.metadata.id as string;
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base()}/${id}`);
      return TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status);
    }, 'objective finished', 15_000);
    const events = (await get(`${base()}/${id}/events?limit=1000`)).items as any[];
    return { objective, events, of: (type: string) => events.filter((event) => event.data.type === `OBJECTIVE_EVENT_TYPE_${type}`) };
  };
  const tool = (name: string, spec: Record<string, unknown>) => created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name }, spec });

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    mcp = await startTestMcpServer([
      { name: 'search', description: 'Searches the docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
      { name: 'fetch.page', description: 'Fetches a page', inputSchema: { type: 'object', properties: { url: { type: 'string' } } } },
    ]);
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    await created(api, ws.token, '/v1/workspace_secrets', { metadata: { name: 'CRM_TOKEN' }, spec: { value: 'crm-secret-value-123' } });
    const assign = (body: Record<string, unknown>) => created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, body);
    const meet = await tool('meet', { description: 'Meets another call', http: { url: `${tools.url}/rendezvous`, method: 'POST' } });
    const echo = await tool('crm', {
      description: 'Echoes with the CRM token',
      inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'], additionalProperties: false },
      http: { url: `${tools.url}/echo`, method: 'POST', headers: { authorization: 'Bearer {{secrets.CRM_TOKEN}}' } },
    });
    const search = await tool('docs-search', { description: 'Searches the docs over MCP', mcp: { serverUrl: mcp.url, toolName: 'search' } });
    const set = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tool_sets`, { metadata: { name: 'docs' }, spec: { mcpServerUrl: mcp.url } });
    const synced = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}/sync`, { token: ws.token });
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    for (const assigned of [meet, echo, search]) await assign({ toolId: assigned.metadata.id });
    await assign({ toolSetId: set.metadata.id });
  });

  after(async () => {
    await api?.close();
    await tools?.close();
    await mcp?.close();
  });

  it('runs the consecutive tool calls of one model turn in parallel', async () => {
    const { objective, of } = await run('CALL meet {"n":1}\nCALL meet {"n":2}\nSAY met');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    // The rendezvous answers neither call until both are in: two results prove both were in flight at once.
    const results = of('TOOL_RESULT');
    assert.equal(results.length, 2);
    assert.ok(results.every((event) => JSON.parse(event.data.toolResult.content).seen === 2), JSON.stringify(results));
    assert.equal(objective.info.toolCallCount, 2);
  });

  it('calls an MCP tool, and a tool of a synced MCP tool set, with the tool call id as Idempotency-Key', async () => {
    mcp.calls.length = 0;
    const { objective, of } = await run('CALL docs-search {"q":"refunds"}\nCALL fetch_page {"url":"https://docs.example.com/refunds"}\nSAY found');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.deepEqual(mcp.calls.map((call) => [call.name, call.arguments]).sort(), [['fetch.page', { url: 'https://docs.example.com/refunds' }], ['search', { q: 'refunds' }]]);
    const calledIds = of('TOOL_CALLED').map((event) => event.data.toolCalled.toolCallId).sort();
    assert.deepEqual(mcp.calls.map((call) => call.idempotencyKey).sort(), calledIds);
    assert.deepEqual(of('TOOL_RESULT').map((event) => event.data.toolResult.content).sort(), ['called fetch.page', 'called search']);
  });

  it('resolves a secret into the request and keeps it out of every event; the secret records its use', async () => {
    const { objective, events, of } = await run('CALL crm {"customer":"c-42"}\nSAY done');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
    const request = tools.requestsTo('/echo').at(-1)!;
    assert.equal(request.headers.authorization, 'Bearer crm-secret-value-123');
    assert.equal(of('TOOL_RESULT').length, 1);
    assert.doesNotMatch(JSON.stringify(events), /crm-secret-value-123/, 'the echoed secret is redacted from the result');
    const secrets = await get('/v1/workspace_secrets?includeInfo=true');
    const secret = secrets.items.find((item: any) => item.metadata.name === 'CRM_TOKEN');
    assert.ok(secret.info?.lastUsedAt, JSON.stringify(secret));
  });

  it('answers arguments that break the tool schema with a TOOL_ERROR the model sees, and goes on', async () => {
    const before = tools.requestsTo('/echo').length;
    const { objective, of } = await run('CALL crm {"client":"c-42"}\nSAY I will ask for the customer id');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(tools.requestsTo('/echo').length, before, 'nothing is sent');
    const [error] = of('TOOL_ERROR');
    assert.match(error.data.toolError.message, /arguments\.customer: is required/);
    assert.equal(objective.info.lastMessage, 'I will ask for the customer id');
  });
});
