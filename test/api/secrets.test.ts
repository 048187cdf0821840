// Workspace secrets (spec 4.4): CRUD on the flat path, the name rule, encryption
// at rest, template resolution for the runtime, `secrets:manage` on every
// route, and that no response, log line or error message carries a value.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FailedPreconditionError } from '../../src/errors';
import { LeakWatch } from '../support/leak-watch';
import { startTestApi, type ApiResponse, type RequestOptions, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';

const CANARY = `canary${randomUUID().replace(/-/g, '')}`;
const NAME_RULE =
  'metadata.name: a secret name must start with a letter or underscore and contain only letters, digits and underscores (at most 128 characters), so that {{secrets.NAME}} can reference it';

describe('workspace secrets', () => {
  let api: TestApi;
  let account: TestAccount;
  let token: string;
  const watch = new LeakWatch(CANARY);

  /** Calls the API and keeps the whole response for the leak check. */
  const call = async (method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> => watch.record(await api.request(method, path, { token, ...options }));
  const canary = () => watch.canary();

  /** Creates a secret; `null` creates it without a value. */
  async function createSecret(name: string, value: string | null = canary(), options: RequestOptions = {}) {
    const response = await call('POST', '/v1/workspace_secrets', { body: { metadata: { name, labels: { team: 'a' } }, spec: value === null ? {} : { value } }, ...options });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function resolve(workspaceId: string, text: string, sessionSecrets?: Record<string, string>): Promise<string> {
    return watch.recordErrors(() => api.services.secrets.resolveSecretTemplates(workspaceId, text, sessionSecrets));
  }

  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
    token = (await newKey(api, account, account.workspaceId, ['secrets:manage'])).token;
  });
  after(async () => api.close());

  describe('POST /v1/workspace_secrets', () => {
    it('creates a secret and returns it without its value', async () => {
      const value = canary();
      const secret = await createSecret('CREATE_ONE', value);
      assert.match(secret.metadata.id, /^secret_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(secret.metadata.name, 'CREATE_ONE');
      assert.equal(secret.metadata.workspaceId, account.workspaceId);
      assert.deepEqual(secret.metadata.labels, { team: 'a' });
      assert.deepEqual(secret.spec, {});
      assert.equal(secret.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
      assert.equal(secret.info.lastUsedAt, undefined);
      assert.ok(!JSON.stringify(secret).includes(value));
    });

    it('stores the value encrypted (AES-256-GCM sealed record), never in plain text', async () => {
      const value = canary();
      const secret = await createSecret('AT_REST', value);
      const [row] = await api.dataSource.query('SELECT value_ciphertext FROM workspace_secrets WHERE id = $1', [secret.metadata.id]);
      assert.match(row.value_ciphertext, /^v1\.[A-Za-z0-9_-]+$/);
      assert.ok(!row.value_ciphertext.includes(value));
      const [key] = await api.dataSource.query('SELECT wrapped_key FROM workspace_data_keys WHERE workspace_id = $1', [account.workspaceId]);
      assert.match(key.wrapped_key, /^v1\./);
    });

    it('accepts a secret without a value', async () => {
      const secret = await createSecret('NO_VALUE', null);
      const [row] = await api.dataSource.query('SELECT value_ciphertext FROM workspace_secrets WHERE id = $1', [secret.metadata.id]);
      assert.equal(row.value_ciphertext, null);
    });

    it('returns ALREADY_EXISTS for a second secret with the same name in the workspace', async () => {
      await createSecret('DUPLICATE');
      const response = await call('POST', '/v1/workspace_secrets', { body: { metadata: { name: 'DUPLICATE' }, spec: { value: canary() } } });
      assertStatus(response, 409, Code.ALREADY_EXISTS);
      assert.equal(response.body.message, 'a workspace secret with this name already exists in the workspace');
    });

    it('treats names as case-sensitive and allows the same name in another workspace', async () => {
      await createSecret('Casing');
      await createSecret('CASING');
      const other = await newWorkspace(api, account, 'secrets-other');
      await createSecret('Casing', canary(), { token: account.globalToken, headers: { 'x-workspace-id': other } });
    });

    for (const name of ['my-secret', '1ABC', 'has space', 'dot.ted', `A${'B'.repeat(128)}`]) {
      it(`returns INVALID_ARGUMENT for the name "${name.slice(0, 20)}", which a template cannot reference`, async () => {
        const response = await call('POST', '/v1/workspace_secrets', { body: { metadata: { name }, spec: { value: canary() } } });
        assertStatus(response, 400, Code.INVALID_ARGUMENT);
        assert.equal(response.body.message, NAME_RULE);
        assert.deepEqual(response.body.details[0].fieldViolations[0].field, 'metadata.name');
      });
    }

    it('returns INVALID_ARGUMENT for an unknown spec field', async () => {
      const response = await call('POST', '/v1/workspace_secrets', { body: { metadata: { name: 'UNKNOWN_FIELD' }, spec: { value: canary(), plain: true } } });
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.message, 'spec.plain: is not a known field');
    });

    it('returns INVALID_ARGUMENT for a value over 64 KiB characters', async () => {
      const response = await call('POST', '/v1/workspace_secrets', { body: { metadata: { name: 'TOO_LONG' }, spec: { value: 'x'.repeat(65537) } } });
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.message, 'spec.value: must NOT have more than 65536 characters');
    });

    it('replays the first response for a repeated Idempotency-Key', async () => {
      const body = { metadata: { name: 'IDEMPOTENT' }, spec: { value: canary() } };
      const first = await call('POST', '/v1/workspace_secrets', { body, headers: { 'idempotency-key': 'secret-create-1' } });
      const second = await call('POST', '/v1/workspace_secrets', { body, headers: { 'idempotency-key': 'secret-create-1' } });
      assert.equal(second.status, 200);
      assert.equal(second.body.metadata.id, first.body.metadata.id);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
    });

    it('returns UNAUTHENTICATED without a token', async () => {
      assertStatus(await call('POST', '/v1/workspace_secrets', { token: '', body: { metadata: { name: 'X' } } }), 401, Code.UNAUTHENTICATED);
    });

    it('returns PERMISSION_DENIED for a key without secrets:manage', async () => {
      const other = await newKey(api, account, account.workspaceId, ['workspaces:manage', 'agents:manage', 'tools:manage']);
      const response = await call('POST', '/v1/workspace_secrets', { token: other.token, body: { metadata: { name: 'X' }, spec: { value: canary() } } });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this credential lacks the secrets:manage scope');
    });
  });

  describe('GET /v1/workspace_secrets', () => {
    let workspaceId: string;
    let listToken: string;
    before(async () => {
      workspaceId = await newWorkspace(api, account, 'secret-list');
      listToken = (await newKey(api, account, workspaceId, ['secrets:manage'])).token;
      for (const name of ['LIST_A', 'LIST_B', 'OTHER_C']) await createSecret(name, canary(), { token: listToken });
    });

    it('lists the workspace secrets without values or info by default', async () => {
      const response = await call('GET', '/v1/workspace_secrets', { token: listToken });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['LIST_A', 'LIST_B', 'OTHER_C']);
      for (const item of response.body.items) {
        assert.deepEqual(item.spec, {});
        assert.equal(item.info, undefined);
      }
      assert.equal(response.body.pagination.nextCursor, '');
    });

    it('adds info with includeInfo=true', async () => {
      const response = await call('GET', '/v1/workspace_secrets?includeInfo=true', { token: listToken });
      assert.equal(response.body.items[0].info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('filters by name prefix and labels, and pages with a cursor', async () => {
      const prefixed = await call('GET', '/v1/workspace_secrets?prefix=LIST_', { token: listToken });
      assert.deepEqual(prefixed.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['LIST_A', 'LIST_B']);
      const labelled = await call('GET', '/v1/workspace_secrets?labels=team=b', { token: listToken });
      assert.deepEqual(labelled.body.items, []);
      const first = await call('GET', '/v1/workspace_secrets?limit=2&sortOrder=desc', { token: listToken });
      assert.deepEqual(first.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['OTHER_C', 'LIST_B']);
      const next = await call('GET', `/v1/workspace_secrets?limit=2&sortOrder=desc&cursor=${first.body.pagination.nextCursor}`, { token: listToken });
      assert.deepEqual(next.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['LIST_A']);
    });

    it('never lists another workspace\'s secrets', async () => {
      const response = await call('GET', '/v1/workspace_secrets?prefix=LIST_');
      assert.deepEqual(response.body.items, []);
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without secrets:manage', async () => {
      assertStatus(await call('GET', '/v1/workspace_secrets', { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, workspaceId, ['workspaces:read']);
      const response = await call('GET', '/v1/workspace_secrets', { token: reader.token });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this credential lacks the secrets:manage scope');
    });
  });

  describe('GET /v1/workspace_secrets/{id}', () => {
    it('returns the secret with info and without its value', async () => {
      const created = await createSecret('GET_ONE');
      const response = await call('GET', `/v1/workspace_secrets/${created.metadata.id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.spec, {});
      assert.equal(response.body.info.createdBy.metadata.id, created.info.createdBy.metadata.id);
    });

    it('returns NOT_FOUND for a secret of another workspace', async () => {
      const other = await newWorkspace(api, account, 'secret-get-other');
      const foreign = await createSecret('FOREIGN', canary(), { token: account.globalToken, headers: { 'x-workspace-id': other } });
      const response = await call('GET', `/v1/workspace_secrets/${foreign.metadata.id}`);
      assertStatus(response, 404, Code.NOT_FOUND);
      assert.equal(response.body.message, `workspace secret ${foreign.metadata.id} not found`);
    });

    it('returns NOT_FOUND for an unknown id and INVALID_ARGUMENT for a malformed one', async () => {
      assertStatus(await call('GET', `/v1/workspace_secrets/${missingId('secret')}`), 404, Code.NOT_FOUND);
      const response = await call('GET', '/v1/workspace_secrets/not-an-id');
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'id');
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without secrets:manage', async () => {
      const created = await createSecret('GET_AUTH');
      assertStatus(await call('GET', `/v1/workspace_secrets/${created.metadata.id}`, { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:manage']);
      assertStatus(await call('GET', `/v1/workspace_secrets/${created.metadata.id}`, { token: reader.token }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('PATCH /v1/workspace_secrets/{id}', () => {
    it('replaces the value, which the runtime then resolves', async () => {
      const created = await createSecret('PATCH_VALUE');
      const value = canary();
      const response = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { spec: { value } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec, {});
      assert.equal(await resolve(account.workspaceId, '{{secrets.PATCH_VALUE}}'), value);
    });

    it('applies only the masked fields', async () => {
      const value = canary();
      const created = await createSecret('PATCH_MASK', value);
      const response = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, {
        body: { metadata: { labels: { team: 'b' } }, spec: { value: canary() }, updateMask: 'metadata.labels' },
      });
      assert.deepEqual(response.body.metadata.labels, { team: 'b' });
      assert.equal(await resolve(account.workspaceId, '{{secrets.PATCH_MASK}}'), value);
    });

    it('renames a secret; templates then use the new name', async () => {
      const value = canary();
      const created = await createSecret('OLD_NAME', value);
      const response = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { metadata: { name: 'NEW_NAME' } } });
      assert.equal(response.body.metadata.name, 'NEW_NAME');
      assert.equal(await resolve(account.workspaceId, '{{secrets.NEW_NAME}}'), value);
    });

    it('returns INVALID_ARGUMENT for a rename that breaks the name rule, and ALREADY_EXISTS for a taken name', async () => {
      const created = await createSecret('RENAME_ME');
      await createSecret('TAKEN');
      assert.equal((await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { metadata: { name: 'bad-name' } } })).body.message, NAME_RULE);
      const taken = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { metadata: { name: 'TAKEN' } } });
      assertStatus(taken, 409, Code.ALREADY_EXISTS);
      assert.equal(taken.body.message, 'a workspace secret with this name already exists in the workspace');
    });

    it('clears the value when the mask names spec.value without one', async () => {
      const created = await createSecret('PATCH_CLEAR');
      await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { updateMask: 'spec.value' } });
      await assert.rejects(resolve(account.workspaceId, '{{secrets.PATCH_CLEAR}}'), (error: unknown) => error instanceof FailedPreconditionError);
    });

    it('returns INVALID_ARGUMENT for an unknown mask path', async () => {
      const created = await createSecret('PATCH_BAD_MASK');
      const response = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { updateMask: 'spec.plain' } });
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.message, 'updateMask: "spec.plain" is not an updatable field (allowed: metadata.name, metadata.externalId, metadata.labels, spec.value)');
    });

    it('returns ABORTED when If-Match does not match updatedAt', async () => {
      const created = await createSecret('PATCH_IF_MATCH');
      const response = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { spec: { value: canary() } }, headers: { 'if-match': '2001-01-01T00:00:00.000Z' } });
      assertStatus(response, 409, Code.ABORTED);
      const ok = await call('PATCH', `/v1/workspace_secrets/${created.metadata.id}`, { body: { spec: { value: canary() } }, headers: { 'if-match': created.metadata.updatedAt } });
      assert.equal(ok.status, 200);
    });

    it('returns NOT_FOUND for another workspace\'s secret, 401 without a token, 403 without secrets:manage', async () => {
      const other = await newWorkspace(api, account, 'secret-patch-other');
      const foreign = await createSecret('FOREIGN_PATCH', canary(), { token: account.globalToken, headers: { 'x-workspace-id': other } });
      assertStatus(await call('PATCH', `/v1/workspace_secrets/${foreign.metadata.id}`, { body: { spec: { value: canary() } } }), 404, Code.NOT_FOUND);
      assertStatus(await call('PATCH', `/v1/workspace_secrets/${foreign.metadata.id}`, { token: '', body: {} }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:manage']);
      assertStatus(await call('PATCH', `/v1/workspace_secrets/${foreign.metadata.id}`, { token: reader.token, body: {} }), 403, Code.PERMISSION_DENIED);
      assertStatus(await call('PATCH', '/v1/workspace_secrets/secret_bad', { body: {} }), 400, Code.INVALID_ARGUMENT);
    });
  });

  describe('DELETE /v1/workspace_secrets/{id}', () => {
    it('deletes the secret', async () => {
      const created = await createSecret('DELETE_ME');
      const response = await call('DELETE', `/v1/workspace_secrets/${created.metadata.id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      assertStatus(await call('GET', `/v1/workspace_secrets/${created.metadata.id}`), 404, Code.NOT_FOUND);
    });

    it('returns NOT_FOUND for another workspace\'s secret, 401 without a token, 403 without secrets:manage', async () => {
      const other = await newWorkspace(api, account, 'secret-delete-other');
      const foreign = await createSecret('FOREIGN_DELETE', canary(), { token: account.globalToken, headers: { 'x-workspace-id': other } });
      assertStatus(await call('DELETE', `/v1/workspace_secrets/${foreign.metadata.id}`), 404, Code.NOT_FOUND);
      assertStatus(await call('DELETE', `/v1/workspace_secrets/${foreign.metadata.id}`, { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      assertStatus(await call('DELETE', `/v1/workspace_secrets/${foreign.metadata.id}`, { token: reader.token }), 403, Code.PERMISSION_DENIED);
      assertStatus(await call('DELETE', '/v1/workspace_secrets/123'), 400, Code.INVALID_ARGUMENT);
      const stillThere = await call('GET', `/v1/workspace_secrets/${foreign.metadata.id}`, { token: account.globalToken, headers: { 'x-workspace-id': other } });
      assert.equal(stillThere.status, 200);
    });
  });

  describe('resolveSecretTemplates()', () => {
    it('replaces every {{secrets.NAME}} and records info.lastUsedAt', async () => {
      const [user, pass] = [canary(), canary()];
      const first = await createSecret('RESOLVE_USER', user);
      await createSecret('RESOLVE_PASS', pass);
      const before = Date.now();
      assert.equal(await resolve(account.workspaceId, 'Basic {{secrets.RESOLVE_USER}}:{{ secrets.RESOLVE_PASS }} {{secrets.RESOLVE_USER}}'), `Basic ${user}:${pass} ${user}`);
      const response = await call('GET', `/v1/workspace_secrets/${first.metadata.id}`);
      assert.ok(Date.parse(response.body.info.lastUsedAt) >= before - 1000, JSON.stringify(response.body.info));
      assert.equal(response.body.metadata.updatedAt, first.metadata.updatedAt);
    });

    it('returns text without templates unchanged', async () => {
      assert.equal(await resolve(account.workspaceId, 'no templates {{vars.X}}'), 'no templates {{vars.X}}');
    });

    it('fails with FAILED_PRECONDITION naming an unknown secret, without any value in the message', async () => {
      await createSecret('KNOWN_ONE');
      await assert.rejects(resolve(account.workspaceId, '{{secrets.KNOWN_ONE}} {{secrets.MISSING_ONE}}'), (error: unknown) => {
        assert.ok(error instanceof FailedPreconditionError);
        assert.equal(error.code, 'FAILED_PRECONDITION');
        assert.equal(error.message, `{{secrets.MISSING_ONE}} names no secret of workspace ${account.workspaceId}; create a workspace secret named "MISSING_ONE"`);
        return true;
      });
    });

    it('fails with FAILED_PRECONDITION for a secret without a value', async () => {
      await createSecret('EMPTY_ONE', null);
      await assert.rejects(resolve(account.workspaceId, '{{secrets.EMPTY_ONE}}'), {
        name: 'FailedPreconditionError',
        message: 'workspace secret "EMPTY_ONE" has no value; set its spec.value',
      });
    });

    it('does not resolve a secret of another workspace', async () => {
      const other = await newWorkspace(api, account, 'secret-resolve-other');
      await createSecret('ONLY_THERE', canary(), { token: account.globalToken, headers: { 'x-workspace-id': other } });
      await assert.rejects(resolve(account.workspaceId, '{{secrets.ONLY_THERE}}'), (error: unknown) => error instanceof FailedPreconditionError);
    });

    it('prefers per-session secrets over stored ones', async () => {
      await createSecret('SESSION_ONE');
      assert.equal(await resolve(account.workspaceId, '{{secrets.SESSION_ONE}}/{{secrets.SESSION_ONLY}}', { SESSION_ONE: 'a', SESSION_ONLY: 'b' }), 'a/b');
    });
  });

  describe('secret values', () => {
    it('never appear in a response, a log line or an error message', () => {
      assert.ok(watch.canariesUsed > 20, 'the suite used canary values');
      assert.ok(api.logs.length > 20, 'the suite produced log lines');
      const leaks = watch.leaks(api.logs);
      assert.deepEqual(leaks, []);
    });
  });
});
