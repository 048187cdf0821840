// Workspace models (api-decisions.md "Extensions", issue 28 item 3): models a
// workspace adds itself, served through one of its AI provider keys under an
// upstream id, listed next to the catalog; create, read, update, delete, the
// validation of each field, name conflicts with the workspace and the catalog,
// catalog models staying read-only, a model a variation uses kept from
// deletion and renaming, and the scopes.
import assert from 'node:assert/strict';
import { MODEL_CATALOG } from '../../src/models/catalog';
import { startTestApi, type ApiResponse, type TestApi } from '../support/api';
import { assertError, createAgent, createVariation, created } from '../support/agents-world';
import { Code, missingId } from '../support/fixtures';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const LOCAL_URL = 'http://127.0.0.1:11434/v1';

describe('workspace models', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let keyId: string;
  let base: string;
  let counter = 0;

  const spec = (overrides: Record<string, unknown> = {}) => ({
    aiProviderKeyId: keyId, upstreamModel: 'qwen2.5:7b', maxInputTokens: 32768, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0', ...overrides,
  });
  const post = (body: unknown, token = ws.token): Promise<ApiResponse> => api.request('POST', base, { token, body });
  /** A new workspace model named `local/m<n>` (or `name`); returns its body. */
  async function addModel(overrides: Record<string, unknown> = {}, name = `local/m${++counter}`): Promise<any> {
    return created(api, ws.token, base, { metadata: { name }, spec: spec(overrides) });
  }
  const catalogModel = async (name: string): Promise<any> => (await api.request('GET', `${base}?limit=1000&prefix=${encodeURIComponent(name)}`, { token: ws.token })).body.items[0];

  before(async () => {
    api = await startTestApi({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    base = `/v1/workspaces/${ws.workspaceId}/models`;
    keyId = (await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, { metadata: { name: 'ollama' }, spec: { openrouter: { baseUrl: LOCAL_URL } } })).metadata.id;
  });
  after(async () => api.close());

  describe('POST /v1/workspaces/{workspaceId}/models', () => {
    it('adds an ENABLED model served through the key, with source MODEL_SOURCE_WORKSPACE and maxOutputTokens defaulting to the window', async () => {
      const model = await addModel({ inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0.5' }, 'ollama/qwen2.5-7b');
      assert.match(model.metadata.id, /^model_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(model.metadata.name, 'ollama/qwen2.5-7b');
      assert.equal(model.metadata.workspaceId, ws.workspaceId);
      assert.notEqual(model.metadata.profileId, '', 'the creator is recorded');
      assert.deepEqual(model.spec, {
        family: 'ollama',
        provider: 'openrouter',
        inputPricePerMillionTokens: '0',
        outputPricePerMillionTokens: '0.5',
        maxInputTokens: 32768,
        maxOutputTokens: 32768,
        status: 'MODEL_STATUS_ENABLED',
        source: 'MODEL_SOURCE_WORKSPACE',
        aiProviderKeyId: keyId,
        upstreamModel: 'qwen2.5:7b',
      });
    });

    it('is listed next to the catalog on both paths, filtered by source, and read by id on both paths', async () => {
      const model = await addModel({ maxOutputTokens: 4096 });
      for (const path of ['/v1/models', base]) {
        const all = (await api.request('GET', `${path}?limit=1000`, { token: ws.token })).body.items as any[];
        assert.deepEqual(all.slice(0, MODEL_CATALOG.length).map((item) => item.metadata.name), MODEL_CATALOG.map((entry) => entry.id), `${path}: the catalog first, in catalog order`);
        assert.ok(all.slice(0, MODEL_CATALOG.length).every((item) => item.spec.source === 'MODEL_SOURCE_CATALOG' && item.spec.aiProviderKeyId === undefined));
        assert.deepEqual(all.find((item) => item.metadata.id === model.metadata.id), model);
        const own = (await api.request('GET', `${path}?limit=1000&source=MODEL_SOURCE_WORKSPACE`, { token: ws.token })).body.items as any[];
        assert.ok(own.length >= 1 && own.every((item) => item.spec.source === 'MODEL_SOURCE_WORKSPACE'), path);
        const catalog = (await api.request('GET', `${path}?limit=1000&source=MODEL_SOURCE_CATALOG`, { token: ws.token })).body.items as any[];
        assert.equal(catalog.length, MODEL_CATALOG.length, path);
      }
      assert.deepEqual((await api.request('GET', `/v1/models/${model.metadata.id}`, { token: ws.token })).body, model);
      assert.deepEqual((await api.request('GET', `${base}/${model.metadata.id}`, { token: ws.token })).body, model);
    });

    it('names the field of every invalid value', async () => {
      const cases: Array<[unknown, string, string | RegExp]> = [
        [{ metadata: { name: 'no-slash' }, spec: spec() }, 'metadata.name', 'metadata.name: "no-slash" is not a family/model id such as "local/qwen2.5-7b" (letters, digits, ".", "_" and "-"; ":" too after the slash)'],
        [{ metadata: { name: 'local/two/slashes' }, spec: spec() }, 'metadata.name', /^metadata\.name: "local\/two\/slashes" is not a family\/model id/],
        [{ metadata: { name: 'builtin/mine' }, spec: spec() }, 'metadata.name', 'metadata.name: the family "builtin" is reserved for the models the service implements itself'],
        [{ metadata: { name: 'local/x' }, spec: spec({ inputPricePerMillionTokens: '-1' }) }, 'spec.inputPricePerMillionTokens', 'spec.inputPricePerMillionTokens: "-1" is not a price in cents per million tokens: a decimal string of at most 9 digits before the point and 9 after it, such as "0", "15" or "3.8"'],
        [{ metadata: { name: 'local/x' }, spec: spec({ outputPricePerMillionTokens: '1e3' }) }, 'spec.outputPricePerMillionTokens', /^spec\.outputPricePerMillionTokens: "1e3" is not a price in cents per million tokens/],
        [{ metadata: { name: 'local/x' }, spec: spec({ inputPricePerMillionTokens: '0.0000000001' }) }, 'spec.inputPricePerMillionTokens', /^spec\.inputPricePerMillionTokens: "0\.0000000001" is not a price .*at most 9 digits before the point and 9 after it/],
        [{ metadata: { name: 'local/x' }, spec: spec({ outputPricePerMillionTokens: '9999999999' }) }, 'spec.outputPricePerMillionTokens', /^spec\.outputPricePerMillionTokens: "9999999999" is not a price .*at most 9 digits before the point and 9 after it/],
        [{ metadata: { name: 'local/x' }, spec: spec({ outputPricePerMillionTokens: 0 }) }, 'spec.outputPricePerMillionTokens', 'spec.outputPricePerMillionTokens: must be of type string'],
        [{ metadata: { name: 'local/x' }, spec: spec({ maxInputTokens: 0 }) }, 'spec.maxInputTokens', /^spec\.maxInputTokens: /],
        [{ metadata: { name: 'local/x' }, spec: spec({ upstreamModel: '' }) }, 'spec.upstreamModel', /^spec\.upstreamModel: /],
        [{ metadata: { name: 'local/x' }, spec: spec({ aiProviderKeyId: 'secret_01ARZ3NDEKTSV4RRFFQ69G5FAV' }) }, 'spec.aiProviderKeyId', /^spec\.aiProviderKeyId: has an invalid format/],
        [{ metadata: { name: 'local/x' }, spec: spec({ aiProviderKeyId: missingId('aipk') }) }, 'spec.aiProviderKeyId',
          `spec.aiProviderKeyId: ${missingId('aipk')} is not an AI provider key of this workspace (see GET /v1/workspaces/{ws}/ai_provider_keys)`],
        [{ metadata: { name: 'local/x' }, spec: { ...spec(), upstreamModel: undefined } }, 'spec.upstreamModel', 'spec.upstreamModel: is required'],
        [{ metadata: { name: 'local/x' }, spec: { ...spec(), maxInputTokens: undefined } }, 'spec.maxInputTokens', 'spec.maxInputTokens: is required'],
        [{ metadata: { name: 'local/x' }, spec: { ...spec(), inputPricePerMillionTokens: undefined } }, 'spec.inputPricePerMillionTokens', 'spec.inputPricePerMillionTokens: is required'],
        [{ metadata: { name: 'local/x' }, spec: spec({ status: 'MODEL_STATUS_DISABLED', temperature: 1 }) }, 'spec.temperature', 'spec.temperature: is not a known field'],
      ];
      for (const [body, field, message] of cases) {
        const response = await post(body);
        const expected = typeof message === 'string' ? message.replace('{ws}', ws.workspaceId) : message;
        assertError(response, 400, Code.INVALID_ARGUMENT, expected);
        assert.equal(response.body.details[0]?.fieldViolations?.[0]?.field, field, JSON.stringify(response.body));
      }
    });

    it('refuses another workspace\'s provider key as if it did not exist', async () => {
      const other = await ws.otherWorkspace();
      const foreignKey = await created(api, other.token, `/v1/workspaces/${other.workspaceId}/ai_provider_keys`, { metadata: { name: 'foreign' }, spec: { openrouter: { baseUrl: LOCAL_URL } } });
      const response = await post({ metadata: { name: 'local/foreign-key' }, spec: spec({ aiProviderKeyId: foreignKey.metadata.id }) });
      assertError(response, 400, Code.INVALID_ARGUMENT, `spec.aiProviderKeyId: ${foreignKey.metadata.id} is not an AI provider key of this workspace (see GET /v1/workspaces/${ws.workspaceId}/ai_provider_keys)`);
    });

    it('returns ALREADY_EXISTS for a name the workspace has, and for a catalog model\'s name, in any case, naming the model that has it', async () => {
      const model = await addModel();
      assertError(await post({ metadata: { name: model.metadata.name }, spec: spec() }), 409, Code.ALREADY_EXISTS,
        `metadata.name: the workspace already has a model named ${model.metadata.name} (${model.metadata.id})`);
      const upper = model.metadata.name.toUpperCase();
      assertError(await post({ metadata: { name: upper }, spec: spec() }), 409, Code.ALREADY_EXISTS,
        `metadata.name: the workspace already has a model named ${model.metadata.name} (${model.metadata.id}) (names are compared ignoring case)`);
      assertError(await post({ metadata: { name: 'openai/gpt-4o-mini' }, spec: spec() }), 409, Code.ALREADY_EXISTS,
        'metadata.name: openai/gpt-4o-mini is a catalog model; give the workspace model a name of its own (such as "local/gpt-4o-mini")');
      assertError(await post({ metadata: { name: 'OPENAI/GPT-4O-MINI' }, spec: spec() }), 409, Code.ALREADY_EXISTS,
        'metadata.name: OPENAI/GPT-4O-MINI is the catalog model openai/gpt-4o-mini (names are compared ignoring case); give the workspace model a name of its own (such as "local/GPT-4O-MINI")');
      const names = ((await api.request('GET', `${base}?limit=1000`, { token: ws.token })).body.items as any[]).map((item) => item.metadata.name.toLowerCase());
      assert.equal(new Set(names).size, names.length, 'no two models of the workspace share a name ignoring case');
      // The same name in another workspace is that workspace's own business.
      const other = await ws.otherWorkspace();
      const otherKey = await created(api, other.token, `/v1/workspaces/${other.workspaceId}/ai_provider_keys`, { metadata: { name: 'k' }, spec: { openrouter: { baseUrl: LOCAL_URL } } });
      await created(api, other.token, `/v1/workspaces/${other.workspaceId}/models`, { metadata: { name: model.metadata.name }, spec: spec({ aiProviderKeyId: otherKey.metadata.id }) });
    });

    it('ignores the read-only fields a client sends back from a read', async () => {
      const response = await post({
        metadata: { name: 'local/echoed', id: 'model_x', workspaceId: 'ws_x' },
        spec: { ...spec(), family: 'other', provider: 'acme', status: 'MODEL_STATUS_DISABLED', source: 'MODEL_SOURCE_CATALOG' },
        info: {},
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.family, 'local');
      assert.equal(response.body.spec.status, 'MODEL_STATUS_ENABLED');
      assert.equal(response.body.spec.source, 'MODEL_SOURCE_WORKSPACE');
    });

    it('needs workspaces:manage, a token, and the key\'s own workspace', async () => {
      const body = { metadata: { name: 'local/scoped' }, spec: spec() };
      assertError(await post(body, ''), 401, Code.UNAUTHENTICATED, /./);
      assertError(await post(body, await ws.keyWith(['workspaces:read', 'secrets:manage'])), 403, Code.PERMISSION_DENIED, 'this credential lacks the workspaces:manage scope');
      const other = await ws.otherWorkspace();
      const response = await api.request('POST', `/v1/workspaces/${other.workspaceId}/models`, { token: ws.token, body });
      assertError(response, 403, Code.PERMISSION_DENIED, /./);
      const created = await post(body, await ws.keyWith(['workspaces:manage']));
      assert.equal(created.status, 200, JSON.stringify(created.body));
    });

    it('accepts Idempotency-Key: a repeat answers the first model', async () => {
      const body = { metadata: { name: 'local/idempotent' }, spec: spec() };
      const headers = { 'idempotency-key': `models-${Date.now()}` };
      const first = await api.request('POST', base, { token: ws.token, body, headers });
      const second = await api.request('POST', base, { token: ws.token, body, headers });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(second.body, first.body);
    });
  });

  describe('GET', () => {
    it('returns NOT_FOUND for another workspace\'s model, INVALID_ARGUMENT for a malformed id, and needs workspaces:read', async () => {
      const other = await ws.otherWorkspace();
      const otherKey = await created(api, other.token, `/v1/workspaces/${other.workspaceId}/ai_provider_keys`, { metadata: { name: 'k' }, spec: { openrouter: { baseUrl: LOCAL_URL } } });
      const foreign = await created(api, other.token, `/v1/workspaces/${other.workspaceId}/models`, { metadata: { name: 'local/foreign' }, spec: spec({ aiProviderKeyId: otherKey.metadata.id }) });
      assertError(await api.request('GET', `${base}/${foreign.metadata.id}`, { token: ws.token }), 404, Code.NOT_FOUND, `model ${foreign.metadata.id} not found`);
      assertError(await api.request('GET', `/v1/models/${foreign.metadata.id}`, { token: ws.token }), 404, Code.NOT_FOUND, `model ${foreign.metadata.id} not found`);
      assertError(await api.request('GET', `${base}/local%2Fforeign`, { token: ws.token }), 400, Code.INVALID_ARGUMENT, /^id: /);
      const model = await addModel();
      assertError(await api.request('GET', `${base}/${model.metadata.id}`), 401, Code.UNAUTHENTICATED, /./);
      assertError(await api.request('GET', `${base}/${model.metadata.id}`, { token: await ws.keyWith(['agents:manage']) }), 403, Code.PERMISSION_DENIED, 'this credential lacks the workspaces:read scope');
      assert.equal((await api.request('GET', `${base}/${model.metadata.id}`, { token: await ws.keyWith(['workspaces:read']) })).status, 200);
    });
  });

  describe('PATCH /v1/workspaces/{workspaceId}/models/{id}', () => {
    it('changes the upstream id, the limits, the prices, the key and the name; If-Match guards the version', async () => {
      const model = await addModel();
      const secondKey = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, { metadata: { name: 'vllm' }, spec: { apiKey: 'sk-local-vllm', openrouter: { baseUrl: 'http://127.0.0.1:8000/v1' } } });
      const path = `${base}/${model.metadata.id}`;
      const stale = await api.request('PATCH', path, { token: ws.token, body: { spec: { upstreamModel: 'x' } }, headers: { 'if-match': '2020-01-01T00:00:00Z' } });
      assertError(stale, 409, Code.ABORTED, /^the resource was modified/);
      const response = await api.request('PATCH', path, {
        token: ws.token,
        headers: { 'if-match': model.metadata.updatedAt },
        body: {
          metadata: { name: 'vllm/qwen-renamed', labels: { tier: 'local' } },
          spec: { aiProviderKeyId: secondKey.metadata.id, upstreamModel: 'Qwen/Qwen2.5-7B-Instruct', maxInputTokens: 8192, maxOutputTokens: 2048, inputPricePerMillionTokens: '1.5', outputPricePerMillionTokens: '3' },
        },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.name, 'vllm/qwen-renamed');
      assert.deepEqual(response.body.metadata.labels, { tier: 'local' });
      assert.deepEqual(response.body.spec, {
        family: 'vllm', provider: 'openrouter', inputPricePerMillionTokens: '1.5', outputPricePerMillionTokens: '3', maxInputTokens: 8192, maxOutputTokens: 2048,
        status: 'MODEL_STATUS_ENABLED', source: 'MODEL_SOURCE_WORKSPACE', aiProviderKeyId: secondKey.metadata.id, upstreamModel: 'Qwen/Qwen2.5-7B-Instruct',
      });
      assert.deepEqual((await api.request('GET', path, { token: ws.token })).body, response.body);
      const masked = await api.request('PATCH', path, { token: ws.token, body: { spec: { upstreamModel: 'ignored', maxInputTokens: 4096 }, updateMask: 'spec.maxInputTokens' } });
      assert.equal(masked.body.spec.upstreamModel, 'Qwen/Qwen2.5-7B-Instruct');
      assert.equal(masked.body.spec.maxInputTokens, 4096);
    });

    it('names the field of every invalid change', async () => {
      const model = await addModel();
      const path = `${base}/${model.metadata.id}`;
      const patch = (body: unknown) => api.request('PATCH', path, { token: ws.token, body });
      assertError(await patch({ spec: { inputPricePerMillionTokens: 'free' } }), 400, Code.INVALID_ARGUMENT, /^spec\.inputPricePerMillionTokens: "free" is not a price in cents per million tokens/);
      assertError(await patch({ spec: { aiProviderKeyId: missingId('aipk') } }), 400, Code.INVALID_ARGUMENT, /^spec\.aiProviderKeyId: aipk_\w+ is not an AI provider key of this workspace/);
      assertError(await patch({ metadata: { name: 'flat' } }), 400, Code.INVALID_ARGUMENT, /^metadata\.name: "flat" is not a family\/model id/);
      assertError(await patch({ updateMask: 'spec.upstreamModel' }), 400, Code.INVALID_ARGUMENT, 'spec.upstreamModel: is required when the update names it');
      assertError(await patch({ updateMask: 'metadata.name' }), 400, Code.INVALID_ARGUMENT, 'metadata.name: is required when the update names it');
      assertError(await patch({ updateMask: 'spec.status' }), 400, Code.INVALID_ARGUMENT, /^updateMask: "spec.status" is not an updatable field/);
      assertError(await patch({ metadata: { name: 'anthropic/claude-sonnet-4' } }), 409, Code.ALREADY_EXISTS, /^metadata\.name: anthropic\/claude-sonnet-4 is a catalog model/);
      assertError(await patch({ metadata: { name: 'Anthropic/Claude-Sonnet-4' } }), 409, Code.ALREADY_EXISTS, /^metadata\.name: Anthropic\/Claude-Sonnet-4 is the catalog model anthropic\/claude-sonnet-4 \(names are compared ignoring case\)/);
      const taken = await addModel();
      assertError(await patch({ metadata: { name: taken.metadata.name } }), 409, Code.ALREADY_EXISTS, `metadata.name: the workspace already has a model named ${taken.metadata.name} (${taken.metadata.id})`);
      assertError(await patch({ metadata: { name: taken.metadata.name.toUpperCase() } }), 409, Code.ALREADY_EXISTS,
        `metadata.name: the workspace already has a model named ${taken.metadata.name} (${taken.metadata.id}) (names are compared ignoring case)`);
      assert.equal((await api.request('GET', path, { token: ws.token })).body.metadata.name, model.metadata.name);
      const recased = await patch({ metadata: { name: model.metadata.name.toUpperCase() } });
      assert.equal(recased.status, 200, 'a model may change the case of its own name');
      assert.equal(recased.body.metadata.name, model.metadata.name.toUpperCase());
    });

    it('refuses a catalog model with PERMISSION_DENIED', async () => {
      const catalog = await catalogModel('openai/gpt-4o-mini');
      const response = await api.request('PATCH', `${base}/${catalog.metadata.id}`, { token: ws.token, body: { spec: { inputPricePerMillionTokens: '0' } } });
      assertError(response, 403, Code.PERMISSION_DENIED,
        `model openai/gpt-4o-mini is a catalog model: it ships with the service and cannot be changed (PUT /v1/models/${catalog.metadata.id}/status enables or disables it)`);
      assert.equal((await catalogModel('openai/gpt-4o-mini')).spec.inputPricePerMillionTokens, '15');
    });

    it('refuses renaming a model a variation uses (FAILED_PRECONDITION naming it), and allows its other changes', async () => {
      const model = await addModel();
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `renamer-${counter}` } });
      const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'on-local' }, spec: { prompt: 'p', modelConfig: { modelId: model.metadata.name } } });
      const path = `${base}/${model.metadata.id}`;
      assertError(await api.request('PATCH', path, { token: ws.token, body: { metadata: { name: 'local/renamed-in-use' } } }), 400, Code.FAILED_PRECONDITION,
        `model ${model.metadata.name} cannot be renamed while variation "on-local" (${variation.metadata.id}) of agent ${agent.metadata.id} uses it; point their spec.modelConfig.modelId at another model first`);
      const changed = await api.request('PATCH', path, { token: ws.token, body: { metadata: { name: model.metadata.name }, spec: { upstreamModel: 'qwen3:8b' } } });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(changed.body.spec.upstreamModel, 'qwen3:8b');
    });

    it('returns NOT_FOUND for another workspace\'s model and needs workspaces:manage', async () => {
      const model = await addModel();
      const other = await ws.otherWorkspace();
      assertError(await api.request('PATCH', `/v1/workspaces/${other.workspaceId}/models/${model.metadata.id}`, { token: other.token, body: { spec: { upstreamModel: 'x' } } }), 404, Code.NOT_FOUND, `model ${model.metadata.id} not found`);
      assertError(await api.request('PATCH', `${base}/${model.metadata.id}`, { token: await ws.keyWith(['workspaces:read']), body: {} }), 403, Code.PERMISSION_DENIED, 'this credential lacks the workspaces:manage scope');
    });
  });

  describe('PUT /v1/models/{id}/status', () => {
    it('disables a workspace model: objectives on it are refused at creation', async () => {
      const model = await addModel();
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `disabled-${counter}` } });
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'p', modelConfig: { modelId: model.metadata.name } } });
      const disabled = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: ws.token, body: { status: 'MODEL_STATUS_DISABLED' } });
      assert.equal(disabled.body.spec.status, 'MODEL_STATUS_DISABLED');
      const objective = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, { token: ws.token, body: { agentId: agent.metadata.id, initialMessage: 'hi' } });
      assertError(objective, 400, Code.FAILED_PRECONDITION, `model ${model.metadata.name} is DISABLED in this workspace`);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/models/{id}', () => {
    it('deletes a workspace model: gone from reads, its name free again', async () => {
      const model = await addModel();
      const response = await api.request('DELETE', `${base}/${model.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body, {});
      assertError(await api.request('GET', `/v1/models/${model.metadata.id}`, { token: ws.token }), 404, Code.NOT_FOUND, `model ${model.metadata.id} not found`);
      await addModel({}, model.metadata.name);
    });

    it('refuses while variations use it, naming them; once they use another model it goes', async () => {
      const model = await addModel();
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: `deleter-${counter}` } });
      const first = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'a' }, spec: { prompt: 'p', modelConfig: { modelId: model.metadata.name } } });
      const second = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { metadata: { name: 'b' }, spec: { prompt: 'p', modelConfig: { modelId: model.metadata.name } } });
      const path = `${base}/${model.metadata.id}`;
      assertError(await api.request('DELETE', path, { token: ws.token }), 400, Code.FAILED_PRECONDITION,
        `model ${model.metadata.name} cannot be deleted while variation "a" (${first.metadata.id}) of agent ${agent.metadata.id}, variation "b" (${second.metadata.id}) of agent ${agent.metadata.id} use it; point their spec.modelConfig.modelId at another model first`);
      for (const variation of [first, second]) {
        const moved = await api.request('PATCH', `/v1/workspaces/${ws.workspaceId}/agents/${agent.metadata.id}/variations/${variation.metadata.id}`, { token: ws.token, body: { spec: { modelConfig: { modelId: 'builtin/scripted' } } } });
        assert.equal(moved.status, 200, JSON.stringify(moved.body));
      }
      assert.equal((await api.request('DELETE', path, { token: ws.token })).status, 200);
    });

    it('refuses a catalog model with PERMISSION_DENIED', async () => {
      const catalog = await catalogModel('builtin/scripted');
      assertError(await api.request('DELETE', `${base}/${catalog.metadata.id}`, { token: ws.token }), 403, Code.PERMISSION_DENIED,
        `model builtin/scripted is a catalog model: it ships with the service and cannot be deleted (PUT /v1/models/${catalog.metadata.id}/status enables or disables it)`);
    });

    it('returns NOT_FOUND for another workspace\'s model and an unknown id, and needs workspaces:manage', async () => {
      const model = await addModel();
      const other = await ws.otherWorkspace();
      assertError(await api.request('DELETE', `/v1/workspaces/${other.workspaceId}/models/${model.metadata.id}`, { token: other.token }), 404, Code.NOT_FOUND, `model ${model.metadata.id} not found`);
      assertError(await api.request('DELETE', `${base}/${missingId('model')}`, { token: ws.token }), 404, Code.NOT_FOUND, /not found$/);
      assertError(await api.request('DELETE', `${base}/${model.metadata.id}`, { token: await ws.keyWith(['workspaces:read']) }), 403, Code.PERMISSION_DENIED, 'this credential lacks the workspaces:manage scope');
      assert.equal((await api.request('GET', `${base}/${model.metadata.id}`, { token: ws.token })).status, 200);
    });
  });
});
