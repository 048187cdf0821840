import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createVariation, describeGuards, MODEL_ID, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';

const MISSING_AGENT = 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('agents', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  before(async () => (api = await startTestApi({ runtime: true })));
  after(async () => api.close());
  beforeEach(async () => (ws = await workspaceFixture(api)));

  const agentsPath = () => `/v1/workspaces/${ws.workspaceId}/agents`;

  describe('POST /v1/workspaces/{workspaceId}/agents', () => {
    it('creates an agent with every spec field and info', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, {
        metadata: { name: 'support-bot', externalId: 'ext-1', labels: { team: 'care' } },
        spec: {
          status: 'AGENT_STATUS_PUBLISHED',
          variationSelectionMode: 'VARIATION_SELECTION_MODE_WEIGHTED',
          description: 'answers tickets',
          inputDataSchema: { type: 'object', properties: { ticketId: { type: 'string' } }, required: ['ticketId'] },
          outputDefinition: { type: 'object', properties: { answer: { type: 'string' } } },
          webhookEventsUrl: 'https://hooks.example.com/agentrt',
        },
      });
      assert.match(agent.metadata.id, /^agent_[0-9A-Z]{26}$/);
      assert.equal(agent.metadata.workspaceId, ws.workspaceId);
      assert.equal(agent.metadata.accountId, ws.account.accountId);
      assert.equal(agent.metadata.externalId, 'ext-1');
      assert.deepEqual(agent.metadata.labels, { team: 'care' });
      assert.equal(agent.metadata.createdAt, agent.metadata.updatedAt);
      assert.deepEqual(agent.spec, {
        status: 'AGENT_STATUS_PUBLISHED',
        variationSelectionMode: 'VARIATION_SELECTION_MODE_WEIGHTED',
        description: 'answers tickets',
        inputDataSchema: { type: 'object', properties: { ticketId: { type: 'string' } }, required: ['ticketId'] },
        outputDefinition: { type: 'object', properties: { answer: { type: 'string' } } },
        webhookEventsUrl: 'https://hooks.example.com/agentrt',
      });
      assert.equal(agent.info.variationCount, 0);
      assert.equal(agent.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('defaults status to DRAFT and the selection mode to UNSPECIFIED', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      assert.deepEqual(agent.spec, { status: 'AGENT_STATUS_DRAFT', variationSelectionMode: 'VARIATION_SELECTION_MODE_UNSPECIFIED' });
    });

    it('stores AGENT_STATUS_UNSPECIFIED as DRAFT', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'a' }, spec: { status: 'AGENT_STATUS_UNSPECIFIED' } });
      assert.equal(agent.spec.status, 'AGENT_STATUS_DRAFT');
    });

    it('returns INVALID_ARGUMENT for an inputDataSchema that is not valid JSON Schema', async () => {
      const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { inputDataSchema: { type: 'object', properties: { x: { type: 'strin' } } } } } });
      assertError(response, 400, 3, /^spec\.inputDataSchema: is not a valid JSON Schema: schema is invalid: data\/properties\/x\/type must be equal to one of the allowed values/);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'spec.inputDataSchema');
    });

    it('returns INVALID_ARGUMENT for an inputDataSchema that is not an object schema', async () => {
      const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { inputDataSchema: { type: 'string' } } } });
      assertError(response, 400, 3, 'spec.inputDataSchema: must be a JSON Schema with "type": "object"');
    });

    it('returns INVALID_ARGUMENT for an outputDefinition with an unresolvable $ref', async () => {
      const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { outputDefinition: { $ref: '#/definitions/missing' } } } });
      assertError(response, 400, 3, /^spec\.outputDefinition: is not a valid JSON Schema: can't resolve reference #\/definitions\/missing/);
    });

    it('returns INVALID_ARGUMENT for a relative or non-http webhookEventsUrl', async () => {
      for (const url of ['/hooks', 'ftp://example.com/hooks', 'not a url']) {
        const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { webhookEventsUrl: url } } });
        assertError(response, 400, 3, 'spec.webhookEventsUrl: must be an absolute http or https URL');
      }
    });

    it('returns INVALID_ARGUMENT naming AGENTRT_ALLOW_PRIVATE_NETWORK for a private or loopback webhookEventsUrl, and refuses credentials and metadata endpoints', async () => {
      const refused = (host: string) =>
        `spec.webhookEventsUrl: ${host} is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses`;
      const cases: Array<[string, string]> = [
        ['http://127.0.0.1:9/hooks', refused('127.0.0.1')],
        ['http://localhost:8080/hooks', refused('localhost')],
        ['https://10.1.2.3/hooks', refused('10.1.2.3')],
        ['http://[::ffff:192.168.1.5]/hooks', refused('[::ffff:c0a8:105]')],
        ['http://169.254.169.254/latest', 'spec.webhookEventsUrl: 169.254.169.254 is a cloud metadata endpoint, which is never allowed'],
        [
          'https://user:pa55@hooks.example.com/in',
          'spec.webhookEventsUrl: must not carry credentials; deliveries are signed (webhook-signature); put any token of your own in the path or query',
        ],
      ];
      for (const [url, message] of cases) {
        const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { webhookEventsUrl: url } } });
        assertError(response, 400, 3, message);
        assert.ok(!JSON.stringify(response.body).includes('pa55'), 'the password is not echoed');
      }
    });

    it('returns INVALID_ARGUMENT for an unknown status and unknown fields', async () => {
      const status = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { status: 'AGENT_STATUS_LIVE' } } });
      assertError(status, 400, 3, /^spec\.status: /);
      const unknown = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a' }, spec: { owner: 'me' } } });
      assertError(unknown, 400, 3, 'spec.owner: is not a known field');
    });

    it('returns INVALID_ARGUMENT for a bad label', async () => {
      const response = await api.request('POST', agentsPath(), { token: ws.token, body: { metadata: { name: 'a', labels: { 'bad key!': 'x' } } } });
      assertError(response, 400, 3, /^metadata\.labels\.bad key!: /);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/agents', () => {
    it('lists agents with paging, prefix and labels; info only with includeInfo', async () => {
      const first = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'alpha', labels: { tier: 'gold' } } });
      const second = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'beta' } });
      await createVariation(api, ws.token, ws.workspaceId, first.metadata.id);
      const page1 = await api.request('GET', `${agentsPath()}?limit=1`, { token: ws.token });
      assert.equal(page1.status, 200);
      assert.deepEqual(page1.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [first.metadata.id]);
      assert.equal(page1.body.items[0].info, undefined);
      const page2 = await api.request('GET', `${agentsPath()}?limit=1&cursor=${page1.body.pagination.nextCursor}`, { token: ws.token });
      assert.deepEqual(page2.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [second.metadata.id]);
      assert.equal(page2.body.pagination.nextCursor, '');
      const prefixed = await api.request('GET', `${agentsPath()}?prefix=bet`, { token: ws.token });
      assert.deepEqual(prefixed.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['beta']);
      const labelled = await api.request('GET', `${agentsPath()}?labels=tier=gold&includeInfo=true`, { token: ws.token });
      assert.deepEqual(labelled.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['alpha']);
      assert.equal(labelled.body.items[0].info.variationCount, 1);
      const descending = await api.request('GET', `${agentsPath()}?sortOrder=desc`, { token: ws.token });
      assert.equal(descending.body.items[0].metadata.id, second.metadata.id);
    });

    it('refuses a cursor no list could have made (a NUL in its position, a wrong type, too long) naming cursor', async () => {
      const forged = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');
      for (const cursor of [forged({ a: 'agent_\u0000x', s: 'asc' }), forged({ a: 42, s: 'asc' }), forged({ a: 'a'.repeat(513), s: 'asc' }), forged(null)]) {
        assertError(await api.request('GET', `${agentsPath()}?cursor=${cursor}`, { token: ws.token }), 400, 3, /^cursor: is not a cursor returned by this list/);
      }
    });

    it("does not list another workspace's agents", async () => {
      const other = await ws.otherWorkspace();
      await createAgent(api, other.token, other.workspaceId);
      const response = await api.request('GET', agentsPath(), { token: ws.token });
      assert.deepEqual(response.body.items, []);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/agents/{id}', () => {
    it('returns the agent with info.variationCount', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id);
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'v2' } });
      const response = await api.request('GET', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.equal(response.body.info.variationCount, 2);
      assert.equal(response.body.info.createdBy.metadata.id, agent.metadata.profileId);
    });

    it('returns NOT_FOUND for an unknown agent', async () => {
      const response = await api.request('GET', `${agentsPath()}/${MISSING_AGENT}`, { token: ws.token });
      assertError(response, 404, 5, `agent ${MISSING_AGENT} not found`);
    });
  });

  describe('PATCH /v1/workspaces/{workspaceId}/agents/{id}', () => {
    it('merges present fields when no mask is given', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { spec: { description: 'old', webhookEventsUrl: 'https://a.example.com/h' } });
      const response = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body: { spec: { status: 'AGENT_STATUS_ARCHIVED' } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.status, 'AGENT_STATUS_ARCHIVED');
      assert.equal(response.body.spec.description, 'old');
      assert.equal(response.body.spec.webhookEventsUrl, 'https://a.example.com/h');
      assert.notEqual(response.body.metadata.updatedAt, agent.metadata.updatedAt);
    });

    it('clears a field named in updateMask but absent from the body', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { spec: { description: 'old', inputDataSchema: { type: 'object' } } });
      const response = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, {
        token: ws.token,
        body: { metadata: { name: 'renamed' }, updateMask: 'metadata.name,spec.description,spec.inputDataSchema' },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.name, 'renamed');
      assert.equal(response.body.spec.description, undefined);
      assert.equal(response.body.spec.inputDataSchema, undefined);
    });

    it('validates JSON Schemas and URLs on update', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const schema = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body: { spec: { outputDefinition: { type: 42 } } } });
      assertError(schema, 400, 3, /^spec\.outputDefinition: is not a valid JSON Schema: /);
      const url = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body: { spec: { webhookEventsUrl: 'mailto:x@example.com' } } });
      assertError(url, 400, 3, 'spec.webhookEventsUrl: must be an absolute http or https URL');
      const loopback = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body: { spec: { webhookEventsUrl: 'http://127.0.0.1:8080/in' } } });
      assertError(loopback, 400, 3, /^spec\.webhookEventsUrl: 127\.0\.0\.1 is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true/);
      assert.equal((await api.request('GET', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token })).body.spec.webhookEventsUrl, undefined, 'nothing stored');
    });

    it('returns INVALID_ARGUMENT when the mask names metadata.name without one (a name cannot be cleared), and changes nothing', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { spec: { description: 'kept' } });
      for (const body of [{ updateMask: 'metadata.name' }, { metadata: { labels: { a: 'b' } }, spec: { description: 'new' }, updateMask: 'metadata.name,metadata.labels,spec.description' }]) {
        const response = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body });
        assertError(response, 400, 3, 'metadata.name: is required when the update names it');
        assert.equal(response.body.details[0].fieldViolations[0].field, 'metadata.name');
      }
      assert.deepEqual((await api.request('GET', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token })).body, agent);
    });

    it('returns INVALID_ARGUMENT for an unknown updateMask path', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const response = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token, body: { updateMask: 'spec.owner' } });
      assertError(response, 400, 3, /^updateMask: "spec\.owner" is not an updatable field/);
    });

    it('returns ABORTED when If-Match does not match updatedAt', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const stale = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, {
        token: ws.token, body: { spec: { description: 'x' } }, headers: { 'if-match': '2020-01-01T00:00:00.000Z' },
      });
      assertError(stale, 409, 10, /^the resource was modified/);
      const fresh = await api.request('PATCH', `${agentsPath()}/${agent.metadata.id}`, {
        token: ws.token, body: { spec: { description: 'x' } }, headers: { 'if-match': agent.metadata.updatedAt },
      });
      assert.equal(fresh.status, 200);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/agents/{id}', () => {
    it('deletes the agent with its variations', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id);
      const response = await api.request('DELETE', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      assertError(await api.request('GET', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token }), 404, 5, `agent ${agent.metadata.id} not found`);
      const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const };
      await assert.rejects(api.services.variations.find(workspace, undefined, variation.metadata.id), { code: 'NOT_FOUND', message: `agent variation ${variation.metadata.id} not found` });
    });

    it('returns FAILED_PRECONDITION while objectives run, unless force=true', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { modelConfig: { modelId: MODEL_ID } } });
      for (let i = 0; i < 2; i++) {
        const objective = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, {
          token: ws.token, body: { agentId: agent.metadata.id, initialMessage: 'SLEEP 60000\nSAY late' },
        });
        assert.equal(objective.status, 200, JSON.stringify(objective.body));
      }
      const schedules = `${agentsPath()}/${agent.metadata.id}/schedules`;
      const schedule = await api.request('POST', schedules, {
        token: ws.token, body: { metadata: { name: 'yearly' }, spec: { initialMessage: 'SAY hi', schedule: { calendars: [{ month: [{ start: 1 }], dayOfMonth: [{ start: 1 }] }], timezone: 'UTC' } } },
      });
      assert.equal(schedule.status, 200, JSON.stringify(schedule.body));
      const refused = await api.request('DELETE', `${agentsPath()}/${agent.metadata.id}`, { token: ws.token });
      assertError(refused, 400, 9, `agent ${agent.metadata.id} has 2 running objective(s); cancel them or delete with ?force=true`);
      const kept = await api.request('GET', `${schedules}/${schedule.body.metadata.id}`, { token: ws.token });
      assert.equal(kept.body.spec.status, 'AGENT_SCHEDULE_STATUS_ACTIVE', 'a refused DELETE archives no schedule');
      const forced = await api.request('DELETE', `${agentsPath()}/${agent.metadata.id}?force=true`, { token: ws.token });
      assert.equal(forced.status, 200);
      const archived = await api.services.schedulesStore.get(ws.workspaceId, agent.metadata.id, schedule.body.metadata.id);
      assert.equal(archived?.spec.status, 'AGENT_SCHEDULE_STATUS_ARCHIVED', "the agent's schedule is archived with it");
    });

    it('returns INVALID_ARGUMENT for a non-boolean force', async () => {
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const response = await api.request('DELETE', `${agentsPath()}/${agent.metadata.id}?force=maybe`, { token: ws.token });
      assertError(response, 400, 3, 'force: must be of type boolean');
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/agents/{agentId}/feedback', () => {
    it('returns NOT_FOUND for an unknown agent', async () => {
      const response = await api.request('GET', `${agentsPath()}/${MISSING_AGENT}/feedback`, { token: ws.token });
      assertError(response, 404, 5, `agent ${MISSING_AGENT} not found`);
    });
  });

  const routes: GuardedRoute[] = [
    { method: 'GET', path: (w) => `/v1/workspaces/${w}/agents`, scope: 'agents:read', idKeys: [] },
    { method: 'POST', path: (w) => `/v1/workspaces/${w}/agents`, scope: 'agents:manage', body: { metadata: { name: 'x' } }, idKeys: [] },
    { method: 'GET', path: (w, ids) => `/v1/workspaces/${w}/agents/${ids.id}`, scope: 'agents:read', idKeys: ['id'] },
    { method: 'PATCH', path: (w, ids) => `/v1/workspaces/${w}/agents/${ids.id}`, scope: 'agents:manage', body: { spec: { description: 'x' } }, idKeys: ['id'] },
    { method: 'DELETE', path: (w, ids) => `/v1/workspaces/${w}/agents/${ids.id}`, scope: 'agents:manage', idKeys: ['id'] },
    { method: 'GET', path: (w, ids) => `/v1/workspaces/${w}/agents/${ids.agentId}/feedback`, scope: 'agents:read', idKeys: ['agentId'] },
  ];
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const mine = await createAgent(api, fixture.token, fixture.workspaceId);
    const theirs = await createAgent(api, other.token, other.workspaceId);
    return { ws: fixture, ids: { id: mine.metadata.id, agentId: mine.metadata.id }, foreignIds: { id: theirs.metadata.id, agentId: theirs.metadata.id } };
  }, routes);
});
