// The webhook deliveries API (interface-spec 2.16, api-decisions.md "Webhooks")
// over the real app and the shared test database. The endpoint actor does not
// exist yet, so deliveries are written by the store's projector directly (as
// the actor would), and the retry's port is a recording double bound here.
import assert from 'node:assert/strict';
import type Koa from 'koa';
import { RuntimeWebhookEndpointCommands } from '../../actors/kinds/runtime-webhook-endpoint-commands';
import { webhookDeliveryRoutes } from '../../http/routes/webhook-deliveries.routes';
import { createAgentsStore } from '../../persistence/repositories/agents.store';
import type { Principal } from '../../src/auth/principal';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { WebhookDeliveryRecord } from '../../src/webhooks/webhook-delivery';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery.service';
import { WEBHOOK_ENDPOINT_KIND, webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';
import { assertError, createAgent } from '../support/agents-world';
import { startTestApi, type TestApi } from '../support/api';
import { Code, missingId } from '../support/fixtures';
import { deliveryChanges, deliveryRecord, seedObjective, type SeededObjective } from '../support/webhook-deliveries';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const CURRENT_URL = 'https://hooks.example.com/agentrt';
const OLD_URL = 'https://old-hooks.example.com/agentrt';

describe('webhook deliveries API', function () {
  this.timeout(30_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let sql: SqlRunner;
  let agentId: string;
  let bareAgentId: string;
  let foreign: { workspaceId: string; token: string; agentId: string };
  let objectiveA: SeededObjective;
  let objectiveB: SeededObjective;
  /** Deliveries of `agentId`, in id order: a1..a4 of objective A, b1 of objective B. */
  let rows: Record<'a1' | 'a2' | 'a3' | 'a4' | 'b1', WebhookDeliveryRecord>;
  /** A FAILED delivery of `bareAgentId` (no webhookEventsUrl). */
  let bareFailed: WebhookDeliveryRecord;
  let foreignFailed: WebhookDeliveryRecord;

  const path = (agent = agentId, workspaceId = ws.workspaceId) => `/v1/workspaces/${workspaceId}/agents/${agent}/webhook_deliveries`;
  const list = (query = '', token = ws.token) => api.request('GET', `${path()}${query}`, { token });
  const retry = (id: string, agent = agentId, token = ws.token) => api.request('POST', `${path(agent)}/${id}/retry`, { token, body: {} });
  const idsOf = (response: { status: number; body: Json }): string[] => {
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items.map((item: Json) => item.metadata.id);
  };

  before(async () => {
    api = await startTestApi();
    sql = { query: (text, parameters) => api.dataSource.query(text, parameters) };
    ws = await workspaceFixture(api);
    const owner = (agent: string, workspaceId = ws.workspaceId) => ({ accountId: ws.account.accountId, workspaceId, agentId: agent });
    agentId = (await createAgent(api, ws.token, ws.workspaceId, { spec: { webhookEventsUrl: CURRENT_URL } })).metadata.id;
    bareAgentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const other = await ws.otherWorkspace();
    foreign = { ...other, agentId: (await createAgent(api, other.token, other.workspaceId, { spec: { webhookEventsUrl: CURRENT_URL } })).metadata.id };

    objectiveA = await seedObjective(sql, owner(agentId), 4);
    objectiveB = await seedObjective(sql, owner(agentId), 1);
    const ofA = (sequence: number, overrides: Partial<WebhookDeliveryRecord>) =>
      deliveryRecord(owner(agentId), objectiveA.objectiveId, objectiveA.eventIds[sequence - 1], { sequence, webhookUrl: OLD_URL, ...overrides });
    rows = {
      a1: ofA(1, {
        externalId: 'order-17', labels: { team: 'ops' }, status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', attemptCount: 1,
        lastAttemptAt: '2025-01-01T00:00:11.000Z', latencyMs: 87, httpStatusCode: 200, responseContentLength: 1234,
        responseHeaders: { 'content-type': 'application/json' }, revision: 2,
      }),
      a2: ofA(2, {
        eventType: 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE', status: 'WEBHOOK_DELIVERY_STATUS_FAILED', attemptCount: 8,
        lastAttemptAt: '2025-01-06T00:00:00.000Z', latencyMs: 15000, httpStatusCode: 0, responseContentLength: 0, errorMessage: 'timed out after 15 s', revision: 16,
      }),
      a3: ofA(3, {
        eventType: 'OBJECTIVE_EVENT_TYPE_TOOL_CALLED', attemptCount: 1, lastAttemptAt: '2025-01-01T00:00:12.000Z', nextAttemptAt: '2025-01-01T00:00:17.000Z',
        httpStatusCode: 503, latencyMs: 40, responseContentLength: 12, revision: 3,
      }),
      a4: ofA(4, { eventType: 'OBJECTIVE_EVENT_TYPE_FINALIZED', status: 'WEBHOOK_DELIVERY_STATUS_DISABLED', errorMessage: 'endpoint disabled (410 Gone)', revision: 2 }),
      b1: deliveryRecord(owner(agentId), objectiveB.objectiveId, objectiveB.eventIds[0], { webhookUrl: CURRENT_URL }),
    };
    const bare = await seedObjective(sql, owner(bareAgentId), 1);
    bareFailed = deliveryRecord(owner(bareAgentId), bare.objectiveId, bare.eventIds[0], { status: 'WEBHOOK_DELIVERY_STATUS_FAILED', attemptCount: 8 });
    const foreignObjective = await seedObjective(sql, owner(foreign.agentId, foreign.workspaceId), 1);
    foreignFailed = deliveryRecord(owner(foreign.agentId, foreign.workspaceId), foreignObjective.objectiveId, foreignObjective.eventIds[0], {
      status: 'WEBHOOK_DELIVERY_STATUS_FAILED',
    });
    await api.services.webhookDeliveriesStore.project(sql, deliveryChanges([...Object.values(rows), bareFailed, foreignFailed]));
  });

  after(async () => api?.close());

  describe('GET /v1/workspaces/{ws}/agents/{agentId}/webhook_deliveries', () => {
    it('lists every field of a delivery, the optional ones only when set', async () => {
      const response = await list();
      assert.deepEqual(idsOf(response), [rows.a1, rows.a2, rows.a3, rows.a4, rows.b1].map((row) => row.id));
      const [a1, , a3, , b1] = response.body.items;
      assert.deepEqual(a1, {
        metadata: {
          id: rows.a1.id, accountId: ws.account.accountId, createdAt: '2025-01-01T00:00:10.000Z', profileId: 'prof_seed', workspaceId: ws.workspaceId,
          externalId: 'order-17', labels: { team: 'ops' },
        },
        data: {
          agentId, objectiveId: objectiveA.objectiveId, objectiveEventId: objectiveA.eventIds[0], webhookId: rows.a1.id, webhookUrl: OLD_URL,
          eventType: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE', status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', attemptCount: 1,
          lastAttemptAt: '2025-01-01T00:00:11.000Z', latencyMs: 87, httpStatusCode: 200, responseContentLength: '1234',
          responseHeaders: { 'content-type': 'application/json' },
        },
      });
      assert.equal(a3.data.nextAttemptAt, '2025-01-01T00:00:17.000Z', 'a PENDING delivery between attempts says when the next one is due');
      assert.equal(response.body.items[1].data.responseContentLength, '0', 'a zero length is a length');
      assert.deepEqual(b1, {
        metadata: { id: rows.b1.id, accountId: ws.account.accountId, createdAt: '2025-01-01T00:00:10.000Z', profileId: 'prof_seed', workspaceId: ws.workspaceId },
        data: {
          agentId, objectiveId: objectiveB.objectiveId, objectiveEventId: objectiveB.eventIds[0], webhookId: rows.b1.id, webhookUrl: CURRENT_URL,
          eventType: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE', status: 'WEBHOOK_DELIVERY_STATUS_PENDING', attemptCount: 0,
        },
      });
    });

    it('filters by status, objectiveId and eventType, alone and together', async () => {
      assert.deepEqual(idsOf(await list('?status=WEBHOOK_DELIVERY_STATUS_FAILED')), [rows.a2.id]);
      assert.deepEqual(idsOf(await list('?status=WEBHOOK_DELIVERY_STATUS_PENDING')), [rows.a3.id, rows.b1.id]);
      assert.deepEqual(idsOf(await list('?status=WEBHOOK_DELIVERY_STATUS_UNSPECIFIED')).length, 5, 'UNSPECIFIED lists every status');
      assert.deepEqual(idsOf(await list(`?objectiveId=${objectiveB.objectiveId}`)), [rows.b1.id]);
      assert.deepEqual(idsOf(await list('?eventType=OBJECTIVE_EVENT_TYPE_FINALIZED')), [rows.a4.id]);
      assert.deepEqual(idsOf(await list('?eventType=OBJECTIVE_EVENT_TYPE_UNSPECIFIED')).length, 5, 'UNSPECIFIED lists every type');
      assert.deepEqual(idsOf(await list(`?status=WEBHOOK_DELIVERY_STATUS_PENDING&objectiveId=${objectiveA.objectiveId}`)), [rows.a3.id]);
      assert.deepEqual(idsOf(await list(`?eventType=OBJECTIVE_EVENT_TYPE_USER_MESSAGE&objectiveId=${objectiveA.objectiveId}`)), [rows.a1.id]);
      assert.deepEqual(idsOf(await list(`?objectiveId=${missingId('obj')}`)), []);
      assert.deepEqual(idsOf(await list('?labels=team=ops')), [rows.a1.id]);
    });

    it('returns INVALID_ARGUMENT naming the field for a bad filter value', async () => {
      for (const [query, field] of [
        ['status=WEBHOOK_DELIVERY_STATUS_LOST', 'status'],
        ['status=FAILED', 'status'],
        ['eventType=OBJECTIVE_EVENT_TYPE_NOPE', 'eventType'],
        ['objectiveId=agent_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'objectiveId'],
        ['objectiveId=', 'objectiveId'],
      ]) {
        const response = await list(`?${query}`);
        assertError(response, 400, Code.INVALID_ARGUMENT, new RegExp(`^${field}: `));
        assert.equal(response.body.details[0].fieldViolations[0].field, field, query);
      }
    });

    it('pages with a cursor in either order', async () => {
      const first = await list('?limit=2');
      assert.deepEqual(idsOf(first), [rows.a1.id, rows.a2.id]);
      const second = await list(`?limit=2&cursor=${first.body.pagination.nextCursor}`);
      assert.deepEqual(idsOf(second), [rows.a3.id, rows.a4.id]);
      const last = await list(`?limit=2&cursor=${second.body.pagination.nextCursor}`);
      assert.deepEqual(idsOf(last), [rows.b1.id]);
      assert.equal(last.body.pagination.nextCursor, '');
      const newest = await list('?limit=3&sortOrder=desc');
      assert.deepEqual(idsOf(newest), [rows.b1.id, rows.a4.id, rows.a3.id]);
      assertError(await list(`?sortOrder=asc&cursor=${newest.body.pagination.nextCursor}`), 400, Code.INVALID_ARGUMENT, 'cursor: was made for the other sortOrder');
    });

    it("returns NOT_FOUND for another workspace's agent, and lists nothing of it", async () => {
      assertError(await api.request('GET', path(foreign.agentId), { token: ws.token }), 404, Code.NOT_FOUND, `agent ${foreign.agentId} not found`);
      assertError(await api.request('GET', path(missingId('agent')), { token: ws.token }), 404, Code.NOT_FOUND, `agent ${missingId('agent')} not found`);
      assert.deepEqual(idsOf(await api.request('GET', path(foreign.agentId, foreign.workspaceId), { token: foreign.token })), [foreignFailed.id]);
    });

    it('returns INVALID_ARGUMENT for a malformed agent id', async () => {
      assertError(await api.request('GET', path('not-an-id'), { token: ws.token }), 400, Code.INVALID_ARGUMENT, /^agentId: has an invalid format/);
    });

    it('needs objectives:read', async () => {
      assert.equal((await list('', await ws.keyWith(['objectives:read']))).status, 200);
      assertError(await list('', await ws.keyWith(['agents:manage'])), 403, Code.PERMISSION_DENIED, 'this credential lacks the objectives:read scope');
      assertError(await api.request('GET', path()), 401, Code.UNAUTHENTICATED, 'missing bearer token (Authorization: Bearer <token>)');
    });
  });

  describe('POST /v1/workspaces/{ws}/agents/{agentId}/webhook_deliveries/{id}/retry', () => {
    it('needs objectives:manage; objectives:read is not enough', async () => {
      assertError(await retry(rows.a2.id, agentId, await ws.keyWith(['objectives:read'])), 403, Code.PERMISSION_DENIED, 'this credential lacks the objectives:manage scope');
    });

    it("returns NOT_FOUND for an unknown delivery, another agent's, and another workspace's", async () => {
      const unknown = missingId('whdel');
      assertError(await retry(unknown), 404, Code.NOT_FOUND, `webhook delivery ${unknown} not found`);
      assertError(await retry(bareFailed.id), 404, Code.NOT_FOUND, `webhook delivery ${bareFailed.id} not found`);
      assertError(await retry(foreignFailed.id, foreign.agentId), 404, Code.NOT_FOUND, `agent ${foreign.agentId} not found`);
      assertError(await retry('whdel_nope'), 400, Code.INVALID_ARGUMENT, /^id: has an invalid format/);
    });

    it('returns FAILED_PRECONDITION for a PENDING or COMPLETED delivery, naming its status', async () => {
      for (const row of [rows.a3, rows.a1]) {
        assertError(await retry(row.id), 400, Code.FAILED_PRECONDITION,
          `webhook delivery ${row.id} is ${row.status}; only FAILED and DISABLED deliveries can be retried`);
      }
    });

    it('returns FAILED_PRECONDITION when the agent has no webhookEventsUrl', async () => {
      assertError(await retry(bareFailed.id, bareAgentId), 400, Code.FAILED_PRECONDITION, `agent ${bareAgentId} has no webhookEventsUrl to deliver to`);
    });

    it('answers UNAVAILABLE on a node without an actor runtime', async () => {
      assertError(await retry(rows.a2.id), 503, 14, 'this node runs no actor runtime');
    });

    it("asks the endpoint actor of the agent's current URL to re-queue a FAILED or DISABLED delivery", async () => {
      const calls: Array<{ kind: string; id: string; message: Json; options: Json }> = [];
      const commands = new RuntimeWebhookEndpointCommands();
      commands.bind({
        ask: async <Reply>(kind: string, id: string, message: unknown, options?: unknown) => {
          calls.push({ kind, id, message, options });
          const { delivery, webhookUrl } = message as { delivery: WebhookDeliveryRecord; webhookUrl: string };
          const requeued: WebhookDeliveryRecord = {
            ...delivery, webhookUrl, endpointId: id, status: 'WEBHOOK_DELIVERY_STATUS_PENDING', errorMessage: null, revision: delivery.revision + 1,
          };
          return requeued as Reply;
        },
      });
      // The retry route alone over a service holding the double (authentication and scopes are the mount's, tested above).
      const service = new WebhookDeliveryService(createAgentsStore(api.dataSource), api.services.webhookDeliveriesStore, commands);
      const route = webhookDeliveryRoutes({ webhookDeliveries: service, agents: api.services.agents }).find((candidate) => candidate.operationId === 'retryWebhookDelivery')!;
      const workspace: WorkspaceRef = { id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' };
      for (const [row, sequence] of [[rows.a2, 2], [rows.a4, 4]] as const) {
        const answer = (await route.handler({
          params: { workspaceId: ws.workspaceId, agentId, id: row.id }, query: {}, body: {}, principal: undefined as unknown as Principal,
          workspace, headers: {}, requestId: 'test', koa: undefined as unknown as Koa.Context,
        })) as Json;
        const call = calls.at(-1)!;
        assert.equal(call.kind, WEBHOOK_ENDPOINT_KIND);
        assert.equal(call.id, webhookEndpointIdOf(agentId, CURRENT_URL), 'the endpoint of the URL now, not of the delivery');
        // The body is the stored envelope (jsonb orders nested keys its own way; the content is the event's).
        assert.deepEqual({ ...call.message, body: JSON.parse(call.message.body) }, { type: 'retry', delivery: row, webhookUrl: CURRENT_URL, body: objectiveA.envelopes[sequence - 1] });
        assert.deepEqual(call.options, { commandId: `retry:${row.id}:${row.revision}` });
        assert.equal(answer.metadata.id, row.id);
        assert.equal(answer.data.status, 'WEBHOOK_DELIVERY_STATUS_PENDING');
        assert.equal(answer.data.webhookUrl, CURRENT_URL);
        assert.equal(answer.data.errorMessage, undefined);
      }
      assert.equal(calls.length, 2);
    });
  });
});
