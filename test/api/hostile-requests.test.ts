// Requests an attacker would send to the route ladder (http/mount.ts and the
// JSON body reader): stack-exhausting nesting, prototype keys, and an
// Idempotency-Key replayed into another workspace.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MAX_JSON_DEPTH } from '../../http/middleware/json-body';
import { createIdempotencyStore, purgeExpired } from '../../persistence/repositories/idempotency.store';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, newAccount, newWorkspace, type TestAccount } from '../support/fixtures';

describe('hostile requests', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
  });
  after(async () => api.close());

  describe('POST /v1/account/workspaces with deeply nested JSON', () => {
    const create = (rawBody: string) => api.request('POST', '/v1/account/workspaces', { token: account.globalToken, rawBody });

    it('answers INVALID_ARGUMENT, not INTERNAL, for nesting that would exhaust the stack', async () => {
      for (const [open, close] of [['[', ']'], ['{"a":', '}']]) {
        const deep = `${open.repeat(100_000)}1${close.repeat(100_000)}`;
        const response = await create(`{"metadata":{"name":"deep","labels":${deep}}}`);
        assertStatus(response, 400, Code.INVALID_ARGUMENT, new RegExp(`^\\(body\\): request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels$`));
      }
    });

    it('still reads a body nested up to the limit', async () => {
      const nested = `${'['.repeat(MAX_JSON_DEPTH - 3)}${']'.repeat(MAX_JSON_DEPTH - 3)}`;
      assertStatus(await create(`{"metadata":{"name":"ok","labels":{"a":${nested}}}}`), 400, Code.INVALID_ARGUMENT, /^metadata\.labels\.a: must be of type string$/);
    });
  });

  describe('POST /v1/workspaces/{workspaceId}/agents/{agentId}/variations with out-of-range numbers', () => {
    it('refuses a number literal too large for a double (Infinity once parsed), naming the field', async () => {
      const agent = await api.request('POST', `/v1/workspaces/${account.workspaceId}/agents`, { token: account.globalToken, body: { metadata: { name: 'numbers' } } });
      assert.equal(agent.status, 200, JSON.stringify(agent.body));
      const path = `/v1/workspaces/${account.workspaceId}/agents/${agent.body.metadata.id}/variations`;
      const response = await api.request('POST', path, { token: account.globalToken, rawBody: '{"metadata":{"name":"v"},"spec":{"progressiveDiscovery":{"rerankThreshold":1e400}}}' });
      assertStatus(response, 400, Code.INVALID_ARGUMENT, /^spec\.progressiveDiscovery\.rerankThreshold: must be a finite number$/);
      assert.deepEqual(response.body.details[0].fieldViolations, [{ field: 'spec.progressiveDiscovery.rerankThreshold', description: 'must be a finite number' }]);
      const listed = await api.request('GET', path, { token: account.globalToken });
      assert.deepEqual(listed.body.items, []);
    });
  });

  describe('POST /v1/workspace_secrets with malformed JSON', () => {
    it('does not quote the body (a secret value) in the error', async () => {
      const value = 'sk-live-CANARY0123456789';
      for (const rawBody of [`{"metadata":{"name":"S"},"spec":{"value":${value}}}`, `{"metadata":{"name":"S"},"spec":{"value":"${value}"} x`]) {
        const response = await api.request('POST', '/v1/workspace_secrets', { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId }, rawBody });
        assertStatus(response, 400, Code.INVALID_ARGUMENT, /^\(body\): request body is not valid JSON/);
        assert.ok(!JSON.stringify(response.body).includes('sk-live'), JSON.stringify(response.body));
      }
    });
  });

  describe('prototype keys in JSON bodies', () => {
    it('refuses __proto__ and constructor as fields and leaves Object.prototype untouched', async () => {
      const bodies = [
        '{"__proto__":{"admin":true},"metadata":{"name":"p"}}',
        '{"constructor":{"prototype":{"admin":true}},"metadata":{"name":"p"}}',
        '{"metadata":{"name":"p","__proto__":{"admin":true}}}',
        '{"metadata":{"name":"p","labels":{"__proto__":"x"}}}',
      ];
      for (const rawBody of bodies) {
        const response = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, rawBody });
        assertStatus(response, 400, Code.INVALID_ARGUMENT, /__proto__|constructor/);
      }
      assert.equal(({} as Record<string, unknown>).admin, undefined);
    });
  });

  describe('Idempotency-Key on a flat path', () => {
    it('does not replay a response created in one workspace into another', async () => {
      const second = await newWorkspace(api, account, 'idempotency-other');
      const headers = { 'idempotency-key': `flat-${Date.now()}` };
      const body = { filename: 'a.txt', contentType: 'text/plain', sizeBytes: 1 };
      const first = await api.request('POST', '/v1/uploads', { token: account.globalToken, body, headers: { ...headers, 'x-workspace-id': account.workspaceId } });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const repeat = await api.request('POST', '/v1/uploads', { token: account.globalToken, body, headers: { ...headers, 'x-workspace-id': account.workspaceId } });
      assert.equal(repeat.body.metadata.id, first.body.metadata.id);
      const elsewhere = await api.request('POST', '/v1/uploads', { token: account.globalToken, body, headers: { ...headers, 'x-workspace-id': second } });
      assertStatus(elsewhere, 400, Code.INVALID_ARGUMENT, /^Idempotency-Key: was already used with a different request$/);
      assert.equal(elsewhere.headers.get('idempotent-replayed'), null);
    });

    it('forgets a stored response sealed under a master key that was rotated away, instead of failing', async () => {
      const owner = `test-${Date.now()}`;
      const before = createIdempotencyStore(api.dataSource, randomBytes(32));
      assert.equal(await before.claim(owner, 'k', 'hash'), null);
      await before.complete(owner, 'k', 200, { spec: { token: 'secret-token' } });
      assert.deepEqual((await before.claim(owner, 'k', 'hash'))?.body, { spec: { token: 'secret-token' } });
      const after = createIdempotencyStore(api.dataSource, randomBytes(32));
      assert.equal(await after.claim(owner, 'k', 'hash'), null, 'the unreadable record is claimed afresh');
    });

    it('purges expired records of keys never used again', async () => {
      const owner = `purge-${Date.now()}`;
      const store = createIdempotencyStore(api.dataSource, randomBytes(32));
      await store.claim(owner, 'old', 'hash');
      await store.claim(owner, 'fresh', 'hash');
      await api.dataSource.query("UPDATE idempotency_records SET created_at = now() - interval '25 hours' WHERE principal_key = $1 AND idempotency_key = 'old'", [owner]);
      assert.ok((await purgeExpired(api.dataSource)) >= 1);
      const left = await api.dataSource.query('SELECT idempotency_key FROM idempotency_records WHERE principal_key = $1', [owner]);
      assert.deepEqual(left, [{ idempotency_key: 'fresh' }]);
    });
  });
});
