// The objectives API end to end (issue 9 items 1 and 10): the real app with an
// embedded actor runtime over the shared test database, the builtin/scripted
// model, and a real HTTP tool server. One API and one account serve every
// test; each test builds the agents it needs, so tests do not see each
// other's objectives where it matters (lists filter by agent).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Koa from 'koa';
import { objectiveRoutes } from '../../http/routes/objectives.routes';
import { EVENT_ENVELOPE_SQL } from '../../persistence/repositories/objectives.store';
import type { ApiResponse, TestApi } from '../support/api';
import { startTestApi } from '../support/api';
import { assertError, createAgent, createTool, createVariation, created, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { Code, missingId } from '../support/fixtures';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { waitForObjectiveStatus } from '../support/objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;


interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
}

interface SseRead {
  status: number;
  headers: Headers;
  /** Blocks with a `data:` field. */
  messages: SseMessage[];
  /** Every block, `retry:` and comments included (comments as `{}`). */
  blocks: SseMessage[];
  /** The JSON error body when the answer was not a stream. */
  body?: Json;
}

/** Parses an SSE text into its blocks (fields per block; comment lines are skipped). */
function parseSse(text: string): SseMessage[] {
  return text.split(/\n\n/).filter((block) => block.length > 0).map((block) => {
    const message: SseMessage = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id' || field === 'event' || field === 'retry') message[field] = value;
      if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
    }
    return message;
  });
}

