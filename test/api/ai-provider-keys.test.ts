// AI provider keys (spec 4.5): workspace-addressed CRUD, write-only encrypted
// `spec.apiKey`, base URL rules, model counts, promotional keys, credentials
// for the runtime, `secrets:manage`, and that no key ever leaks.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FailedPreconditionError } from '../../src/errors';
import { MODEL_CATALOG, OPENROUTER_PROVIDER } from '../../src/models/catalog';
import { OPENROUTER_BASE_URL } from '../../src/secrets/ai-provider-key.service';
import { LeakWatch } from '../support/leak-watch';
import { startTestApi, type ApiResponse, type RequestOptions, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';

const CANARY = `sk-or-canary${randomUUID().replace(/-/g, '')}`;
const OPENROUTER_MODELS = MODEL_CATALOG.filter((model) => model.provider === OPENROUTER_PROVIDER).length;

describe('AI provider keys', () => {
  let api: TestApi;
  let account: TestAccount;
  let token: string;
  let base: string;
  const watch = new LeakWatch(CANARY);

  /** Calls the API and keeps the whole response for the leak check. */
  const call = async (method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> => watch.record(await api.request(method, path, { token, ...options }));
  const canary = () => watch.canary();

  async function createKey(spec: Record<string, unknown> = {}, name = 'openrouter') {
    const response = await call('POST', base, { body: { metadata: { name }, spec: { apiKey: canary(), ...spec } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function credentials(workspaceId: string) {
    return watch.recordErrors(() => api.services.providerKeys.resolveProviderCredentials(workspaceId));
  }

  before(async () => {
    api = await startTestApi({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    account = await newAccount(api);
    token = (await newKey(api, account, account.workspaceId, ['secrets:manage', 'workspaces:manage'])).token;
    base = `/v1/workspaces/${account.workspaceId}/ai_provider_keys`;
  });
  after(async () => api.close());

  describe('POST /v1/workspaces/{workspaceId}/ai_provider_keys', () => {
    it('creates a key: apiKey returned empty, provider OpenRouter by default, model counts and isPromotional in info', async () => {
      const apiKey = canary();
      const response = await call('POST', base, { body: { metadata: { name: 'mine', labels: { env: 'dev' } }, spec: { apiKey } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const key = response.body;
      assert.match(key.metadata.id, /^aipk_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(key.metadata.workspaceId, account.workspaceId);
      assert.deepEqual(key.spec, { apiKey: '', provider: 'AI_PROVIDER_OPENROUTER', openrouter: {} });
      assert.deepEqual(key.info, { enabledModelCount: OPENROUTER_MODELS, disabledModelCount: 0, isPromotional: false });
      assert.ok(!JSON.stringify(key).includes(apiKey));
    });

    it('stores the key encrypted, never in plain text', async () => {
      const apiKey = canary();
      const response = await call('POST', base, { body: { metadata: { name: 'at-rest' }, spec: { apiKey } } });
      const [row] = await api.dataSource.query('SELECT api_key_ciphertext FROM ai_provider_keys WHERE id = $1', [response.body.metadata.id]);
      assert.match(row.api_key_ciphertext, /^v1\./);
      assert.ok(!row.api_key_ciphertext.includes(apiKey));
    });

    it('keeps a valid spec.openrouter.baseUrl and maps AI_PROVIDER_UNSPECIFIED to OpenRouter', async () => {
      const key = await createKey({ provider: 'AI_PROVIDER_UNSPECIFIED', openrouter: { baseUrl: 'http://127.0.0.1:9999/api/v1' } });
      assert.equal(key.spec.provider, 'AI_PROVIDER_OPENROUTER');
      assert.deepEqual(key.spec.openrouter, { baseUrl: 'http://127.0.0.1:9999/api/v1' });
    });

    it('refuses a private base URL unless AGENTRT_ALLOW_PRIVATE_NETWORK, and a metadata endpoint always', async () => {
      const strict = await startTestApi();
      try {
        const account = await strict.bootstrap();
        const path = `/v1/workspaces/${account.workspaceId}/ai_provider_keys`;
        const send = (baseUrl: string) => strict.request('POST', path, { token: account.globalApiKey.token, body: { metadata: { name: 'local' }, spec: { apiKey: canary(), openrouter: { baseUrl } } } });
        assertStatus(await send('http://10.0.0.8/api/v1'), 400, Code.INVALID_ARGUMENT, /^spec\.openrouter\.baseUrl: 10\.0\.0\.8 is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses$/);
        assert.equal((await send('https://models.example.com/api/v1')).status, 200);
      } finally {
        await strict.close();
      }
      const metadata = await call('POST', base, { body: { metadata: { name: 'metadata' }, spec: { apiKey: canary(), openrouter: { baseUrl: 'http://169.254.169.254/latest' } } } });
      assertStatus(metadata, 400, Code.INVALID_ARGUMENT, /cloud metadata endpoint, which is never allowed/);
    });

    for (const [baseUrl, description] of [
      ['not a url', 'must be an absolute http or https URL'],
      ['ftp://models.example.com/', 'must be an absolute http or https URL'],
      ['/relative/path', 'must be an absolute http or https URL'],
      [`https://user:${CANARY}@models.example.com/`, 'must not carry credentials; put the key in spec.apiKey'],
    ]) {
      it(`returns INVALID_ARGUMENT for the base URL "${baseUrl.slice(0, 24)}"`, async () => {
        const response = await call('POST', base, { body: { metadata: { name: 'bad-url' }, spec: { apiKey: canary(), openrouter: { baseUrl } } } });
        assertStatus(response, 400, Code.INVALID_ARGUMENT);
        assert.equal(response.body.message, `spec.openrouter.baseUrl: ${description}`);
      });
    }

    it('returns INVALID_ARGUMENT without spec.apiKey (and no baseUrl), for an empty one, and for an unknown provider', async () => {
      const missing = await call('POST', base, { body: { metadata: { name: 'no-key' }, spec: {} } });
      assertStatus(missing, 400, Code.INVALID_ARGUMENT);
      assert.equal(missing.body.message, 'spec.apiKey: is required unless spec.openrouter.baseUrl names a server of your own (one that needs no key)');
      assert.deepEqual(missing.body.details[0].fieldViolations.map((violation: { field: string }) => violation.field), ['spec.apiKey']);
      for (const spec of [{ apiKey: '' }, { apiKey: '', openrouter: { baseUrl: 'https://llm.example.com/v1' } }]) {
        const empty = await call('POST', base, { body: { metadata: { name: 'empty' }, spec } });
        assertStatus(empty, 400, Code.INVALID_ARGUMENT);
        assert.equal(empty.body.message, 'spec.apiKey: must not be empty; omit spec.apiKey for a server that needs no key', JSON.stringify(spec));
        assert.deepEqual(empty.body.details[0].fieldViolations.map((violation: { field: string }) => violation.field), ['spec.apiKey']);
      }
      const provider = await call('POST', base, { body: { metadata: { name: 'other' }, spec: { apiKey: canary(), provider: 'AI_PROVIDER_ACME' } } });
      assertStatus(provider, 400, Code.INVALID_ARGUMENT);
      assert.equal(provider.body.details[0].fieldViolations[0].field, 'spec.provider');
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without secrets:manage', async () => {
      assertStatus(await call('POST', base, { token: '', body: { metadata: { name: 'x' }, spec: { apiKey: canary() } } }), 401, Code.UNAUTHENTICATED);
      const other = await newKey(api, account, account.workspaceId, ['workspaces:manage', 'agents:manage', 'memory:manage']);
      const response = await call('POST', base, { token: other.token, body: { metadata: { name: 'x' }, spec: { apiKey: canary() } } });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this credential lacks the secrets:manage scope');
    });

    it('returns PERMISSION_DENIED for a workspace key on another workspace, and INVALID_ARGUMENT for a malformed workspace id', async () => {
      const other = await newWorkspace(api, account, 'pk-other');
      const response = await call('POST', `/v1/workspaces/${other}/ai_provider_keys`, { body: { metadata: { name: 'x' }, spec: { apiKey: canary() } } });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this API key belongs to another workspace');
      assertStatus(await call('POST', '/v1/workspaces/nope/ai_provider_keys', { body: { metadata: { name: 'x' }, spec: { apiKey: canary() } } }), 400, Code.INVALID_ARGUMENT);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/ai_provider_keys', () => {
    let workspaceId: string;
    let listBase: string;
    before(async () => {
      workspaceId = await newWorkspace(api, account, 'pk-list');
      listBase = `/v1/workspaces/${workspaceId}/ai_provider_keys`;
      for (const name of ['list-a', 'list-b', 'other-c']) {
        const response = await call('POST', listBase, { token: account.globalToken, body: { metadata: { name }, spec: { apiKey: canary() } } });
        assert.equal(response.status, 200);
      }
    });

    it('lists keys with empty apiKey and without info unless includeInfo=true', async () => {
      const plain = await call('GET', listBase, { token: account.globalToken });
      assert.deepEqual(plain.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['list-a', 'list-b', 'other-c']);
      assert.ok(plain.body.items.every((item: { spec: { apiKey: string }; info?: unknown }) => item.spec.apiKey === '' && item.info === undefined));
      const withInfo = await call('GET', `${listBase}?includeInfo=true&prefix=list-`, { token: account.globalToken });
      assert.equal(withInfo.body.items.length, 2);
      assert.equal(withInfo.body.items[0].info.enabledModelCount, OPENROUTER_MODELS);
    });

    it('pages with limit and cursor', async () => {
      const first = await call('GET', `${listBase}?limit=2`, { token: account.globalToken });
      assert.equal(first.body.items.length, 2);
      const next = await call('GET', `${listBase}?limit=2&cursor=${first.body.pagination.nextCursor}`, { token: account.globalToken });
      assert.deepEqual(next.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['other-c']);
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without secrets:manage', async () => {
      assertStatus(await call('GET', base, { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:read']);
      assertStatus(await call('GET', base, { token: reader.token }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/ai_provider_keys/{id}', () => {
    it('counts the workspace models the provider serves, by status', async () => {
      const key = await createKey();
      const models = await call('GET', '/v1/models?prefix=openai/gpt-4o-mini');
      const modelId = models.body.items[0].metadata.id;
      assert.equal((await call('PUT', `/v1/models/${modelId}/status`, { body: { status: 'MODEL_STATUS_DISABLED' } })).status, 200);
      const response = await call('GET', `${base}/${key.metadata.id}`);
      assert.deepEqual(response.body.info, { enabledModelCount: OPENROUTER_MODELS - 1, disabledModelCount: 1, isPromotional: false });
      await call('PUT', `/v1/models/${modelId}/status`, { body: { status: 'MODEL_STATUS_ENABLED' } });
    });

    it('returns NOT_FOUND for a key of another workspace, even on its own path', async () => {
      const other = await newWorkspace(api, account, 'pk-get-other');
      const foreign = (await call('POST', `/v1/workspaces/${other}/ai_provider_keys`, { token: account.globalToken, body: { metadata: { name: 'foreign' }, spec: { apiKey: canary() } } })).body;
      const response = await call('GET', `${base}/${foreign.metadata.id}`, { token: account.globalToken });
      assertStatus(response, 404, Code.NOT_FOUND);
      assert.equal(response.body.message, `AI provider key ${foreign.metadata.id} not found`);
    });

    it('returns NOT_FOUND for an unknown id and INVALID_ARGUMENT for a malformed one', async () => {
      assertStatus(await call('GET', `${base}/${missingId('aipk')}`), 404, Code.NOT_FOUND);
      const response = await call('GET', `${base}/secret_01ARZ3NDEKTSV4RRFFQ69G5FAV`);
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'id');
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without secrets:manage', async () => {
      const key = await createKey();
      assertStatus(await call('GET', `${base}/${key.metadata.id}`, { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:manage']);
      assertStatus(await call('GET', `${base}/${key.metadata.id}`, { token: reader.token }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('PATCH /v1/workspaces/{workspaceId}/ai_provider_keys/{id}', () => {
    let workspaceId: string;
    let patchBase: string;
    let patchToken: string;
    before(async () => {
      workspaceId = await newWorkspace(api, account, 'pk-patch');
      patchToken = (await newKey(api, account, workspaceId, ['secrets:manage'])).token;
      patchBase = `/v1/workspaces/${workspaceId}/ai_provider_keys`;
    });

    it('replaces the key (encrypted) and the base URL; the runtime sees the new values', async () => {
      const created = await call('POST', patchBase, { token: patchToken, body: { metadata: { name: 'rotating' }, spec: { apiKey: canary() } } });
      const apiKey = canary();
      const response = await call('PATCH', `${patchBase}/${created.body.metadata.id}`, {
        token: patchToken,
        body: { spec: { apiKey, openrouter: { baseUrl: 'https://llm.example.com/v1' } } },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec, { apiKey: '', provider: 'AI_PROVIDER_OPENROUTER', openrouter: { baseUrl: 'https://llm.example.com/v1' } });
      const resolved = await credentials(workspaceId);
      assert.equal(resolved.apiKey, apiKey);
      assert.equal(resolved.baseUrl, 'https://llm.example.com/v1');
    });

    it('restores the default base URL when the mask names spec.openrouter without one, leaving the key alone', async () => {
      const apiKey = canary();
      const created = await call('POST', patchBase, { token: patchToken, body: { metadata: { name: 'reset' }, spec: { apiKey, openrouter: { baseUrl: 'https://x.example.com' } } } });
      const response = await call('PATCH', `${patchBase}/${created.body.metadata.id}`, { token: patchToken, body: { spec: { apiKey: canary() }, updateMask: 'spec.openrouter' } });
      assert.deepEqual(response.body.spec.openrouter, {});
      const resolved = await credentials(workspaceId);
      assert.equal(resolved.keyId, created.body.metadata.id);
      assert.equal(resolved.apiKey, apiKey);
      assert.equal(resolved.baseUrl, OPENROUTER_BASE_URL);
    });

    it('returns INVALID_ARGUMENT for a bad base URL, an unknown mask path, and a mask naming spec.apiKey without one', async () => {
      const created = await call('POST', patchBase, { token: patchToken, body: { metadata: { name: 'invalid' }, spec: { apiKey: canary() } } });
      const path = `${patchBase}/${created.body.metadata.id}`;
      assert.equal((await call('PATCH', path, { token: patchToken, body: { spec: { openrouter: { baseUrl: 'gopher://x' } } } })).body.message, 'spec.openrouter.baseUrl: must be an absolute http or https URL');
      const mask = await call('PATCH', path, { token: patchToken, body: { updateMask: 'spec.token' } });
      assertStatus(mask, 400, Code.INVALID_ARGUMENT);
      assert.match(mask.body.message, /^updateMask: "spec.token" is not an updatable field/);
      const noKey = await call('PATCH', path, { token: patchToken, body: { updateMask: 'spec.apiKey' } });
      assertStatus(noKey, 400, Code.INVALID_ARGUMENT);
      assert.equal(noKey.body.message, 'spec.apiKey: is required unless spec.openrouter.baseUrl names a server of your own (one that needs no key)');
    });

    it('returns ABORTED when If-Match does not match updatedAt', async () => {
      const created = await call('POST', patchBase, { token: patchToken, body: { metadata: { name: 'if-match' }, spec: { apiKey: canary() } } });
      const response = await call('PATCH', `${patchBase}/${created.body.metadata.id}`, { token: patchToken, body: { metadata: { name: 'x' } }, headers: { 'if-match': '2020-01-01T00:00:00Z' } });
      assertStatus(response, 409, Code.ABORTED);
    });

    it('returns NOT_FOUND for another workspace\'s key, 401 without a token, 403 without secrets:manage', async () => {
      const foreign = await createKey();
      assertStatus(await call('PATCH', `${patchBase}/${foreign.metadata.id}`, { token: account.globalToken, body: { metadata: { name: 'x' } } }), 404, Code.NOT_FOUND);
      assertStatus(await call('PATCH', `${base}/${foreign.metadata.id}`, { token: '', body: {} }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:manage']);
      assertStatus(await call('PATCH', `${base}/${foreign.metadata.id}`, { token: reader.token, body: {} }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('promotional keys', () => {
    let workspaceId: string;
    let promoBase: string;
    let promotionalId: string;
    let promotionalKey: string;
    before(async () => {
      workspaceId = await newWorkspace(api, account, 'pk-promo');
      promoBase = `/v1/workspaces/${workspaceId}/ai_provider_keys`;
      promotionalKey = canary();
      const created = await api.services.providerKeys.createPromotional({ id: workspaceId, accountId: account.accountId }, { metadata: { name: 'promo' }, apiKey: promotionalKey });
      promotionalId = created.metadata.id;
    });

    it('are listed with info.isPromotional and an empty apiKey', async () => {
      const response = await call('GET', `${promoBase}/${promotionalId}`, { token: account.globalToken });
      assert.equal(response.body.info.isPromotional, true);
      assert.equal(response.body.spec.apiKey, '');
      assert.equal(response.body.metadata.profileId, '');
    });

    it('refuse update with PERMISSION_DENIED', async () => {
      const response = await call('PATCH', `${promoBase}/${promotionalId}`, { token: account.globalToken, body: { spec: { apiKey: canary() } } });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, `AI provider key ${promotionalId} is promotional: it is provisioned by the service and cannot be modified`);
    });

    it('refuse delete with PERMISSION_DENIED', async () => {
      const response = await call('DELETE', `${promoBase}/${promotionalId}`, { token: account.globalToken });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, `AI provider key ${promotionalId} is promotional: it is provisioned by the service and cannot be deleted`);
      assert.equal((await call('GET', `${promoBase}/${promotionalId}`, { token: account.globalToken })).status, 200);
    });

    it('serve the runtime until the workspace adds its own key, which then wins', async () => {
      assert.equal((await credentials(workspaceId)).apiKey, promotionalKey);
      const own = canary();
      await call('POST', promoBase, { token: account.globalToken, body: { metadata: { name: 'own' }, spec: { apiKey: own } } });
      const resolved = await credentials(workspaceId);
      assert.equal(resolved.apiKey, own);
      assert.equal(resolved.promotional, false);
    });
  });

  describe('keys without spec.apiKey (a model server of your own)', () => {
    let workspaceId: string;
    let keysPath: string;
    const LOCAL = 'http://127.0.0.1:11434/v1';
    before(async () => {
      workspaceId = await newWorkspace(api, account, 'pk-keyless');
      keysPath = `/v1/workspaces/${workspaceId}/ai_provider_keys`;
    });
    const createIn = async (spec: Record<string, unknown>, name: string) => {
      const response = await call('POST', keysPath, { token: account.globalToken, body: { metadata: { name }, spec } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    };

    it('are created with a baseUrl and no apiKey, stored with no ciphertext, and resolve without a key', async () => {
      const key = await createIn({ openrouter: { baseUrl: LOCAL } }, 'ollama');
      assert.deepEqual(key.spec, { apiKey: '', provider: 'AI_PROVIDER_OPENROUTER', openrouter: { baseUrl: LOCAL } });
      const [row] = await api.dataSource.query('SELECT api_key_ciphertext FROM ai_provider_keys WHERE id = $1', [key.metadata.id]);
      assert.equal(row.api_key_ciphertext, null);
      const resolved = await api.services.providerKeys.resolveKeyCredentials(workspaceId, key.metadata.id);
      assert.deepEqual(resolved, { keyId: key.metadata.id, provider: 'AI_PROVIDER_OPENROUTER', baseUrl: LOCAL, promotional: false });
      assert.equal('apiKey' in resolved, false);
    });

    it('lose their apiKey through a mask naming spec.apiKey without one, but only while they keep a baseUrl', async () => {
      const key = await createIn({ apiKey: canary(), openrouter: { baseUrl: LOCAL } }, 'vllm');
      const path = `${keysPath}/${key.metadata.id}`;
      const empty = await call('PATCH', path, { token: account.globalToken, body: { spec: { apiKey: '' } } });
      assertStatus(empty, 400, Code.INVALID_ARGUMENT);
      assert.equal(empty.body.message, 'spec.apiKey: must not be empty; omit spec.apiKey for a server that needs no key');
      const cleared = await call('PATCH', path, { token: account.globalToken, body: { updateMask: 'spec.apiKey' } });
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.equal('apiKey' in (await api.services.providerKeys.resolveKeyCredentials(workspaceId, key.metadata.id)), false);
      const noBaseUrl = await call('PATCH', path, { token: account.globalToken, body: { spec: {}, updateMask: 'spec.openrouter' } });
      assertStatus(noBaseUrl, 400, Code.INVALID_ARGUMENT);
      assert.equal(noBaseUrl.body.message, 'spec.apiKey: is required unless spec.openrouter.baseUrl names a server of your own (one that needs no key)');
      const withKey = await call('PATCH', path, { token: account.globalToken, body: { spec: { apiKey: canary(), openrouter: {} }, updateMask: 'spec.apiKey,spec.openrouter' } });
      assert.equal(withKey.status, 200, JSON.stringify(withKey.body));
      assert.deepEqual(withKey.body.spec.openrouter, {});
    });

    it('are used for catalog models only when no key without workspace models is there', async () => {
      const workspace = await newWorkspace(api, account, 'pk-prefer');
      const path = `/v1/workspaces/${workspace}/ai_provider_keys`;
      const openRouterKey = canary();
      const openRouter = await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'openrouter' }, spec: { apiKey: openRouterKey } } });
      const local = await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'local' }, spec: { openrouter: { baseUrl: LOCAL } } } });
      // The newest key serves catalog models while no workspace model names it.
      assert.equal((await credentials(workspace)).keyId, local.body.metadata.id);
      const model = await call('POST', `/v1/workspaces/${workspace}/models`, {
        token: account.globalToken,
        body: { metadata: { name: 'local/qwen' }, spec: { aiProviderKeyId: local.body.metadata.id, upstreamModel: 'qwen2.5:7b', maxInputTokens: 32768, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' } },
      });
      assert.equal(model.status, 200, JSON.stringify(model.body));
      const resolved = await credentials(workspace);
      assert.equal(resolved.keyId, openRouter.body.metadata.id);
      assert.equal(resolved.apiKey, openRouterKey);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/ai_provider_keys/{id}', () => {
    it('deletes the key', async () => {
      const key = await createKey();
      const response = await call('DELETE', `${base}/${key.metadata.id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      assertStatus(await call('GET', `${base}/${key.metadata.id}`), 404, Code.NOT_FOUND);
    });

    it('returns NOT_FOUND for another workspace\'s key, 401 without a token, 403 without secrets:manage, 400 for a malformed id', async () => {
      const other = await newWorkspace(api, account, 'pk-delete-other');
      const created = await call('POST', `/v1/workspaces/${other}/ai_provider_keys`, { token: account.globalToken, body: { metadata: { name: 'x' }, spec: { apiKey: canary() } } });
      assertStatus(await call('DELETE', `${base}/${created.body.metadata.id}`, { token: account.globalToken }), 404, Code.NOT_FOUND);
      assertStatus(await call('DELETE', `${base}/${created.body.metadata.id}`, { token: '' }), 401, Code.UNAUTHENTICATED);
      const reader = await newKey(api, account, account.workspaceId, ['workspaces:manage']);
      assertStatus(await call('DELETE', `${base}/${created.body.metadata.id}`, { token: reader.token }), 403, Code.PERMISSION_DENIED);
      assertStatus(await call('DELETE', `${base}/aipk_123`), 400, Code.INVALID_ARGUMENT);
    });
  });

  describe('workspace models served through a key', () => {
    it('count for that key only, and keep it from being deleted (FAILED_PRECONDITION naming them)', async () => {
      const workspace = await newWorkspace(api, account, 'pk-serving');
      const path = `/v1/workspaces/${workspace}/ai_provider_keys`;
      const local = (await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'local' }, spec: { openrouter: { baseUrl: 'http://127.0.0.1:8000/v1' } } } })).body;
      const other = (await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'other' }, spec: { apiKey: canary() } } })).body;
      const spec = { aiProviderKeyId: local.metadata.id, upstreamModel: 'm', maxInputTokens: 8192, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' };
      for (const name of ['local/a', 'local/b']) {
        const created = await call('POST', `/v1/workspaces/${workspace}/models`, { token: account.globalToken, body: { metadata: { name }, spec } });
        assert.equal(created.status, 200, JSON.stringify(created.body));
      }
      assert.deepEqual((await call('GET', `${path}/${local.metadata.id}`, { token: account.globalToken })).body.info, { enabledModelCount: OPENROUTER_MODELS + 2, disabledModelCount: 0, isPromotional: false });
      assert.deepEqual((await call('GET', `${path}/${other.metadata.id}`, { token: account.globalToken })).body.info, { enabledModelCount: OPENROUTER_MODELS, disabledModelCount: 0, isPromotional: false });
      const listed = await call('GET', `${path}?includeInfo=true`, { token: account.globalToken });
      assert.deepEqual(listed.body.items.map((key: { info: { enabledModelCount: number } }) => key.info.enabledModelCount), [OPENROUTER_MODELS + 2, OPENROUTER_MODELS]);
      const refused = await call('DELETE', `${path}/${local.metadata.id}`, { token: account.globalToken });
      assertStatus(refused, 400, Code.FAILED_PRECONDITION);
      assert.equal(refused.body.message, `AI provider key ${local.metadata.id} serves the workspace models local/a, local/b; delete them or move them to another key (spec.aiProviderKeyId) first`);
      assert.equal((await call('GET', `${path}/${local.metadata.id}`, { token: account.globalToken })).status, 200);
    });
  });

  describe('resolveProviderCredentials()', () => {
    it('returns the newest own key with the default OpenRouter address', async () => {
      const workspaceId = await newWorkspace(api, account, 'pk-resolve');
      const path = `/v1/workspaces/${workspaceId}/ai_provider_keys`;
      await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'older' }, spec: { apiKey: canary() } } });
      const newest = canary();
      const created = await call('POST', path, { token: account.globalToken, body: { metadata: { name: 'newer' }, spec: { apiKey: newest } } });
      assert.deepEqual(await credentials(workspaceId), {
        keyId: created.body.metadata.id,
        provider: 'AI_PROVIDER_OPENROUTER',
        apiKey: newest,
        baseUrl: OPENROUTER_BASE_URL,
        promotional: false,
      });
    });

    it('fails with FAILED_PRECONDITION when the workspace has no key', async () => {
      const workspaceId = await newWorkspace(api, account, 'pk-none');
      await assert.rejects(credentials(workspaceId), (error: unknown) => {
        assert.ok(error instanceof FailedPreconditionError);
        assert.equal(error.message, `workspace ${workspaceId} has no AI_PROVIDER_OPENROUTER provider key; add one with POST /v1/workspaces/${workspaceId}/ai_provider_keys`);
        return true;
      });
    });
  });

  describe('provider keys', () => {
    it('never appear in a response, a log line or an error message', () => {
      assert.ok(watch.canariesUsed > 20, 'the suite used canary keys');
      assert.ok(api.logs.length > 20, 'the suite produced log lines');
      assert.deepEqual(watch.leaks(api.logs), []);
    });
  });
});
