// Objective commands that must not lose or double a message (issue 24 item
// 6), through the API with the embedded runtime, builtin/scripted and the real
// tool server: a follow-up sent while the model produces its emit_output is
// answered by another model call before the objective completes; messages,
// cancel, approve and deny honour Idempotency-Key, a retry answering the first
// answer, and even a retry whose first answer was lost (its record deleted,
// as a crash between the command and the record would leave it) applies
// nothing twice, because the key is also the command's id at the actor.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ApiResponse, TestApi } from '../support/api';
import { startTestApi } from '../support/api';
import { createAgent, createVariation, created, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { waitForObjectiveStatus } from '../support/objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */


describe('objective commands: follow-ups and Idempotency-Key', function () {
  this.timeout(60_000);
  let api: TestApi;
  let tools: TestToolServer;
  let ws: WorkspaceFixture;
  let agentId: string;
  let outputAgentId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;
  const send = (method: string, path: string, body: unknown, key?: string): Promise<ApiResponse> =>
    api.request(method, path, { token: ws.token, body, headers: key ? { 'Idempotency-Key': key } : {} });
  const ok = (response: ApiResponse) => {
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const createObjective = async (body: Record<string, unknown>) => ok(await send('POST', base(), body));
  const getObjective = async (id: string) => ok(await api.request('GET', `${base()}/${id}`, { token: ws.token }));
  const eventsOf = async (id: string) => ok(await api.request('GET', `${base()}/${id}/events?limit=1000`, { token: ws.token })).items as any[];
  const typesOf = (events: any[]) => events.map((event) => String(event.data.type).replace('OBJECTIVE_EVENT_TYPE_', ''));
  const waitForStatus = (id: string, status: string, timeoutMs = 20_000): Promise<any> => waitForObjectiveStatus(getObjective, id, status, timeoutMs);
  /** Forgets the API's record of a key's first answer, as a node dying between the command and the record leaves it. */
  const loseRecord = (key: string) => api.dataSource.query('DELETE FROM idempotency_records WHERE idempotency_key = $1', [key]);
  /** Sends the same command twice with one key (the second must replay), then once more after losing the record. */
  async function sendThrice(method: string, path: string, body: unknown, key = `cmd-${randomUUID()}`): Promise<any[]> {
    const first = ok(await send(method, path, body, key));
    const replay = await send(method, path, body, key);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(ok(replay), first, 'a retry returns the first answer');
    await loseRecord(key);
    const afterLoss = ok(await send(method, path, body, key));
    return [first, afterLoss];
  }

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    const risky = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
      metadata: { name: 'risky' }, spec: { description: 'Needs approval', requiresApproval: true, http: { url: `${tools.url}/echo`, method: 'POST' } },
    });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: risky.metadata.id });
    const outputDefinition = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
    outputAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'answers' }, spec: { outputDefinition } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, outputAgentId, { spec: { prompt: 'You answer.', modelConfig: { modelId: MODEL_ID } } });
  });

  after(async () => {
    await api?.close();
    await tools?.close();
  });

  it('answers a follow-up sent while the model produces its emit_output before the objective completes', async () => {
    const objective = await createObjective({ agentId: outputAgentId, initialMessage: 'SLEEP 4000\nOUTPUT {"answer":42}' });
    const followed = ok(await send('POST', `${base()}/${objective.metadata.id}/messages`, { content: 'SAY noted' }));
    assert.equal(followed.info.status, 'OBJECTIVE_STATUS_RUNNING');
    assert.equal(followed.info.output, undefined, 'the message came before the output');
    const done = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    assert.deepEqual(done.info.output, { answer: 42 });
    assert.equal(done.info.lastMessage, 'noted');
    const types = typesOf(await eventsOf(objective.metadata.id));
    assert.deepEqual(types, ['USER_MESSAGE', 'USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'FINALIZED']);
  });

  it('a message retried with its Idempotency-Key is added once', async () => {
    const objective = await createObjective({ agentId, initialMessage: 'SAY hi' });
    await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    const key = `cmd-${randomUUID()}`;
    await sendThrice('POST', `${base()}/${objective.metadata.id}/messages`, { content: 'SAY again' }, key);
    await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    // Once its record is gone (24 h on), the key sent with another message is a new request, as for the API.
    await loseRecord(key);
    ok(await send('POST', `${base()}/${objective.metadata.id}/messages`, { content: 'SAY later' }, key));
    await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    const messages = (await eventsOf(objective.metadata.id)).filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE');
    assert.deepEqual(messages.map((event) => event.data.userMessage.content), ['SAY hi', 'SAY again', 'SAY later']);
  });

  it('a cancel retried with its Idempotency-Key answers again instead of FAILED_PRECONDITION', async () => {
    const objective = await createObjective({ agentId, initialMessage: 'SLEEP 30000\nSAY never' });
    const [first, afterLoss] = await sendThrice('POST', `${base()}/${objective.metadata.id}/cancel`, { reason: 'stop' });
    assert.equal(first.info.status, 'OBJECTIVE_STATUS_CANCELLED');
    assert.equal(afterLoss.info.status, 'OBJECTIVE_STATUS_CANCELLED');
    assert.deepEqual(typesOf(await eventsOf(objective.metadata.id)), ['USER_MESSAGE', 'CANCELLED', 'FINALIZED']);
    const again = await send('POST', `${base()}/${objective.metadata.id}/cancel`, { reason: 'stop' });
    assert.equal(again.status, 400, 'without the key a second cancel is still FAILED_PRECONDITION');
  });

  it('approve and deny retried with their Idempotency-Key decide once', async () => {
    const approved = await createObjective({ agentId, initialMessage: 'CALL risky {"n":1}\nSAY paid' });
    const [toolCallId] = (await waitForStatus(approved.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL')).info.pendingToolCallIds;
    await sendThrice('PUT', `${base()}/${approved.metadata.id}/tool_calls/${toolCallId}/approve`, {});
    await waitForStatus(approved.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(tools.requests.filter((request) => request.headers['idempotency-key'] === toolCallId).length, 1);
    assert.equal(typesOf(await eventsOf(approved.metadata.id)).filter((type) => type === 'TOOL_APPROVED').length, 1);

    const denied = await createObjective({ agentId, initialMessage: 'CALL risky {"n":2}\nSAY skipped' });
    const [deniedCallId] = (await waitForStatus(denied.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL')).info.pendingToolCallIds;
    await sendThrice('PUT', `${base()}/${denied.metadata.id}/tool_calls/${deniedCallId}/deny`, { memo: 'no' });
    await waitForStatus(denied.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    assert.equal(typesOf(await eventsOf(denied.metadata.id)).filter((type) => type === 'TOOL_DENIED').length, 1);
  });
});