describe('objectives API', function () {
  this.timeout(30_000);
  let api: TestApi;
  let tools: TestToolServer;
  let ws: WorkspaceFixture;
  /** A DRAFT agent with one scripted variation, the `echo` tool and the `risky` tool (requiresApproval). */
  let agentId: string;
  let variationId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;

  async function post(path: string, body?: unknown, token = ws.token, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return api.request('POST', path, { token, body, headers });
  }

  async function createObjective(body: Record<string, unknown>, token = ws.token): Promise<Json> {
    const response = await post(base(), body, token);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function getObjective(id: string): Promise<Json> {
    const response = await api.request('GET', `${base()}/${id}`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  /** Polls until the objective has `status` (or any terminal one, which then fails the assertion). */
  const waitForStatus = (id: string, status: string, timeoutMs = 10_000): Promise<Json> => waitForObjectiveStatus(getObjective, id, status, timeoutMs);

  async function eventsOf(id: string): Promise<Json[]> {
    const response = await api.request('GET', `${base()}/${id}/events?limit=1000`, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items;
  }

  const typesOf = (events: Json[]) => events.map((event) => String(event.data.type).replace('OBJECTIVE_EVENT_TYPE_', ''));

  /** Reads an SSE answer to its end (the server closes it), or fails after `timeoutMs`. */
  async function readSse(id: string, { headers = {}, query = '', token = ws.token, timeoutMs = 10_000, workspaceId = ws.workspaceId } = {}): Promise<SseRead> {
    const response = await fetch(`${api.url}/v1/workspaces/${workspaceId}/objectives/${id}/events/stream${query}`, {
      headers: { authorization: `Bearer ${token}`, ...headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const text = await response.text();
      return { status: response.status, headers: response.headers, messages: [], blocks: [], body: text ? JSON.parse(text) : undefined };
    }
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const blocks = parseSse(text);
    return { status: response.status, headers: response.headers, blocks, messages: blocks.filter((block) => block.data !== undefined) };
  }

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }, logLevel: 'info' });
    tools = await startTestToolServer();
    ws = await workspaceFixture(api);
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'runner' } });
    agentId = agent.metadata.id;
    variationId = (await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } } })).metadata.id;
    const echo = await createTool(api, ws.token, ws.workspaceId, {
      metadata: { name: 'echo' },
      spec: { http: { url: `${tools.url}/echo`, method: 'POST' }, inputSchema: { type: 'object' } },
    });
    const risky = await createTool(api, ws.token, ws.workspaceId, {
      metadata: { name: 'risky' },
      spec: { http: { url: `${tools.url}/echo?risky=true`, method: 'POST' }, requiresApproval: true, inputSchema: { type: 'object' } },
    });
    for (const tool of [echo, risky]) {
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variationId}/assignments`, { toolId: tool.metadata.id });
    }
  });

  after(async () => {
    await api?.close();
    await tools?.close();
  });

  describe('POST /objectives', () => {
    it('runs a DRAFT agent to COMPLETED, with every event in sequence and FINALIZED last', async () => {
      assert.equal((await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}`, { token: ws.token })).body.spec.status, 'AGENT_STATUS_DRAFT');
      const objective = await createObjective({ agentId, initialMessage: 'CALL echo {"q":"meaning"}\nSAY done', metadata: { externalId: 'first-run', labels: { suite: 'objectives' } } });
      assert.match(objective.metadata.id, /^obj_[0-9A-Z]{26}$/);
      assert.equal(objective.metadata.workspaceId, ws.workspaceId);
      assert.equal(objective.metadata.externalId, 'first-run');
      assert.deepEqual(objective.metadata.labels, { suite: 'objectives' });
      assert.equal(objective.spec.agentId, agentId);
      assert.equal(objective.spec.variationId, variationId);
      assert.equal(objective.spec.initialMessage, 'CALL echo {"q":"meaning"}\nSAY done');
      assert.ok(['OBJECTIVE_STATUS_RUNNING', 'OBJECTIVE_STATUS_COMPLETED'].includes(objective.info.status), objective.info.status);

      const done = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(done.info.lastMessage, 'done');
      assert.equal(done.info.toolCallCount, 1);
      assert.deepEqual(done.info.pendingToolCallIds, []);
      assert.ok(done.info.startedAt && done.info.finishedAt, JSON.stringify(done.info));
      assert.ok(done.info.usage.promptTokens > 0 && done.info.usage.completionTokens > 0, JSON.stringify(done.info.usage));

      const events = await eventsOf(objective.metadata.id);
      assert.deepEqual(typesOf(events), ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'FINALIZED']);
      assert.deepEqual(events.map((event) => event.sequence), [1, 2, 3, 4, 5, 6]);
      for (const event of events) {
        assert.match(event.metadata.id, /^objevt_[0-9A-Z]{26}$/);
        assert.equal(event.info.objective.id, objective.metadata.id);
      }
      assert.deepEqual(events[0].data.userMessage, { content: 'CALL echo {"q":"meaning"}\nSAY done' });
      const toolCallId = events[2].data.toolCalled.toolCallId;
      assert.equal(events[1].data.assistantMessage.toolCalls[0].functionName, 'echo');
      assert.equal(events[3].data.toolResult.toolCallId, toolCallId);
      // The tool saw the call once, with the arguments and the call id as Idempotency-Key.
      const received = tools.requests.filter((request) => request.headers['idempotency-key'] === toolCallId);
      assert.equal(received.length, 1);
      assert.deepEqual(JSON.parse(received[0].body), { q: 'meaning' });
      assert.match(events[3].data.toolResult.content, /meaning/);
      assert.equal(events[4].data.assistantMessage.content, 'done');
      assert.equal(events[5].data.finalized.status, 'OBJECTIVE_STATUS_COMPLETED');
      // Each event row gives back the webhook envelope exactly as published (the embedded log's message), keeping the
      // event's content once: its outbox row keeps no payload.
      const envelopes = async () => api.dataSource.query(
        `SELECT e.sequence, ${EVENT_ENVELOPE_SQL} = m.payload::jsonb AS same, e.envelope->'data'->'objectiveEvent'->>'sequence' AS envelope_sequence,
           o.payload IS NULL AS outbox_keeps_none
         FROM objective_events e JOIN actor_outbox o ON o.id = e.id LEFT JOIN embedded_stream_messages m ON m.message_id = e.id
         WHERE e.objective_id = $1 ORDER BY e.sequence`,
        [objective.metadata.id],
      );
      const expected = [1, 2, 3, 4, 5, 6].map((sequence) => ({ sequence, same: true, envelope_sequence: String(sequence), outbox_keeps_none: true }));
      for (let polls = 0; polls < 100 && JSON.stringify(await envelopes()) !== JSON.stringify(expected); polls++) await sleep(50);
      assert.deepEqual(await envelopes(), expected);
    });

    it('checks data against the inputDataSchema, naming data.<field>', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, {
        metadata: { name: 'typed' },
        spec: { inputDataSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
      });
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      assertError(await post(base(), { agentId: agent.metadata.id, data: {} }), 400, Code.INVALID_ARGUMENT, /data\.orderId/);
      assertError(await post(base(), { agentId: agent.metadata.id, data: { orderId: 7 } }), 400, Code.INVALID_ARGUMENT, /data\.orderId/);
      const missing = await post(base(), { agentId: agent.metadata.id, data: {} });
      assert.ok(missing.body.details.some((detail: Json) => JSON.stringify(detail).includes('data.orderId')), JSON.stringify(missing.body));
      // Valid data is the first user message, as JSON.
      const objective = await createObjective({ agentId: agent.metadata.id, data: { orderId: 'A-1' } });
      assert.deepEqual(objective.spec.data, { orderId: 'A-1' });
      const done = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(done.info.lastMessage, '{"orderId":"A-1"}', 'no instruction: the scripted model echoes the user message');
    });

    it('refuses unknown agents (NOT_FOUND) and agents that cannot run (FAILED_PRECONDITION)', async () => {
      assertError(await post(base(), { agentId: missingId('agent'), initialMessage: 'hi' }), 404, Code.NOT_FOUND, / not found$/);
      assertError(await post(base(), { initialMessage: 'hi' }), 400, Code.INVALID_ARGUMENT, /agentId/);
      assertError(await post(base(), { agentId, initialMessage: 'hi', bogus: 1 }), 400, Code.INVALID_ARGUMENT, /bogus/);

      const archived = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'archived' }, spec: { status: 'AGENT_STATUS_ARCHIVED' } });
      await createVariation(api, ws.token, ws.workspaceId, archived.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      assertError(await post(base(), { agentId: archived.metadata.id, initialMessage: 'hi' }), 400, Code.FAILED_PRECONDITION, /ARCHIVED/);

      const empty = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'empty' } });
      assertError(await post(base(), { agentId: empty.metadata.id, initialMessage: 'hi' }), 400, Code.FAILED_PRECONDITION, /no variations/);

      const modelless = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'modelless' } });
      await createVariation(api, ws.token, ws.workspaceId, modelless.metadata.id);
      assertError(await post(base(), { agentId: modelless.metadata.id, initialMessage: 'hi' }), 400, Code.FAILED_PRECONDITION, /no model/);

      const models = await api.request('GET', '/v1/models?prefix=openai/&limit=1', { token: ws.token });
      assert.equal(models.status, 200, JSON.stringify(models.body));
      const model = models.body.items[0];
      const disabledAgent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'disabled-model' } });
      await createVariation(api, ws.token, ws.workspaceId, disabledAgent.metadata.id, { spec: { modelConfig: { modelId: model.metadata.name } } });
      const disabled = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: ws.token, body: { status: 'MODEL_STATUS_DISABLED' } });
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      assertError(await post(base(), { agentId: disabledAgent.metadata.id, initialMessage: 'hi' }), 400, Code.FAILED_PRECONDITION, /DISABLED/);

      // A refused request leaves no objective (and no tenant) behind.
      const listed = await api.request('GET', `${base()}?agentId=${archived.metadata.id}`, { token: ws.token });
      assert.deepEqual(listed.body.items, []);
    });

    it('takes an explicit variation as variationId or variation_id; a weight-0 variation runs only when named', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'weighted' }, spec: { variationSelectionMode: 'VARIATION_SELECTION_MODE_WEIGHTED' } });
      const live = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'live' }, spec: { modelConfig: { modelId: MODEL_ID }, weight: 1 } });
      const dark = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'dark' }, spec: { modelConfig: { modelId: MODEL_ID }, weight: 0 } });
      for (let i = 0; i < 5; i += 1) {
        const objective = await createObjective({ agentId: agent.metadata.id, initialMessage: 'SAY auto' });
        assert.equal(objective.spec.variationId, live.metadata.id);
      }
      assert.equal((await createObjective({ agentId: agent.metadata.id, initialMessage: 'SAY dark', variationId: dark.metadata.id })).spec.variationId, dark.metadata.id);
      assert.equal((await createObjective({ agentId: agent.metadata.id, initialMessage: 'SAY dark', variation_id: dark.metadata.id })).spec.variationId, dark.metadata.id);
      assertError(
        await post(base(), { agentId: agent.metadata.id, initialMessage: 'SAY x', variationId: dark.metadata.id, variation_id: live.metadata.id }),
        400, Code.INVALID_ARGUMENT, /variation_id/,
      );
      // A variation of another agent is not one of this agent's.
      assertError(await post(base(), { agentId: agent.metadata.id, initialMessage: 'SAY x', variationId }), 404, Code.NOT_FOUND, / not found$/);
    });

    it('answers with the objective exactly as a read of it right after shows its metadata and spec', async () => {
      // The answer is built from the start turn's reply, not read back: it must not differ from the row.
      const objective = await createObjective({
        agentId,
        initialMessage: 'CALL risky {}',
        data: { b: 1, a: [1, 'x', null], nested: { z: true } },
        metadata: { externalId: 'answer-equals-read', labels: { team: 'core', tier: 'gold' } },
        tenant: { externalId: 'answer-tenant' },
        subject: { externalId: 'answer-subject' },
      });
      const read = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objective.metadata.id}`, { token: ws.token });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.deepStrictEqual(objective.metadata, read.body.metadata);
      assert.deepStrictEqual(objective.spec, read.body.spec);
      assert.equal(objective.info.createdAt, read.body.info.createdAt);
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_RUNNING');
      const plain = await createObjective({ agentId, initialMessage: 'CALL risky {}' });
      const plainRead = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${plain.metadata.id}`, { token: ws.token });
      assert.deepStrictEqual(plain.metadata, plainRead.body.metadata);
      assert.deepStrictEqual(plain.spec, plainRead.body.spec);
      for (const id of [objective.metadata.id, plain.metadata.id]) {
        await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/cancel`, { token: ws.token, body: {} });
      }
    });

    it('upserts the tenant and subject it asserts', async () => {
      const first = await createObjective({ agentId, initialMessage: 'SAY hi', tenant: { externalId: 'acme', name: 'Acme' }, subject: { externalId: 'u-1', email: 'u1@acme.test' } });
      assert.match(first.spec.tenantId, /^tenant_/);
      assert.match(first.spec.subjectId, /^subject_/);
      const second = await createObjective({ agentId, initialMessage: 'SAY hi', tenant: { externalId: 'acme' }, subject: { externalId: 'u-2' } });
      assert.equal(second.spec.tenantId, first.spec.tenantId);
      assert.notEqual(second.spec.subjectId, first.spec.subjectId);
      const tenant = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tenants/${first.spec.tenantId}`, { token: ws.token });
      assert.equal(tenant.status, 200, JSON.stringify(tenant.body));
      assert.equal(tenant.body.metadata.externalId, 'acme');
      const withoutTenant = await createObjective({ agentId, initialMessage: 'SAY hi' });
      assert.equal(withoutTenant.spec.tenantId, undefined);
    });

    it('honours Idempotency-Key: the same key gives the same objective', async () => {
      const body = { agentId, initialMessage: 'SAY once', metadata: { externalId: 'idem-1' } };
      const first = await post(base(), body, ws.token, { 'Idempotency-Key': 'create-once-1' });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const second = await post(base(), body, ws.token, { 'Idempotency-Key': 'create-once-1' });
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.body.metadata.id, first.body.metadata.id);
      const listed = await api.request('GET', `${base()}?externalId=idem-1`, { token: ws.token });
      assert.deepEqual(listed.body.items.map((item: Json) => item.metadata.id), [first.body.metadata.id]);
      assertError(await post(base(), { ...body, initialMessage: 'SAY other' }, ws.token, { 'Idempotency-Key': 'create-once-1' }), 400, Code.INVALID_ARGUMENT, /Idempotency-Key/);
      const other = await post(base(), body, ws.token, { 'Idempotency-Key': 'create-once-2' });
      assert.notEqual(other.body.metadata.id, first.body.metadata.id);
    });
  });

  describe('GET /objectives', () => {
    it('filters by agentId, status, tenantId, subjectId, externalId, labels, and pages', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'listed' } });
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      const id = agent.metadata.id;
      const a = await createObjective({ agentId: id, initialMessage: 'SAY a', tenant: { externalId: 'list-t1' }, metadata: { externalId: 'list-a', labels: { team: 'red' } } });
      const b = await createObjective({ agentId: id, initialMessage: 'SAY b', subject: { externalId: 'list-s1' }, metadata: { labels: { team: 'blue' } } });
      const c = await createObjective({ agentId: id, initialMessage: 'SLEEP 30000\nSAY never', metadata: { labels: { team: 'red', tier: 'gold' } } });
      await waitForStatus(a.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      await waitForStatus(b.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const ids = async (query: string) => {
        const response = await api.request('GET', `${base()}?agentId=${id}&${query}`, { token: ws.token });
        assert.equal(response.status, 200, `${query}: ${JSON.stringify(response.body)}`);
        return response.body.items.map((item: Json) => item.metadata.id);
      };
      assert.deepEqual(await ids(''), [a.metadata.id, b.metadata.id, c.metadata.id]);
      assert.deepEqual(await ids('sortOrder=desc'), [c.metadata.id, b.metadata.id, a.metadata.id]);
      assert.deepEqual(await ids('status=OBJECTIVE_STATUS_COMPLETED'), [a.metadata.id, b.metadata.id]);
      assert.deepEqual(await ids('status=OBJECTIVE_STATUS_RUNNING'), [c.metadata.id]);
      assert.deepEqual(await ids(`tenantId=${a.spec.tenantId}`), [a.metadata.id]);
      assert.deepEqual(await ids(`subjectId=${b.spec.subjectId}`), [b.metadata.id]);
      assert.deepEqual(await ids('externalId=list-a'), [a.metadata.id]);
      assert.deepEqual(await ids('labels=team=red'), [a.metadata.id, c.metadata.id]);
      assert.deepEqual(await ids('labels=team=red,tier=gold'), [c.metadata.id]);
      assert.deepEqual(await ids(`parentObjectiveId=${a.metadata.id}`), []);
      assert.deepEqual(await ids(`scheduleId=${missingId('sched')}`), []);
      assertError(await api.request('GET', `${base()}?status=DONE`, { token: ws.token }), 400, Code.INVALID_ARGUMENT, /status/);
      assertError(await api.request('GET', `${base()}?labels=nope`, { token: ws.token }), 400, Code.INVALID_ARGUMENT, /labels/);

      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; page < 5; page += 1) {
        const response = await api.request('GET', `${base()}?agentId=${id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: ws.token });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.ok(response.body.items.length <= 2);
        seen.push(...response.body.items.map((item: Json) => item.metadata.id));
        cursor = response.body.pagination.nextCursor;
        if (!cursor) break;
      }
      assert.deepEqual(seen, [a.metadata.id, b.metadata.id, c.metadata.id]);
      await post(`${base()}/${c.metadata.id}/cancel`);
    });

    it('lists the children of an objective by parentObjectiveId', async () => {
      const helper = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'helper' } });
      await createVariation(api, ws.token, ws.workspaceId, helper.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      const boss = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'boss' } });
      const bossVariation = await createVariation(api, ws.token, ws.workspaceId, boss.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${boss.metadata.id}/variations/${bossVariation.metadata.id}/assignments`, { agentId: helper.metadata.id });
      const parent = await createObjective({ agentId: boss.metadata.id, initialMessage: 'CALL helper {"prompt":"SAY child says hi"}\nSAY parent done' });
      const done = await waitForStatus(parent.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const parentEvents = await eventsOf(parent.metadata.id);
      assert.equal(done.info.subObjectiveCount, 1, JSON.stringify(parentEvents.map((event) => event.data)));
      assert.equal(done.info.lastMessage, 'parent done');
      const children = await api.request('GET', `${base()}?parentObjectiveId=${parent.metadata.id}`, { token: ws.token });
      assert.equal(children.body.items.length, 1, JSON.stringify(children.body));
      const child = children.body.items[0];
      assert.equal(child.spec.parentObjectiveId, parent.metadata.id);
      assert.equal(child.spec.agentId, helper.metadata.id);
      assert.equal(child.info.lastMessage, 'child says hi');
      const types = typesOf(parentEvents);
      assert.ok(types.includes('SUB_OBJECTIVE_CREATED'), types.join(', '));
    });
  });

  describe('POST /objectives/{id}/messages', () => {
    it('takes a follow-up while running (at the next turn) and runs again after COMPLETED', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 400\nSAY first' });
      const id = objective.metadata.id;
      const during = await post(`${base()}/${id}/messages`, { content: 'SAY second' });
      assert.equal(during.status, 200, JSON.stringify(during.body));
      assert.equal(during.body.info.status, 'OBJECTIVE_STATUS_RUNNING');
      const done = await waitForStatus(id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(done.info.lastMessage, 'second');
      assert.deepEqual(typesOf(await eventsOf(id)), ['USER_MESSAGE', 'USER_MESSAGE', 'ASSISTANT_MESSAGE', 'ASSISTANT_MESSAGE', 'FINALIZED']);

      const again = await post(`${base()}/${id}/messages`, { content: 'SAY third' });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.ok(['OBJECTIVE_STATUS_RUNNING', 'OBJECTIVE_STATUS_COMPLETED'].includes(again.body.info.status));
      await sleep(50);
      const rerun = await waitForStatus(id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(rerun.info.lastMessage, 'third');
      const events = await eventsOf(id);
      assert.deepEqual(typesOf(events).slice(5), ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'FINALIZED']);
      assert.deepEqual(events.map((event) => event.sequence), events.map((_event, index) => index + 1));
      assertError(await post(`${base()}/${id}/messages`, {}), 400, Code.INVALID_ARGUMENT, /content/);
    });

    it('is FAILED_PRECONDITION after CANCELLED', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 30000\nSAY never' });
      // No body at all: the cancel body is optional.
      const cancelled = await api.request('POST', `${base()}/${objective.metadata.id}/cancel`, { token: ws.token });
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.equal(cancelled.body.info.status, 'OBJECTIVE_STATUS_CANCELLED');
      assertError(await post(`${base()}/${objective.metadata.id}/messages`, { content: 'SAY late' }), 400, Code.FAILED_PRECONDITION, /CANCELLED/);
      assertError(await post(`${base()}/${objective.metadata.id}/cancel`, {}), 400, Code.FAILED_PRECONDITION, /already/);
    });
  });

  describe('POST /objectives/{id}/cancel', () => {
    it('cancels during a slow model call within a second, with CANCELLED and FINALIZED events', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 30000\nSAY too late' });
      await sleep(100);
      const started = Date.now();
      const response = await post(`${base()}/${objective.metadata.id}/cancel`, { reason: 'changed my mind' });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.info.status, 'OBJECTIVE_STATUS_CANCELLED');
      assert.ok(Date.now() - started < 1000, `cancel took ${Date.now() - started} ms`);
      const events = await eventsOf(objective.metadata.id);
      assert.deepEqual(typesOf(events), ['USER_MESSAGE', 'CANCELLED', 'FINALIZED']);
      assert.equal(events[1].data.cancelled.reason, 'changed my mind');
      assert.equal(events[2].data.finalized.status, 'OBJECTIVE_STATUS_CANCELLED');
      assert.ok((await getObjective(objective.metadata.id)).info.finishedAt);
    });
  });

  describe('approve and deny', () => {
    it('holds a requiresApproval tool call until approved, then completes', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL risky {"amount":5}\nSAY paid' });
      const waiting = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
      assert.equal(waiting.info.pendingToolCallIds.length, 1);
      const [toolCallId] = waiting.info.pendingToolCallIds;
      const requested = (await eventsOf(objective.metadata.id)).find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_APPROVAL_REQUESTED');
      assert.equal(requested?.data.toolApprovalRequested.toolCallId, toolCallId);
      assert.equal(tools.requests.filter((request) => request.headers['idempotency-key'] === toolCallId).length, 0, 'not called before approval');

      assertError(await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/call_unknown/approve`, { token: ws.token, body: {} }), 404, Code.NOT_FOUND, /call_unknown/);
      const approved = await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/approve`, { token: ws.token, body: {} });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.metadata.id, objective.metadata.id);
      assert.deepEqual(approved.body.info.pendingToolCallIds, []);
      const done = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(done.info.lastMessage, 'paid');
      const types = typesOf(await eventsOf(objective.metadata.id));
      assert.deepEqual(types, ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_APPROVAL_REQUESTED', 'TOOL_APPROVED', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'FINALIZED']);
      assert.equal(tools.requests.filter((request) => request.headers['idempotency-key'] === toolCallId).length, 1);

      assertError(await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/approve`, { token: ws.token, body: {} }), 400, Code.FAILED_PRECONDITION, /not awaiting approval/);
      assertError(await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/deny`, { token: ws.token, body: { memo: 'late' } }), 400, Code.FAILED_PRECONDITION, /not awaiting approval/);
    });

    it("lets the assignment's requiresApproval override the tool's (and approve without a body)", async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'careful' } });
      const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      const tool = await createTool(api, ws.token, ws.workspaceId, { metadata: { name: 'careful_echo' }, spec: { http: { url: `${tools.url}/echo`, method: 'POST' } } });
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id, requiresApproval: true });
      const objective = await createObjective({ agentId: agent.metadata.id, initialMessage: 'CALL careful_echo {}\nSAY ok' });
      const waiting = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
      const approved = await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${waiting.info.pendingToolCallIds[0]}/approve`, { token: ws.token });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal((await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED')).info.lastMessage, 'ok');
    });

    it('sends the deny memo to the model as the tool result', async () => {
      // No instruction after the CALL: the scripted model answers with the latest tool result.
      const objective = await createObjective({ agentId, initialMessage: 'CALL risky {"amount":1000}' });
      const waiting = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
      const [toolCallId] = waiting.info.pendingToolCallIds;
      const denied = await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/deny`, { token: ws.token, body: { memo: 'too expensive' } });
      assert.equal(denied.status, 200, JSON.stringify(denied.body));
      const done = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(done.info.lastMessage, '[denied: too expensive]');
      const events = await eventsOf(objective.metadata.id);
      const deniedEvent = events.find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_DENIED');
      assert.deepEqual(deniedEvent?.data.toolDenied, { toolCallId, memo: 'too expensive' });
      assert.equal(tools.requests.filter((request) => request.headers['idempotency-key'] === toolCallId).length, 0, 'a denied call is never sent');
      assertError(await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/deny`, { token: ws.token, body: {} }), 400, Code.FAILED_PRECONDITION, /not awaiting approval/);
      assertError(await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${toolCallId}/deny`, { token: ws.token, body: { note: 'x' } }), 400, Code.INVALID_ARGUMENT, /note/);
    });
  });

  describe('POST /objectives/{id}/feedback', () => {
    it("records feedback and moves the variation's score", async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'rated' } });
      const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      const objective = await createObjective({ agentId: agent.metadata.id, initialMessage: 'SAY rate me' });
      await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const variationPath = `/v1/workspaces/${ws.workspaceId}/agents/${agent.metadata.id}/variations/${variation.metadata.id}`;
      const info = async () => (await api.request('GET', variationPath, { token: ws.token })).body.info;
      assert.deepEqual([(await info()).score, (await info()).feedbackCount], [0.5, 0]);
      const feedback = await post(`${base()}/${objective.metadata.id}/feedback`, { rating: 'FEEDBACK_RATING_POSITIVE', comment: 'spot on' });
      assert.equal(feedback.status, 200, JSON.stringify(feedback.body));
      assert.match(feedback.body.metadata.id, /^feedback_/);
      assert.deepEqual(feedback.body.spec, {
        agentId: agent.metadata.id, variationId: variation.metadata.id, objectiveId: objective.metadata.id, rating: 'FEEDBACK_RATING_POSITIVE', comment: 'spot on',
      });
      assert.deepEqual([(await info()).score, (await info()).feedbackCount], [2 / 3, 1]);
      await post(`${base()}/${objective.metadata.id}/feedback`, { rating: 'FEEDBACK_RATING_NEGATIVE' });
      assert.deepEqual([(await info()).score, (await info()).feedbackCount], [0.5, 2]);
      const listed = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agent.metadata.id}/feedback`, { token: ws.token });
      assert.equal(listed.body.items.length, 2);
      assertError(await post(`${base()}/${objective.metadata.id}/feedback`, { rating: 'GREAT' }), 400, Code.INVALID_ARGUMENT, /rating/);
    });
  });

  describe('GET /objectives/{id}/events', () => {
    it('pages ascending by sequence with a cursor', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL echo {"page":1}\nCALL echo {"page":2}\nSAY paged' });
      await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const all = await eventsOf(objective.metadata.id);
      assert.ok(all.length >= 8, typesOf(all).join(', '));
      const sequences: number[] = [];
      let cursor = '';
      for (let page = 0; page < 20; page += 1) {
        const response = await api.request('GET', `${base()}/${objective.metadata.id}/events?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: ws.token });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.ok(response.body.items.length <= 3);
        sequences.push(...response.body.items.map((event: Json) => event.sequence));
        cursor = response.body.pagination.nextCursor;
        if (!cursor) break;
      }
      assert.deepEqual(sequences, all.map((_event, index) => index + 1));
      assertError(await api.request('GET', `${base()}/${objective.metadata.id}/events?cursor=garbage`, { token: ws.token }), 400, Code.INVALID_ARGUMENT, /cursor/);
    });
  });

  describe('GET /objectives/{id}/events/stream', () => {
    it('streams every event of a finished objective (id: the sequence, data: the event), then ends', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL echo {"sse":true}\nSAY streamed' });
      await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const listed = await eventsOf(objective.metadata.id);
      const read = await readSse(objective.metadata.id);
      assert.equal(read.status, 200);
      assert.match(read.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(read.headers.get('cache-control'), 'no-cache');
      assert.equal(read.headers.get('x-accel-buffering'), 'no');
      assert.equal(read.blocks[0].retry, '1000');
      assert.deepEqual(read.messages.map((message) => message.id), listed.map((event) => String(event.sequence)));
      assert.ok(read.messages.every((message) => message.event === undefined));
      assert.deepEqual(read.messages.map((message) => JSON.parse(message.data!)), listed);
      assert.equal(JSON.parse(read.messages.at(-1)!.data!).data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    });

    it('streams a running objective live until FINALIZED', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 300\nCALL echo {"live":1}\nSLEEP 300\nSAY live done' });
      const started = Date.now();
      const read = await readSse(objective.metadata.id);
      assert.ok(Date.now() - started >= 500, 'the stream stayed open while the objective ran');
      const types = read.messages.map((message) => JSON.parse(message.data!).data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
      assert.deepEqual(types, ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'FINALIZED']);
      assert.deepEqual(read.messages.map((message) => Number(message.id)), [1, 2, 3, 4, 5, 6]);
    });

    it('resumes after Last-Event-ID (or lastEventId), and answers 204 when nothing is left', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL echo {"resume":1}\nSAY resumed' });
      await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
      const fromHeader = await readSse(objective.metadata.id, { headers: { 'Last-Event-ID': '3' } });
      assert.deepEqual(fromHeader.messages.map((message) => message.id), ['4', '5', '6']);
      const fromQuery = await readSse(objective.metadata.id, { query: '?lastEventId=4' });
      assert.deepEqual(fromQuery.messages.map((message) => message.id), ['5', '6']);
      const headerWins = await readSse(objective.metadata.id, { headers: { 'Last-Event-ID': '5' }, query: '?lastEventId=1' });
      assert.deepEqual(headerWins.messages.map((message) => message.id), ['6']);
      const nothingLeft = await readSse(objective.metadata.id, { headers: { 'Last-Event-ID': '6' } });
      assert.equal(nothingLeft.status, 204);
      const bad = await readSse(objective.metadata.id, { headers: { 'Last-Event-ID': 'abc' } });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, Code.INVALID_ARGUMENT);
      assert.match(bad.body.message, /Last-Event-ID/);
      // Past the largest sequence there can be (npm run fuzz found a 500 here: the integer overflowed in the query).
      const huge = await readSse(objective.metadata.id, { query: '?lastEventId=99999999999999999999' });
      assert.equal(huge.status, 400, JSON.stringify(huge.body));
      assert.match(huge.body.message, /lastEventId/);
      const hugeHeader = await readSse(objective.metadata.id, { headers: { 'Last-Event-ID': '2147483648' } });
      assert.equal(hugeHeader.status, 400);
      assert.match(hugeHeader.body.message, /Last-Event-ID/);
    });

    it('resumes a live stream with only the later events', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL risky {}\nSAY after approval' });
      const waiting = await waitForStatus(objective.metadata.id, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
      // The stream stays open while the objective waits; approve from "another process".
      const reading = readSse(objective.metadata.id, { headers: { 'Last-Event-ID': '2' } });
      await sleep(300);
      const approved = await api.request('PUT', `${base()}/${objective.metadata.id}/tool_calls/${waiting.info.pendingToolCallIds[0]}/approve`, { token: ws.token, body: {} });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      const read = await reading;
      const types = read.messages.map((message) => JSON.parse(message.data!).data.type.replace('OBJECTIVE_EVENT_TYPE_', ''));
      assert.deepEqual(types, ['TOOL_APPROVAL_REQUESTED', 'TOOL_APPROVED', 'TOOL_CALLED', 'TOOL_RESULT', 'ASSISTANT_MESSAGE', 'FINALIZED']);
      assert.equal(read.messages[0].id, '3');
    });

    it('stops reading the events when the client goes away', async () => {
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 30000\nSAY never' });
      const service = api.services.objectives;
      const original = service.eventsAfter;
      let reads = 0;
      service.eventsAfter = function (this: typeof service, ...args: Parameters<typeof original>) {
        reads += 1;
        return original.apply(this, args);
      };
      try {
        const controller = new AbortController();
        const response = await fetch(`${api.url}${base()}/${objective.metadata.id}/events/stream`, { headers: { authorization: `Bearer ${ws.token}` }, signal: controller.signal });
        assert.equal(response.status, 200);
        await sleep(400);
        assert.ok(reads >= 2, `the stream polls (${reads} reads)`);
        controller.abort();
        await sleep(300);
        const afterAbort = reads;
        await sleep(500);
        assert.equal(reads, afterAbort, 'no reads after the client left');
      } finally {
        service.eventsAfter = original;
        await post(`${base()}/${objective.metadata.id}/cancel`);
      }
    });

    it('sends heartbeat comments on a quiet stream, and ends open streams when the node drains', async () => {
      // The stream route alone, with short timings, on a bare Koa server (authentication is the mount's, tested above).
      const objective = await createObjective({ agentId, initialMessage: 'SLEEP 30000\nSAY never' });
      let draining = false;
      const route = objectiveRoutes({ objectives: api.services.objectives, isDraining: () => draining, stream: { pollMs: 20, heartbeatMs: 100 } })
        .find((candidate) => candidate.operationId === 'streamObjectiveEvents')!;
      const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const };
      const app = new Koa();
      app.use(async (ctx) => {
        await route.handler({
          params: { workspaceId: ws.workspaceId, id: objective.metadata.id }, query: {}, body: undefined, principal: undefined as never,
          workspace, headers: ctx.headers, requestId: 'test', koa: ctx,
        });
      });
      const server = http.createServer(app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: AbortSignal.timeout(5000) });
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while ((text.match(/^: heartbeat$/gm) ?? []).length < 2) text += decoder.decode((await reader.read()).value, { stream: true });
        draining = true;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
        const blocks = parseSse(text).filter((block) => block.data !== undefined);
        assert.deepEqual(blocks.map((block) => block.id), ['1'], 'the USER_MESSAGE, then heartbeats, then the end');
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await post(`${base()}/${objective.metadata.id}/cancel`);
      }
    });

    it('answers NOT_FOUND as a Status body for an unknown objective', async () => {
      const read = await readSse(missingId('obj'));
      assert.equal(read.status, 404);
      assert.equal(read.body.code, Code.NOT_FOUND);
    });
  });

  describe('scopes and workspaces', () => {
    let objectiveId: string;
    let toolCallId: string;
    before(async () => {
      const objective = await createObjective({ agentId, initialMessage: 'CALL risky {}\nSAY guarded' });
      objectiveId = objective.metadata.id;
      toolCallId = (await waitForStatus(objectiveId, 'OBJECTIVE_STATUS_AWAITING_APPROVAL')).info.pendingToolCallIds[0];
    });
    after(async () => {
      await post(`${base()}/${objectiveId}/cancel`);
    });

    const routes = () => [
      { method: 'POST', path: (w: string) => `/v1/workspaces/${w}/objectives`, scope: 'objectives:manage', body: { agentId, initialMessage: 'SAY x' } },
      { method: 'GET', path: (w: string) => `/v1/workspaces/${w}/objectives`, scope: 'objectives:read' },
      { method: 'GET', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}`, scope: 'objectives:read' },
      { method: 'POST', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/messages`, scope: 'objectives:manage', body: { content: 'SAY x' } },
      { method: 'POST', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/cancel`, scope: 'objectives:manage', body: {} },
      { method: 'PUT', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/tool_calls/${toolCallId}/approve`, scope: 'objectives:manage', body: {} },
      { method: 'PUT', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/tool_calls/${toolCallId}/deny`, scope: 'objectives:manage', body: {} },
      { method: 'POST', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/feedback`, scope: 'objectives:manage', body: { rating: 'FEEDBACK_RATING_POSITIVE' } },
      { method: 'GET', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/events`, scope: 'objectives:read' },
      { method: 'GET', path: (w: string) => `/v1/workspaces/${w}/objectives/${objectiveId}/events/stream`, scope: 'objectives:read' },
    ];

    it('needs objectives:manage to act and objectives:read to read', async () => {
      const reader = await ws.keyWith(['objectives:read']);
      const agentsOnly = await ws.keyWith(['agents:manage']);
      for (const route of routes()) {
        const name = `${route.method} ${route.path('{ws}')}`;
        const withoutScope = await api.request(route.method, route.path(ws.workspaceId), { token: agentsOnly, body: route.body });
        assertError(withoutScope, 403, Code.PERMISSION_DENIED, `this credential lacks the ${route.scope} scope`);
        if (route.scope === 'objectives:manage') {
          assertError(await api.request(route.method, route.path(ws.workspaceId), { token: reader, body: route.body }), 403, Code.PERMISSION_DENIED, /objectives:manage/);
        } else if (!route.path('').endsWith('/stream')) {
          const read = await api.request(route.method, route.path(ws.workspaceId), { token: reader });
          assert.equal(read.status, 200, `${name}: ${JSON.stringify(read.body)}`);
        }
      }
      assert.equal((await readSse(objectiveId, { token: reader, headers: { 'Last-Event-ID': '1' }, timeoutMs: 500 }).catch((error: Error) => ({ status: error.name }))).status, 'TimeoutError',
        'a reader gets the (still open) stream');
      // Still waiting: nothing the refused calls tried went through.
      assert.equal((await getObjective(objectiveId)).info.status, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
    });

    it("refuses a key of another workspace, and finds no objective of another workspace", async () => {
      const other = await ws.otherWorkspace();
      for (const route of routes()) {
        const name = `${route.method} ${route.path('{ws}')}`;
        // The other workspace's key on this workspace's paths: refused as on every workspace route.
        const foreignKey = await api.request(route.method, route.path(ws.workspaceId), { token: other.token, body: route.body });
        assertError(foreignKey, 403, Code.PERMISSION_DENIED, 'this API key belongs to another workspace');
        if (route.path('').endsWith('/objectives')) continue;
        // This workspace's objective through the other workspace's own paths: not found there.
        const foreignId = await api.request(route.method, route.path(other.workspaceId), { token: other.token, body: route.body });
        assert.equal(foreignId.status, 404, `${name}: ${JSON.stringify(foreignId.body)}`);
        assert.equal(foreignId.body.code, Code.NOT_FOUND, name);
        assert.equal(foreignId.body.message, `objective ${objectiveId} not found`, name);
      }
      // Another account's key: its workspace is not this one.
      const stranger = await workspaceFixture(api);
      const response = await api.request('GET', `${base()}/${objectiveId}`, { token: stranger.token });
      assertError(response, 404, Code.NOT_FOUND, / not found$/);
      assert.equal((await getObjective(objectiveId)).info.status, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
    });
  });
});
