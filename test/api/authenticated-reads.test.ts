// The authenticated GET by id reads the API key together with the workspace it
// names (one round trip) and the resource together with its info (another).
// These tests pin what that must not change: the key's state and token version
// and the workspace's status act on the very next request, the ladder refuses
// in its order, and reads inside a transaction still see its writes.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';

describe('authenticated reads by id', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());
  beforeEach(async () => (account = await newAccount(api)));

  async function createAgent(workspaceId: string, token = account.globalToken): Promise<string> {
    const response = await api.request('POST', `/v1/workspaces/${workspaceId}/agents`, { token, body: { metadata: { name: 'reader' } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id;
  }

  const getAgent = (workspaceId: string, agentId: string, token: string, headers?: Record<string, string>) =>
    api.request('GET', `/v1/workspaces/${workspaceId}/agents/${agentId}`, { token, headers });

  describe('the key read with the workspace', () => {
    it('refuses a disabled key on the very next GET, and accepts it once enabled again', async () => {
      const agentId = await createAgent(account.workspaceId);
      const key = await newKey(api, account, account.workspaceId, ['agents:read']);
      assert.equal((await getAgent(account.workspaceId, agentId, key.token)).status, 200);
      const headers = { 'x-workspace-id': account.workspaceId };
      assert.equal((await api.request('PUT', `/v1/api_keys/${key.id}/disable`, { token: account.globalToken, headers })).status, 200);
      assertStatus(await getAgent(account.workspaceId, agentId, key.token), 401, Code.UNAUTHENTICATED, /disabled/);
      assert.equal((await api.request('PUT', `/v1/api_keys/${key.id}/enable`, { token: account.globalToken, headers })).status, 200);
      assert.equal((await getAgent(account.workspaceId, agentId, key.token)).status, 200);
    });

    it('refuses the token of a rotated key on the very next GET', async () => {
      const agentId = await createAgent(account.workspaceId);
      const key = await newKey(api, account, account.workspaceId, ['agents:read', 'api_keys:manage']);
      const rotated = await api.request('PUT', `/v1/api_keys/${key.id}/rotate`, { token: key.token });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assertStatus(await getAgent(account.workspaceId, agentId, key.token), 401, Code.UNAUTHENTICATED, /rotated/);
      assert.equal((await getAgent(account.workspaceId, agentId, rotated.body.spec.token)).status, 200);
    });

    it('refuses a deleted key on the very next GET', async () => {
      const agentId = await createAgent(account.workspaceId);
      const key = await newKey(api, account, account.workspaceId, ['agents:read']);
      const deleted = await api.request('DELETE', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assertStatus(await getAgent(account.workspaceId, agentId, key.token), 401, Code.UNAUTHENTICATED, /no longer exists/);
    });

    it('refuses every read in a workspace on the very next request once it is archived', async () => {
      const second = await newWorkspace(api, account, 'archived-next');
      const agentId = await createAgent(second);
      const key = await newKey(api, account, second, ['agents:read', 'api_keys:read']);
      assert.equal((await getAgent(second, agentId, key.token)).status, 200);
      assert.equal((await api.request('DELETE', `/v1/account/workspaces/${second}`, { token: account.globalToken })).status, 200);
      assertStatus(await getAgent(second, agentId, key.token), 403, Code.PERMISSION_DENIED, /archived/);
      assertStatus(await getAgent(second, agentId, account.globalToken), 403, Code.PERMISSION_DENIED, /archived/);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token }), 403, Code.PERMISSION_DENIED, /archived/);
    });

    it("refuses a workspace key on another workspace's path, and another account's workspace as not found", async () => {
      const second = await newWorkspace(api, account, 'elsewhere');
      const agentId = await createAgent(second);
      const key = await newKey(api, account, account.workspaceId, ['agents:read']);
      assertStatus(await getAgent(second, agentId, key.token), 403, Code.PERMISSION_DENIED, /another workspace/);
      const stranger = await newAccount(api);
      assertStatus(await getAgent(second, agentId, stranger.globalToken), 404, Code.NOT_FOUND, /workspace/);
      assertStatus(await getAgent(missingId('ws'), agentId, account.globalToken), 404, Code.NOT_FOUND, /workspace/);
    });

    it('on flat paths, reads the workspace of the key, or of X-Workspace-Id for the global key', async () => {
      const key = await newKey(api, account, account.workspaceId, ['api_keys:read']);
      assert.equal((await api.request('GET', '/v1/api_keys', { token: key.token })).status, 200);
      assert.equal((await api.request('GET', '/v1/api_keys', { token: key.token, headers: { 'x-workspace-id': account.workspaceId } })).status, 200);
      const second = await newWorkspace(api, account, 'flat-other');
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token, headers: { 'x-workspace-id': second } }), 403, Code.PERMISSION_DENIED);
      assert.equal((await api.request('GET', '/v1/api_keys', { token: account.globalToken, headers: { 'x-workspace-id': second } })).status, 200);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: account.globalToken }), 400, Code.INVALID_ARGUMENT, /X-Workspace-Id/);
      const stranger = await newAccount(api);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: stranger.globalToken, headers: { 'x-workspace-id': second } }), 404, Code.NOT_FOUND);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: account.globalToken, headers: { 'x-workspace-id': 'not-a-workspace-id' } }), 404, Code.NOT_FOUND);
    });

    it('authenticates before it validates: a malformed workspace id is UNAUTHENTICATED without a token, INVALID_ARGUMENT with one', async () => {
      const agentId = await createAgent(account.workspaceId);
      assertStatus(await api.request('GET', `/v1/workspaces/nope%00/agents/${agentId}`), 401, Code.UNAUTHENTICATED);
      assertStatus(await getAgent('nope%00', agentId, account.globalToken), 400, Code.INVALID_ARGUMENT);
      assertStatus(await getAgent('ws_not-an-id', agentId, account.globalToken), 400, Code.INVALID_ARGUMENT);
    });

    it('checks the scope before it reads anything of the workspace', async () => {
      const key = await newKey(api, account, account.workspaceId, ['tools:read']);
      assertStatus(await getAgent(missingId('ws'), missingId('agent'), key.token), 403, Code.PERMISSION_DENIED, /agents:read/);
    });
  });

  describe('the resource read with its info', () => {
    it('answers the agent with its creator and variation count, and NOT_FOUND across workspaces', async () => {
      const agentId = await createAgent(account.workspaceId);
      const agent = await getAgent(account.workspaceId, agentId, account.globalToken);
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      assert.equal(agent.body.info.variationCount, 0);
      assert.equal(agent.body.info.createdBy.metadata.id, agent.body.metadata.profileId);
      assert.equal(typeof agent.body.metadata.createdAt, 'string');
      const second = await newWorkspace(api, account, 'not-here');
      assertStatus(await getAgent(second, agentId, account.globalToken), 404, Code.NOT_FOUND, /agent/);
    });

    it('answers an API key with its creator, refusing the system key and keys of other workspaces', async () => {
      const key = await newKey(api, account, account.workspaceId, ['agents:read'], 'described');
      const getKey = (workspaceId: string, id: string) => api.request('GET', `/v1/api_keys/${id}`, { token: account.globalToken, headers: { 'x-workspace-id': workspaceId } });
      const read = await getKey(account.workspaceId, key.id);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.metadata.name, 'described');
      assert.equal(read.body.info.createdBy.metadata.id, read.body.metadata.profileId);
      assert.equal(read.body.spec.token, undefined);
      assertStatus(await getKey(account.workspaceId, account.globalKeyId), 403, Code.PERMISSION_DENIED, /system API key/);
      const second = await newWorkspace(api, account, 'other-keys');
      assertStatus(await getKey(second, key.id), 404, Code.NOT_FOUND, /API key/);
      assertStatus(await getKey(account.workspaceId, missingId('apikey')), 404, Code.NOT_FOUND, /API key/);
    });

    it('sees the writes of the transaction it runs in', async () => {
      const agentId = await createAgent(account.workspaceId);
      const renamed = await api.dataSource.transaction(async (manager) => {
        await manager.query(`UPDATE agents SET name = 'renamed-in-transaction' WHERE id = $1`, [agentId]);
        const ref = { id: account.workspaceId, accountId: account.accountId, name: 'ws', status: 'STATUS_ENABLED' as const };
        return api.services.agents.get(ref, agentId);
      });
      assert.equal(renamed.metadata.name, 'renamed-in-transaction');
    });
  });
});
