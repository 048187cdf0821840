import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createTool, createToolSet, created, describeGuards, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import { startTestMcpServer, type TestMcpServer } from '../support/mcp-server';
import { startTestIssuer, type TestIssuer } from '../support/oidc';
import type { WorkspaceFixture } from '../support/workspace-keys';
import type { Principal } from '../../src/auth/principal';
import { SdkMcpClient } from '../../src/tools/mcp-sdk-client';
import { ToolSetService } from '../../src/tools/tool-set.service';
import { createAgentsStore } from '../../persistence/repositories/agents.store';

const SEARCH = { name: 'search', description: 'Searches documents', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };
const FETCH = { name: 'fetch.page', description: 'Fetches a page', inputSchema: { type: 'object', properties: { url: { type: 'string' } } } };

describe('tool sets', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let mcp: TestMcpServer;
  let issuer: TestIssuer;
  before(async () => {
    issuer = await startTestIssuer();
    api = await startTestApi({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_OIDC_ISSUER: issuer.issuer, AGENTRT_OIDC_JWKS_URL: issuer.jwksUrl } });
    mcp = await startTestMcpServer();
  });
  after(async () => {
    await mcp.close();
    await api.close();
    await issuer.close();
  });
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    mcp.tools = [SEARCH, FETCH];
    mcp.pageSize = 100;
  });

  const setsPath = () => `/v1/workspaces/${ws.workspaceId}/tool_sets`;
  const workspaceRef = () => ({ id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });
  const user = (): Principal => ({ kind: 'USER', accountId: ws.account.accountId, profileId: ws.account.profileId, scopes: ['*'], admin: true, global: false, memberWorkspaceIds: [ws.workspaceId] });

  describe('POST, GET, PATCH, DELETE /v1/workspaces/{workspaceId}/tool_sets', () => {
    it('creates, reads, lists, updates and deletes a set', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId, { metadata: { name: 'crm', labels: { a: 'b' } }, spec: { description: 'CRM tools' } });
      assert.match(set.metadata.id, /^toolset_[0-9A-Z]{26}$/);
      assert.deepEqual(set.spec, { description: 'CRM tools', managed: false });
      assert.deepEqual([set.info.toolCount, set.info.tools], [0, []]);
      const listed = await api.request('GET', `${setsPath()}?labels=a=b`, { token: ws.token });
      assert.deepEqual(listed.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [set.metadata.id]);
      assert.equal(listed.body.items[0].info, undefined);
      const patched = await api.request('PATCH', `${setsPath()}/${set.metadata.id}`, { token: ws.token, body: { spec: { managed: true } } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual(patched.body.spec, { description: 'CRM tools', managed: true });
      const deleted = await api.request('DELETE', `${setsPath()}/${set.metadata.id}`, { token: ws.token });
      assert.deepEqual([deleted.status, deleted.body], [200, {}]);
      assertError(await api.request('GET', `${setsPath()}/${set.metadata.id}`, { token: ws.token }), 404, 5, `tool set ${set.metadata.id} not found`);
    });

    it('returns INVALID_ARGUMENT for a non-http mcpServerUrl', async () => {
      const response = await api.request('POST', setsPath(), { token: ws.token, body: { metadata: { name: 'x' }, spec: { mcpServerUrl: 'ws://mcp.example.com' } } });
      assertError(response, 400, 3, 'spec.mcpServerUrl: must be an absolute http or https URL');
    });

    it('returns ABORTED for a stale If-Match', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      const response = await api.request('PATCH', `${setsPath()}/${set.metadata.id}`, { token: ws.token, body: { spec: { description: 'x' } }, headers: { 'if-match': '1999-01-01T00:00:00Z' } });
      assertError(response, 409, 10, /^the resource was modified/);
    });
  });

  describe('POST/DELETE .../tool_sets/{id}/tools', () => {
    it('adds and removes tools', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const added = await created(api, ws.token, `${setsPath()}/${set.metadata.id}/tools`, { toolId: tool.metadata.id });
      assert.deepEqual(added.info.tools, [{ id: tool.metadata.id, name: 'lookup' }]);
      assert.equal(added.info.toolCount, 1);
      const again = await api.request('POST', `${setsPath()}/${set.metadata.id}/tools`, { token: ws.token, body: { toolId: tool.metadata.id } });
      assertError(again, 409, 6, `tool ${tool.metadata.id} is already in tool set ${set.metadata.id}`);
      const removed = await api.request('DELETE', `${setsPath()}/${set.metadata.id}/tools/${tool.metadata.id}`, { token: ws.token });
      assert.deepEqual([removed.status, removed.body], [200, {}]);
      const missing = await api.request('DELETE', `${setsPath()}/${set.metadata.id}/tools/${tool.metadata.id}`, { token: ws.token });
      assertError(missing, 404, 5, `tool ${tool.metadata.id} in tool set ${set.metadata.id} not found`);
    });

    it('replays the first answer for a repeat with the same Idempotency-Key', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const add = () => api.request('POST', `${setsPath()}/${set.metadata.id}/tools`, { token: ws.token, body: { toolId: tool.metadata.id }, headers: { 'Idempotency-Key': 'add-lookup' } });
      const first = await add();
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const repeat = await add();
      assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
      assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(repeat.body.info.tools, [{ id: tool.metadata.id, name: 'lookup' }]);
    });

    it("returns NOT_FOUND for another workspace's tool", async () => {
      const other = await ws.otherWorkspace();
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      const foreign = await createTool(api, other.token, other.workspaceId);
      const response = await api.request('POST', `${setsPath()}/${set.metadata.id}/tools`, { token: ws.token, body: { toolId: foreign.metadata.id } });
      assertError(response, 404, 5, `tool ${foreign.metadata.id} not found`);
    });
  });

  describe('managed tool sets', () => {
    it('refuses every change by a USER principal with PERMISSION_DENIED', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId, { spec: { managed: true } });
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const message = `tool set ${set.metadata.id} is managed: only API key principals can change it`;
      const denied = { name: 'PermissionDeniedError', code: 'PERMISSION_DENIED', message };
      await assert.rejects(api.services.toolSets.addTool(user(), workspaceRef(), set.metadata.id, tool.metadata.id), denied);
      await assert.rejects(api.services.toolSets.removeTool(user(), workspaceRef(), set.metadata.id, tool.metadata.id), denied);
      await assert.rejects(api.services.toolSets.update(user(), workspaceRef(), set.metadata.id, { spec: { managed: false } }), denied);
      await assert.rejects(api.services.toolSets.delete(user(), workspaceRef(), set.metadata.id), denied);
      await assert.rejects(api.services.toolSets.sync(user(), workspaceRef(), set.metadata.id), denied);
    });

    it('answers a signed-in user (OIDC) with PERMISSION_DENIED over HTTP', async () => {
      const profile = await api.services.store.profiles.findById(ws.account.profileId);
      const userToken = await issuer.token(profile!.email!);
      const set = await createToolSet(api, ws.token, ws.workspaceId, { spec: { managed: true } });
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const response = await api.request('POST', `${setsPath()}/${set.metadata.id}/tools`, { token: userToken, body: { toolId: tool.metadata.id } });
      assertError(response, 403, 7, `tool set ${set.metadata.id} is managed: only API key principals can change it`);
      const read = await api.request('GET', `${setsPath()}/${set.metadata.id}`, { token: userToken });
      assert.equal(read.status, 200, JSON.stringify(read.body));
    });

    it('refuses a USER principal making a set managed', async () => {
      await assert.rejects(api.services.toolSets.create(user(), workspaceRef(), { metadata: { name: 'm' }, spec: { managed: true } }), {
        code: 'PERMISSION_DENIED', message: 'a tool set created with spec.managed is managed: only API key principals can change it',
      });
      const set = await api.services.toolSets.create(user(), workspaceRef(), { metadata: { name: 'plain' } });
      await assert.rejects(api.services.toolSets.update(user(), workspaceRef(), set.metadata.id, { spec: { managed: true } }), {
        code: 'PERMISSION_DENIED', message: `tool set ${set.metadata.id} is managed: only API key principals can change it`,
      });
    });

    it('lets a USER principal change an unmanaged set and an API key change a managed one', async () => {
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const plain = await createToolSet(api, ws.token, ws.workspaceId);
      const byUser = await api.services.toolSets.addTool(user(), workspaceRef(), plain.metadata.id, tool.metadata.id);
      assert.equal(byUser.info?.toolCount, 1);
      const managed = await createToolSet(api, ws.token, ws.workspaceId, { metadata: { name: 'm' }, spec: { managed: true } });
      const byKey = await api.request('POST', `${setsPath()}/${managed.metadata.id}/tools`, { token: ws.token, body: { toolId: tool.metadata.id } });
      assert.equal(byKey.status, 200, JSON.stringify(byKey.body));
    });
  });

  describe('POST .../tool_sets/{id}/sync', () => {
    const sync = (id: string) => api.request('POST', `${setsPath()}/${id}/sync`, { token: ws.token });
    const mirror = () => createToolSet(api, ws.token, ws.workspaceId, { metadata: { name: 'docs' }, spec: { mcpServerUrl: mcp.url } });

    it("creates the server's tools as MCP tools of the set", async () => {
      const set = await mirror();
      const response = await sync(set.metadata.id);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.created.map((tool: { name: string }) => tool.name), ['search', 'fetch.page']);
      assert.deepEqual([response.body.updated, response.body.deleted], [[], []]);
      assert.equal(response.body.toolSet.info.toolCount, 2);
      assert.ok(response.body.toolSet.info.lastSyncedAt);
      const tool = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tools/${response.body.created[1].id}`, { token: ws.token });
      assert.deepEqual(tool.body.spec, { description: 'Fetches a page', inputSchema: FETCH.inputSchema, requiresApproval: false, mcp: { serverUrl: mcp.url, toolName: 'fetch.page' } });
      assert.equal(tool.body.info.modelToolName, 'fetch_page');
      assert.equal(tool.body.info.sourceToolSetId, set.metadata.id);
    });

    it('updates changed tools, deletes vanished ones and plans nothing on a repeat', async () => {
      const set = await mirror();
      const first = (await sync(set.metadata.id)).body;
      mcp.tools = [{ ...SEARCH, description: 'Searches everything' }, { name: 'summarize', inputSchema: { type: 'object' } }];
      const second = await sync(set.metadata.id);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.deepEqual(second.body.created.map((tool: { name: string }) => tool.name), ['summarize']);
      assert.deepEqual(second.body.updated, [first.created[0]]);
      assert.deepEqual(second.body.deleted, [first.created[1]]);
      assertError(await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tools/${first.created[1].id}`, { token: ws.token }), 404, 5, `tool ${first.created[1].id} not found`);
      const third = await sync(set.metadata.id);
      assert.deepEqual([third.body.created, third.body.updated, third.body.deleted], [[], [], []]);
      assert.deepEqual(third.body.toolSet.info.tools.map((tool: { name: string }) => tool.name).sort(), ['search', 'summarize']);
    });

    it('reads every page of the server tool list', async () => {
      mcp.pageSize = 1;
      mcp.tools = [SEARCH, FETCH, { name: 'third', inputSchema: { type: 'object' } }];
      const set = await mirror();
      const response = await sync(set.metadata.id);
      assert.equal(response.body.created.length, 3);
    });

    it('deletes the synced tools with the set', async () => {
      const set = await mirror();
      const synced = (await sync(set.metadata.id)).body;
      await api.request('DELETE', `${setsPath()}/${set.metadata.id}`, { token: ws.token });
      assertError(await api.request('GET', `/v1/workspaces/${ws.workspaceId}/tools/${synced.created[0].id}`, { token: ws.token }), 404, 5, `tool ${synced.created[0].id} not found`);
    });

    it('returns FAILED_PRECONDITION for a set without mcpServerUrl', async () => {
      const set = await createToolSet(api, ws.token, ws.workspaceId);
      assertError(await sync(set.metadata.id), 400, 9, `tool set ${set.metadata.id} has no spec.mcpServerUrl to sync from`);
    });

    it('returns FAILED_PRECONDITION when the server lists an unusable inputSchema', async () => {
      mcp.tools = [{ name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } }];
      const set = await mirror();
      assertError(await sync(set.metadata.id), 400, 9, /^MCP server .* lists tool "broken" with an unusable inputSchema: is not a valid JSON Schema/);
    });

    it('returns UNAVAILABLE when the server cannot be reached', async () => {
      const gone = await startTestMcpServer();
      await gone.close();
      const set = await createToolSet(api, ws.token, ws.workspaceId, { spec: { mcpServerUrl: gone.url } });
      assertError(await sync(set.metadata.id), 503, 14, new RegExp(`^could not list the tools of MCP server ${gone.url.replace(/[.]/g, '\\.')}: `));
    });
  });

  describe('without AGENTRT_ALLOW_PRIVATE_NETWORK', () => {
    it('refuses to connect to a name that resolves to loopback', async () => {
      const client = new SdkMcpClient({ allowPrivateNetwork: false });
      await assert.rejects(client.listTools(mcp.url.replace('127.0.0.1', 'localhost')), (error: Error & { code?: string }) => {
        assert.equal(error.name, 'PermissionDeniedError');
        assert.match(error.message, /^refused to connect to localhost \((127\.0\.0\.1|::1)\), a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses$/);
        return true;
      });
    });

    it('refuses a loopback mcpServerUrl', async () => {
      const policy = { allowPrivateNetwork: false };
      const strict = new ToolSetService(createAgentsStore(api.dataSource), api.services.store, api.services.tools, new SdkMcpClient(policy), policy);
      const keyPrincipal: Principal = { kind: 'API_KEY', accountId: ws.account.accountId, profileId: ws.account.profileId, scopes: ['*'], admin: false, global: false, workspaceId: ws.workspaceId };
      await assert.rejects(strict.create(keyPrincipal, workspaceRef(), { metadata: { name: 'x' }, spec: { mcpServerUrl: mcp.url } }), {
        code: 'INVALID_ARGUMENT', message: 'spec.mcpServerUrl: 127.0.0.1 is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses',
      });
    });
  });

  const routes: GuardedRoute[] = [
    { method: 'GET', path: (w) => `/v1/workspaces/${w}/tool_sets`, scope: 'tools:read', idKeys: [] },
    { method: 'POST', path: (w) => `/v1/workspaces/${w}/tool_sets`, scope: 'tools:manage', body: { metadata: { name: 'x' } }, idKeys: [] },
    { method: 'GET', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}`, scope: 'tools:read', idKeys: ['id'] },
    { method: 'PATCH', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}`, scope: 'tools:manage', body: { spec: { description: 'x' } }, idKeys: ['id'] },
    { method: 'DELETE', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}`, scope: 'tools:manage', idKeys: ['id'] },
    { method: 'POST', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}/tools`, scope: 'tools:manage', body: { toolId: 'tool_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, idKeys: ['id'] },
    { method: 'DELETE', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}/tools/${ids.toolId}`, scope: 'tools:manage', idKeys: ['id', 'toolId'] },
    { method: 'POST', path: (w, ids) => `/v1/workspaces/${w}/tool_sets/${ids.id}/sync`, scope: 'tools:manage', idKeys: ['id'] },
  ];
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const build = async (token: string, workspaceId: string) => {
      const set = await createToolSet(api, token, workspaceId);
      const tool = await createTool(api, token, workspaceId);
      return { id: set.metadata.id, toolId: tool.metadata.id };
    };
    return { ws: fixture, ids: await build(fixture.token, fixture.workspaceId), foreignIds: await build(other.token, other.workspaceId) };
  }, routes);
});
