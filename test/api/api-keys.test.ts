import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CREDENTIAL_TTL_MS } from '../../src/auth/authenticator';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';

describe('API keys', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
  });
  after(async () => api.close());

  describe('POST /v1/api_keys', () => {
    it('creates a key with normalised permissions and returns its token once', async () => {
      const admin = await newKey(api, account, account.workspaceId, ['api_keys:manage', 'agents:manage', 'tools:read']);
      const created = await api.request('POST', '/v1/api_keys', {
        token: admin.token,
        body: { metadata: { name: 'ci', labels: { team: 'a' } }, spec: { description: 'for CI', permissions: ['agents:read', 'agents:manage', 'tools:read'] } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.match(created.body.metadata.id, /^apikey_[0-9A-Z]{26}$/);
      assert.equal(created.body.metadata.workspaceId, account.workspaceId);
      assert.deepEqual(created.body.spec.permissions, ['agents:manage', 'tools:read']);
      assert.equal(created.body.spec.system, false);
      assert.equal(created.body.state, 'STATE_ENABLED');
      assert.ok(created.body.spec.token);
      const read = await api.request('GET', `/v1/api_keys/${created.body.metadata.id}`, { token: admin.token });
      assert.equal(read.status, 200);
      assert.equal(read.body.spec.token, undefined);
      assert.equal(read.body.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('replays the token to an Idempotency-Key repeat without storing it in the clear', async () => {
      const headers = { 'x-workspace-id': account.workspaceId, 'idempotency-key': `token-${Date.now()}` };
      const body = { metadata: { name: 'idempotent' }, spec: { permissions: ['agents:read'] } };
      const first = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const rows: Array<{ row: string }> = await api.dataSource.query(
        'SELECT row_to_json(r)::text AS row FROM idempotency_records r WHERE principal_key = $1 AND idempotency_key = $2',
        [account.globalKeyId, headers['idempotency-key']],
      );
      assert.equal(rows.length, 1);
      assert.ok(!rows[0].row.includes(first.body.spec.token), 'the stored response holds the token in the clear');
      assert.ok(!rows[0].row.includes(first.body.metadata.id), 'the stored response is readable');
      const repeat = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(repeat.body, first.body);
    });

    it('lets a retry take over a claim left in progress by a request that died, after a minute', async () => {
      const headers = { 'x-workspace-id': account.workspaceId, 'idempotency-key': `orphan-${Date.now()}` };
      const body = { metadata: { name: 'orphaned' }, spec: { permissions: ['agents:read'] } };
      const first = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      // Back to "in progress": what a node killed mid-request (or cut off from the database before it released its claim) leaves.
      const where = 'WHERE principal_key = $1 AND idempotency_key = $2';
      await api.dataSource.query(`UPDATE idempotency_records SET status = NULL, body = NULL ${where}`, [account.globalKeyId, headers['idempotency-key']]);
      const blocked = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assertStatus(blocked, 409, Code.ABORTED, /a request with this Idempotency-Key is still in progress/);
      await api.dataSource.query(`UPDATE idempotency_records SET created_at = now() - interval '61 seconds' ${where}`, [account.globalKeyId, headers['idempotency-key']]);
      const retried = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.equal(retried.body.metadata.name, 'orphaned');
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'run again, not replayed');
    });

    it('refuses read on secrets and account, naming the permission', async () => {
      const response = await api.request('POST', '/v1/api_keys', {
        token: account.globalToken,
        headers: { 'x-workspace-id': account.workspaceId },
        body: { metadata: { name: 'bad' }, spec: { permissions: ['agents:read', 'secrets:read'] } },
      });
      assertStatus(response, 400, Code.INVALID_ARGUMENT, /spec.permissions\[1\]: "secrets" supports only the manage verb/);
      assert.equal(response.body.details[0]['@type'], 'type.googleapis.com/google.rpc.BadRequest');
      assert.equal(response.body.details[0].fieldViolations[0].field, 'spec.permissions[1]');
    });

    it('needs X-Workspace-Id for the global key on a flat path', async () => {
      const response = await api.request('POST', '/v1/api_keys', { token: account.globalToken, body: { metadata: { name: 'x' } } });
      assertStatus(response, 400, Code.INVALID_ARGUMENT, /X-Workspace-Id/);
    });

    it('a key with no permissions can call only scope-free endpoints', async () => {
      const bare = await newKey(api, account, account.workspaceId, []);
      assert.equal((await api.request('GET', '/v1/account', { token: bare.token })).status, 200);
      assert.equal((await api.request('GET', '/v1/profile', { token: bare.token })).status, 200);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: bare.token }), 403, Code.PERMISSION_DENIED, /lacks the api_keys:read scope/);
    });
  });

  describe('no escalation through api_keys:manage', () => {
    it('refuses to create a key with a permission the caller does not hold', async () => {
      const narrow = await newKey(api, account, account.workspaceId, ['api_keys:manage', 'agents:read']);
      for (const permissions of [['*'], ['secrets:manage'], ['agents:manage'], ['api_keys:manage', 'account:manage']]) {
        const response = await api.request('POST', '/v1/api_keys', { token: narrow.token, body: { metadata: { name: 'escalate' }, spec: { permissions } } });
        assertStatus(response, 403, Code.PERMISSION_DENIED, /^this credential cannot grant ".*", which it does not hold itself$/);
      }
      const path = `/v1/workspaces/${account.workspaceId}/api_keys`;
      assertStatus(await api.request('POST', path, { token: narrow.token, body: { metadata: { name: 'e' }, spec: { permissions: ['*'] } } }), 403, Code.PERMISSION_DENIED, /cannot grant "\*"/);
      const listed = await api.request('GET', '/v1/api_keys?limit=1000', { token: narrow.token });
      assert.ok(!listed.body.items.some((key: { metadata: { name: string } }) => key.metadata.name === 'escalate' || key.metadata.name === 'e'));
      const allowed = await api.request('POST', '/v1/api_keys', { token: narrow.token, body: { metadata: { name: 'subset' }, spec: { permissions: ['agents:read', 'api_keys:read'] } } });
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.deepEqual(allowed.body.spec.permissions, ['agents:read', 'api_keys:read']);
    });

    it('refuses to widen a key by PATCH beyond the caller\'s permissions', async () => {
      const narrow = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      const target = await newKey(api, account, account.workspaceId, []);
      const response = await api.request('PATCH', `/v1/api_keys/${target.id}`, { token: narrow.token, body: { spec: { permissions: ['*'] }, updateMask: 'spec.permissions' } });
      assertStatus(response, 403, Code.PERMISSION_DENIED, /cannot grant "\*"/);
      const self = await api.request('PATCH', `/v1/api_keys/${narrow.id}`, { token: narrow.token, body: { spec: { permissions: ['api_keys:manage', 'secrets:manage'] } } });
      assertStatus(self, 403, Code.PERMISSION_DENIED, /cannot grant "secrets:manage"/);
      const read = await api.request('GET', `/v1/api_keys/${target.id}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assert.deepEqual(read.body.spec.permissions, []);
    });

    it('refuses to rotate, and so learn the token of, a key broader than the caller', async () => {
      const narrow = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      const broad = await newKey(api, account, account.workspaceId, ['*']);
      assertStatus(await api.request('PUT', `/v1/api_keys/${broad.id}/rotate`, { token: narrow.token }), 403, Code.PERMISSION_DENIED, /cannot grant "\*"/);
      assert.equal((await api.request('GET', '/v1/account', { token: broad.token })).status, 200, 'the broad key was not rotated');
      const peer = await newKey(api, account, account.workspaceId, ['api_keys:read']);
      assert.equal((await api.request('PUT', `/v1/api_keys/${peer.id}/rotate`, { token: narrow.token })).status, 200);
    });

    it('refuses to disable or delete a key broader than the caller', async () => {
      const narrow = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      const broad = await newKey(api, account, account.workspaceId, ['agents:manage']);
      for (const [method, path] of [['PUT', `/v1/api_keys/${broad.id}/disable`], ['DELETE', `/v1/api_keys/${broad.id}`]] as const) {
        assertStatus(await api.request(method, path, { token: narrow.token }), 403, Code.PERMISSION_DENIED, /^this credential cannot manage a key holding "agents:manage", which it does not hold itself$/);
      }
      assert.equal((await api.request('GET', '/v1/account', { token: broad.token })).status, 200, 'the broad key still works');
      const peer = await newKey(api, account, account.workspaceId, []);
      assert.equal((await api.request('PUT', `/v1/api_keys/${peer.id}/disable`, { token: narrow.token })).status, 200);
      assert.equal((await api.request('DELETE', `/v1/api_keys/${peer.id}`, { token: narrow.token })).status, 200);
    });
  });

  describe('rotation, enable and disable', () => {
    it('rotation invalidates every earlier token of the key', async () => {
      const key = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      const first = await api.request('PUT', `/v1/api_keys/${key.id}/rotate`, { token: key.token });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const second = await api.request('PUT', `/v1/api_keys/${key.id}/rotate`, { token: first.body.spec.token });
      assert.equal(second.status, 200);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token }), 401, Code.UNAUTHENTICATED, /rotated/);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: first.body.spec.token }), 401, Code.UNAUTHENTICATED, /rotated/);
      assert.equal((await api.request('GET', '/v1/api_keys', { token: second.body.spec.token })).status, 200);
    });

    it('a disabled key is refused until enabled again', async () => {
      const key = await newKey(api, account, account.workspaceId, ['api_keys:read']);
      const disabled = await api.request('PUT', `/v1/api_keys/${key.id}/disable`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assert.equal(disabled.body.state, 'STATE_DISABLED');
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token }), 401, Code.UNAUTHENTICATED, /disabled/);
      const enabled = await api.request('PUT', `/v1/api_keys/${key.id}/enable`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assert.equal(enabled.body.state, 'STATE_ENABLED');
      assert.equal((await api.request('GET', '/v1/api_keys', { token: key.token })).status, 200);
    });
  });

  describe('PATCH /v1/api_keys/{id}', () => {
    it('applies only masked fields and honours If-Match', async () => {
      const key = await newKey(api, account, account.workspaceId, ['agents:read']);
      const headers = { 'x-workspace-id': account.workspaceId };
      const before = await api.request('GET', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers });
      const patched = await api.request('PATCH', `/v1/api_keys/${key.id}`, {
        token: account.globalToken,
        headers: { ...headers, 'if-match': before.body.metadata.updatedAt },
        body: { metadata: { name: 'renamed' }, spec: { description: 'ignored', permissions: ['tools:manage', 'tools:read'] }, updateMask: 'metadata.name,spec.permissions' },
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.metadata.name, 'renamed');
      assert.equal(patched.body.spec.description, undefined);
      assert.deepEqual(patched.body.spec.permissions, ['tools:manage']);
      const stale = await api.request('PATCH', `/v1/api_keys/${key.id}`, {
        token: account.globalToken,
        headers: { ...headers, 'if-match': before.body.metadata.updatedAt },
        body: { metadata: { name: 'again' } },
      });
      assertStatus(stale, 409, Code.ABORTED, /modified/);
      const malformed = await api.request('PATCH', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers: { ...headers, 'if-match': 'yesterday' }, body: { metadata: { name: 'again' } } });
      assertStatus(malformed, 400, Code.INVALID_ARGUMENT, /^If-Match: "yesterday" is not a metadata.updatedAt date-time$/);
    });

    it('refuses an unknown mask path and unknown body fields', async () => {
      const key = await newKey(api, account, account.workspaceId, []);
      const headers = { 'x-workspace-id': account.workspaceId };
      assertStatus(await api.request('PATCH', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers, body: { updateMask: 'spec.system' } }), 400, Code.INVALID_ARGUMENT, /updateMask/);
      assertStatus(await api.request('PATCH', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers, body: { spec: { state: 'x' } } }), 400, Code.INVALID_ARGUMENT, /spec.state: is not a known field/);
      // Read-only fields are ignored: a key cannot make itself system or change its state by PATCH.
      const ignored = await api.request('PATCH', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers, body: { state: 'STATE_DISABLED', spec: { system: true, token: 'x' } } });
      assert.equal(ignored.status, 200, JSON.stringify(ignored.body));
      assert.equal(ignored.body.state, 'STATE_ENABLED');
      assert.equal(ignored.body.spec.system, false);
      assert.equal(ignored.body.spec.token, undefined);
    });
  });

  describe('DELETE /v1/api_keys/{id}', () => {
    it('deletes a key, whose token then fails', async () => {
      const key = await newKey(api, account, account.workspaceId, ['api_keys:read']);
      const deleted = await api.request('DELETE', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, {});
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token }), 401, Code.UNAUTHENTICATED);
    });

    it('refuses to delete the system key', async () => {
      const response = await api.request('DELETE', `/v1/api_keys/${account.globalKeyId}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
      assertStatus(response, 403, Code.PERMISSION_DENIED, /system API key/);
      assert.equal((await api.request('GET', '/v1/account', { token: account.globalToken })).status, 200);
    });
  });

  describe('lists', () => {
    it('pages through more than one page in both orders, with prefix and label filters', async () => {
      const workspaceId = await newWorkspace(api, account, 'paging');
      const ids: string[] = [];
      for (let index = 0; index < 7; index += 1) {
        ids.push((await newKey(api, account, workspaceId, [], `page-${index}`)).id);
      }
      await api.request('PATCH', `/v1/api_keys/${ids[3]}`, { token: account.globalToken, headers: { 'x-workspace-id': workspaceId }, body: { metadata: { labels: { tier: 'gold' } } } });
      const seen: string[] = [];
      let cursor = '';
      do {
        const page = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: account.globalToken });
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok(page.body.items.length <= 3);
        seen.push(...page.body.items.map((item: { metadata: { id: string } }) => item.metadata.id));
        cursor = page.body.pagination.nextCursor;
      } while (cursor);
      assert.deepEqual(seen, ids);
      const descending = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?sortOrder=desc&limit=2`, { token: account.globalToken });
      assert.deepEqual(descending.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [ids[6], ids[5]]);
      const byName = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?prefix=page-1`, { token: account.globalToken });
      assert.deepEqual(byName.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [ids[1]]);
      const byLabel = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?labels=tier=gold`, { token: account.globalToken });
      assert.deepEqual(byLabel.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [ids[3]]);
      const search = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?query=GE-5`, { token: account.globalToken });
      assert.deepEqual(search.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [ids[5]]);
      const clamped = await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?limit=100000`, { token: account.globalToken });
      assert.equal(clamped.status, 200);
      assert.equal(clamped.body.items.length, 7);
      assertStatus(await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?limit=abc`, { token: account.globalToken }), 400, Code.INVALID_ARGUMENT, /limit/);
      assertStatus(await api.request('GET', `/v1/workspaces/${workspaceId}/api_keys?sortOrder=up`, { token: account.globalToken }), 400, Code.INVALID_ARGUMENT, /sortOrder/);
    });

    it('shows info.createdBy only with includeInfo=true', async () => {
      const plain = await api.request('GET', `/v1/workspaces/${account.workspaceId}/api_keys`, { token: account.globalToken });
      assert.equal(plain.body.items[0].info, undefined);
      const withInfo = await api.request('GET', `/v1/workspaces/${account.workspaceId}/api_keys?includeInfo=true`, { token: account.globalToken });
      assert.equal(withInfo.body.items[0].info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });
  });

  describe('the global key', () => {
    it('reads, rotates, disables and enables the global key with its workspace preview', async () => {
      const own = await newAccount(api);
      await newWorkspace(api, own, 'extra');
      const read = await api.request('GET', '/v1/account/global_api_key', { token: own.globalToken });
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.spec.system, true);
      assert.deepEqual(read.body.spec.permissions, ['*']);
      assert.equal(read.body.spec.token, undefined);
      assert.equal(read.body.info.workspacesTotal, 2);
      assert.equal(read.body.info.workspacesPreview.length, 2);
      const rotated = await api.request('PUT', '/v1/account/global_api_key/rotate', { token: own.globalToken });
      assertStatus(await api.request('GET', '/v1/account', { token: own.globalToken }), 401, Code.UNAUTHENTICATED);
      const token = rotated.body.spec.token;
      const disabled = await api.request('PUT', '/v1/account/global_api_key/disable', { token });
      assert.equal(disabled.body.state, 'STATE_DISABLED');
      assertStatus(await api.request('PUT', '/v1/account/global_api_key/enable', { token }), 401, Code.UNAUTHENTICATED, /disabled/);
      // Enabled behind this node's back (as another node would): seen once the kept credential expires.
      await api.services.store.apiKeys.update(own.globalKeyId, { state: 'STATE_ENABLED' });
      await sleep(CREDENTIAL_TTL_MS + 50);
      assert.equal((await api.request('GET', '/v1/account', { token })).status, 200);
    });

    it('reads a key once for the requests of a second, and a disable through the API acts on the next request', async () => {
      const own = await newAccount(api);
      const apiKeys = api.services.store.apiKeys;
      const original = apiKeys.findCredential.bind(apiKeys);
      let reads = 0;
      apiKeys.findCredential = (...args) => {
        reads += 1;
        return original(...args);
      };
      try {
        for (let index = 0; index < 5; index += 1) assert.equal((await api.request('GET', '/v1/account', { token: own.globalToken })).status, 200);
        assert.equal(reads, 1, 'one read for five requests');
        await api.request('PUT', '/v1/account/global_api_key/disable', { token: own.globalToken });
        assertStatus(await api.request('GET', '/v1/account', { token: own.globalToken }), 401, Code.UNAUTHENTICATED, /disabled/);
      } finally {
        apiKeys.findCredential = original;
      }
    });

    it('cannot be rotated by a workspace key, even with account:manage', async () => {
      const key = await newKey(api, account, account.workspaceId, ['account:manage']);
      assertStatus(await api.request('PUT', '/v1/account/global_api_key/rotate', { token: key.token }), 403, Code.PERMISSION_DENIED, /admin role/);
    });
  });

  describe('workspace isolation', () => {
    it('answers NOT_FOUND for a key of another workspace and PERMISSION_DENIED on its path', async () => {
      const otherWorkspace = await newWorkspace(api, account, 'isolated');
      const foreign = await newKey(api, account, otherWorkspace, []);
      const local = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      for (const [method, path] of [
        ['GET', `/v1/api_keys/${foreign.id}`],
        ['PATCH', `/v1/api_keys/${foreign.id}`],
        ['DELETE', `/v1/api_keys/${foreign.id}`],
        ['PUT', `/v1/api_keys/${foreign.id}/rotate`],
        ['PUT', `/v1/api_keys/${foreign.id}/enable`],
        ['PUT', `/v1/api_keys/${foreign.id}/disable`],
      ] as const) {
        assertStatus(await api.request(method, path, { token: local.token, body: method === 'PATCH' ? { metadata: { name: 'x' } } : undefined }), 404, Code.NOT_FOUND, /not found/);
      }
      assertStatus(await api.request('GET', `/v1/workspaces/${otherWorkspace}/api_keys`, { token: local.token }), 403, Code.PERMISSION_DENIED);
      assertStatus(await api.request('POST', `/v1/workspaces/${otherWorkspace}/api_keys`, { token: local.token, body: { metadata: { name: 'x' } } }), 403, Code.PERMISSION_DENIED);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: local.token, headers: { 'x-workspace-id': otherWorkspace } }), 403, Code.PERMISSION_DENIED);
    });

    it('answers NOT_FOUND for another account\'s workspace and key', async () => {
      const stranger = await newAccount(api);
      const strangerKey = await newKey(api, stranger, stranger.workspaceId, []);
      assertStatus(await api.request('GET', `/v1/workspaces/${stranger.workspaceId}/api_keys`, { token: account.globalToken }), 404, Code.NOT_FOUND);
      assertStatus(await api.request('GET', `/v1/api_keys/${strangerKey.id}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } }), 404, Code.NOT_FOUND);
      assertStatus(await api.request('GET', `/v1/api_keys/${missingId('apikey')}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } }), 404, Code.NOT_FOUND);
    });

    it('answers INVALID_ARGUMENT for a malformed id', async () => {
      assertStatus(await api.request('GET', '/v1/api_keys/not-an-id', { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } }), 400, Code.INVALID_ARGUMENT, /^id:/);
    });
  });
});
