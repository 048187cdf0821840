import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createTool, createToolSet, createVariation, created, describeGuards, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';
import type { Principal } from '../../src/auth/principal';

const HTTP_SPEC = {
  description: 'Looks up a customer',
  inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  requiresApproval: true,
  http: {
    url: 'https://api.example.com/customers?key={{secrets.CRM_KEY}}',
    method: 'GET',
    headers: { Authorization: 'Bearer {{secrets.CRM_TOKEN}}', 'X-Team': 'care' },
    timeoutMs: 5000,
  },
};

describe('tools', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());
  beforeEach(async () => (ws = await workspaceFixture(api)));

  const toolsPath = () => `/v1/workspaces/${ws.workspaceId}/tools`;
  const post = (spec: Record<string, unknown>, name = 'lookup') => api.request('POST', toolsPath(), { token: ws.token, body: { metadata: { name }, spec } });
  const workspaceRef = () => ({ id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });

  describe('POST /v1/workspaces/{workspaceId}/tools', () => {
    it('creates an HTTP tool with every field and the model-visible name', async () => {
      const response = await post(HTTP_SPEC, 'crm.lookup customer');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.match(response.body.metadata.id, /^tool_[0-9A-Z]{26}$/);
      assert.deepEqual(response.body.spec, HTTP_SPEC);
      assert.equal(response.body.info.modelToolName, 'crm_lookup_customer');
      assert.deepEqual(response.body.info.toolSets, []);
      assert.equal(response.body.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('defaults timeoutMs to 30000 and requiresApproval to false', async () => {
      const response = await post({ http: { url: 'https://api.example.com/x', method: 'POST' } });
      assert.deepEqual(response.body.spec, { requiresApproval: false, http: { url: 'https://api.example.com/x', method: 'POST', timeoutMs: 30000 } });
    });

    it('creates an MCP tool', async () => {
      const response = await post({ mcp: { serverUrl: 'https://mcp.example.com/mcp', toolName: 'search' } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec, { requiresApproval: false, mcp: { serverUrl: 'https://mcp.example.com/mcp', toolName: 'search' } });
    });

    it('returns INVALID_ARGUMENT unless exactly one kind is set', async () => {
      assertError(await post({ description: 'none' }), 400, 3, 'spec: exactly one of spec.http and spec.mcp must be set');
      assertError(await post({ http: HTTP_SPEC.http, mcp: { serverUrl: 'https://mcp.example.com/mcp', toolName: 'x' } }), 400, 3, 'spec: exactly one of spec.http and spec.mcp must be set');
    });

    it('returns INVALID_ARGUMENT for an inputSchema that is not a valid object JSON Schema', async () => {
      assertError(await post({ ...HTTP_SPEC, inputSchema: { type: 'object', properties: 3 } }), 400, 3, /^spec\.inputSchema: is not a valid JSON Schema: schema is invalid: data\/properties must be object/);
      assertError(await post({ ...HTTP_SPEC, inputSchema: { type: 'array' } }), 400, 3, 'spec.inputSchema: must be a JSON Schema with "type": "object"');
    });

    it('validates header names, reserved headers, line breaks and templates', async () => {
      const withHeaders = (headers: Record<string, string>) => post({ http: { url: 'https://api.example.com/', method: 'POST', headers } });
      assertError(await withHeaders({ 'bad header': 'x' }), 400, 3, 'spec.http.headers.bad header: is not a valid HTTP header name');
      assertError(await withHeaders({ Host: 'evil.example.com' }), 400, 3, 'spec.http.headers.Host: is set by the HTTP client and cannot be configured');
      assertError(await withHeaders({ 'X-A': 'a\r\nX-B: b' }), 400, 3, 'spec.http.headers.X-A: must not contain line breaks or NUL');
      assertError(await withHeaders({ 'X-A': '{{env.HOME}}' }), 400, 3, 'spec.http.headers.X-A: may only contain {{secrets.NAME}} placeholders');
    });

    it('refuses {{secrets.NAME}} in the URL host and unknown templates in the URL', async () => {
      const withUrl = (url: string) => post({ http: { url, method: 'GET' } });
      assertError(await withUrl('https://{{secrets.HOST}}/x'), 400, 3, 'spec.http.url: may hold {{secrets.NAME}} only in its path and query, not in its scheme or host');
      assertError(await withUrl('https://api.example.com/{{user.id}}'), 400, 3, 'spec.http.url: may only contain {{secrets.NAME}} placeholders');
      assert.equal((await withUrl('https://api.example.com/{{secrets.PATH}}/x')).status, 200);
    });

    it('refuses private, loopback and link-local URLs (the private network is not allowed here)', async () => {
      for (const [spec, field, host] of [
        [{ http: { url: 'http://127.0.0.1:9000/x', method: 'GET' } }, 'spec.http.url', '127.0.0.1'],
        [{ http: { url: 'http://169.254.10.1/latest/meta-data', method: 'GET' } }, 'spec.http.url', '169.254.10.1'],
        [{ http: { url: 'http://localhost/x', method: 'GET' } }, 'spec.http.url', 'localhost'],
        [{ mcp: { serverUrl: 'http://10.0.0.5/mcp', toolName: 'x' } }, 'spec.mcp.serverUrl', '10.0.0.5'],
      ] as const) {
        assertError(await post(spec), 400, 3, `${field}: ${host} is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses`);
      }
      assertError(await post({ http: { url: 'ftp://api.example.com/x', method: 'GET' } }), 400, 3, 'spec.http.url: must be an absolute http or https URL');
    });

    it('checks method and timeoutMs ranges', async () => {
      assertError(await post({ http: { url: 'https://api.example.com/', method: 'TRACE' } }), 400, 3, /^spec\.http\.method: /);
      assertError(await post({ http: { url: 'https://api.example.com/', method: 'GET', timeoutMs: 0 } }), 400, 3, 'spec.http.timeoutMs: must be >= 1');
      assertError(await post({ http: { url: 'https://api.example.com/', method: 'GET', timeoutMs: 300001 } }), 400, 3, 'spec.http.timeoutMs: must be <= 300000');
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/tools', () => {
    it('lists tools, with tool sets in info only with includeInfo', async () => {
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}/tools`, { toolId: tool.metadata.id });
      const plain = await api.request('GET', toolsPath(), { token: ws.token });
      assert.equal(plain.body.items.length, 1);
      assert.equal(plain.body.items[0].info, undefined);
      const withInfo = await api.request('GET', `${toolsPath()}?includeInfo=true`, { token: ws.token });
      assert.deepEqual(withInfo.body.items[0].info.toolSets, [{ id: set.metadata.id, name: 'crm' }]);
    });
  });

  describe('PATCH /v1/workspaces/{workspaceId}/tools/{id}', () => {
    it('merges present fields and keeps the kind', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const response = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { description: 'new', requiresApproval: false } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec, { ...HTTP_SPEC, description: 'new', requiresApproval: false });
    });

    it('merges a partial spec.http without a mask, keeping method, headers and timeout', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const response = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { http: { url: 'https://api.example.com/v2/customers' } } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec.http, { ...HTTP_SPEC.http, url: 'https://api.example.com/v2/customers' });
    });

    it('applies mask paths inside spec.http, and requires a whole kind when the mask names spec.http', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const path = `${toolsPath()}/${tool.metadata.id}`;
      const leaves = await api.request('PATCH', path, { token: ws.token, body: { updateMask: 'spec.http.method,spec.http.timeoutMs', spec: { http: { method: 'POST', url: 'https://ignored.example.com/' } } } });
      assert.equal(leaves.status, 200, JSON.stringify(leaves.body));
      assert.deepEqual(leaves.body.spec.http, { ...HTTP_SPEC.http, method: 'POST', timeoutMs: 30000 });
      const partialWhole = await api.request('PATCH', path, { token: ws.token, body: { updateMask: 'spec.http', spec: { http: { url: 'https://api.example.com/x' } } } });
      assertError(partialWhole, 400, 3, 'spec.http.method: is required');
      const mcpLeaf = await api.request('PATCH', path, { token: ws.token, body: { updateMask: 'spec.mcp.toolName,spec.http', spec: { mcp: { toolName: 'x' } } } });
      assertError(mcpLeaf, 400, 3, 'spec.mcp.serverUrl: is required');
    });

    it('switches kind when the mask names both kinds, and refuses two kinds', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const mcp = { serverUrl: 'https://mcp.example.com/mcp', toolName: 'lookup' };
      const both = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { mcp } } });
      assertError(both, 400, 3, 'spec: exactly one of spec.http and spec.mcp must be set');
      const switched = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { mcp }, updateMask: 'spec.http,spec.mcp' } });
      assert.equal(switched.status, 200, JSON.stringify(switched.body));
      assert.deepEqual(switched.body.spec.mcp, mcp);
      assert.equal(switched.body.spec.http, undefined);
    });

    it('returns INVALID_ARGUMENT when the mask names metadata.name without one, and changes nothing', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const response = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { description: 'new' }, updateMask: 'metadata.name,spec.description' } });
      assertError(response, 400, 3, 'metadata.name: is required when the update names it');
      assert.deepEqual((await api.request('GET', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token })).body, tool);
    });

    it('validates the URL policy on update and honours If-Match', async () => {
      const tool = (await post(HTTP_SPEC)).body;
      const bad = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { http: { url: 'http://192.168.0.1/', method: 'GET' } } } });
      assertError(bad, 400, 3, 'spec.http.url: 192.168.0.1 is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses');
      const stale = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { metadata: { name: 'x' } }, headers: { 'if-match': '2000-01-01T00:00:00Z' } });
      assertError(stale, 409, 10, /^the resource was modified/);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/tools/{id}', () => {
    it('deletes the tool and removes it from tool sets and variations', async () => {
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}/tools`, { toolId: tool.metadata.id });
      const agent = await createAgent(api, ws.token, ws.workspaceId);
      const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id);
      await created(api, ws.token, `/v1/agent_variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
      const response = await api.request('DELETE', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token });
      assert.deepEqual([response.status, response.body], [200, {}]);
      assertError(await api.request('GET', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token }), 404, 5, `tool ${tool.metadata.id} not found`);
      const setAfter = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}`, { token: ws.token });
      assert.equal(setAfter.body.info.toolCount, 0);
      const variationAfter = await api.request('GET', `/v1/agent_variations/${variation.metadata.id}`.replace('/v1/agent_variations/', `/v1/agents/${agent.metadata.id}/variations/`), { token: ws.token });
      assert.equal(variationAfter.body.info.toolCount, 0);
    });
  });

  describe('tools of a managed tool set', () => {
    const user = (): Principal => ({ kind: 'USER', accountId: ws.account.accountId, profileId: ws.account.profileId, scopes: ['*'], admin: true, global: false, memberWorkspaceIds: [ws.workspaceId] });

    it('refuses changes by a USER principal and allows API keys', async () => {
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const set = await createToolSet(api, ws.token, ws.workspaceId, { spec: { managed: true } });
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}/tools`, { toolId: tool.metadata.id });
      const message = `tool ${tool.metadata.id} (in a managed tool set) is managed: only API key principals can change it`;
      await assert.rejects(api.services.tools.update(user(), workspaceRef(), tool.metadata.id, { spec: { description: 'x' } }), { name: 'PermissionDeniedError', code: 'PERMISSION_DENIED', message });
      await assert.rejects(api.services.tools.delete(user(), workspaceRef(), tool.metadata.id), { code: 'PERMISSION_DENIED', message });
      const byKey = await api.request('PATCH', `${toolsPath()}/${tool.metadata.id}`, { token: ws.token, body: { spec: { description: 'x' } } });
      assert.equal(byKey.status, 200);
    });

    it('lets a USER principal change a tool outside managed sets', async () => {
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const updated = await api.services.tools.update(user(), workspaceRef(), tool.metadata.id, { spec: { description: 'by user' } });
      assert.equal(updated.spec.description, 'by user');
    });
  });

  const routes: GuardedRoute[] = [
    { method: 'GET', path: (w) => `/v1/workspaces/${w}/tools`, scope: 'tools:read', idKeys: [] },
    { method: 'POST', path: (w) => `/v1/workspaces/${w}/tools`, scope: 'tools:manage', body: { metadata: { name: 'x' }, spec: { http: { url: 'https://a.example.com', method: 'GET' } } }, idKeys: [] },
    { method: 'GET', path: (w, ids) => `/v1/workspaces/${w}/tools/${ids.id}`, scope: 'tools:read', idKeys: ['id'] },
    { method: 'PATCH', path: (w, ids) => `/v1/workspaces/${w}/tools/${ids.id}`, scope: 'tools:manage', body: { spec: { description: 'x' } }, idKeys: ['id'] },
    { method: 'DELETE', path: (w, ids) => `/v1/workspaces/${w}/tools/${ids.id}`, scope: 'tools:manage', idKeys: ['id'] },
  ];
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const mine = await createTool(api, fixture.token, fixture.workspaceId);
    const theirs = await createTool(api, other.token, other.workspaceId);
    return { ws: fixture, ids: { id: mine.metadata.id }, foreignIds: { id: theirs.metadata.id } };
  }, routes);
});
