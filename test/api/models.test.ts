// Models (spec 4.6): catalog seeding of new workspaces, list filters, status
// changes, the lookup other areas use, and the idempotent start-up reconcile.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createServices } from '../../composition';
import type { Services } from '../../src/ports/services';
import { createDataSource } from '../../persistence/data-source';
import { createModelsStore } from '../../persistence/repositories/models.store';
import { createSecretsStore } from '../../persistence/repositories/secrets.store';
import type { Principal } from '../../src/auth/principal';
import { loadConfig } from '../../src/config';
import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError } from '../../src/errors';
import { MODEL_CATALOG, SCRIPTED_MODEL_ID, type CatalogModel } from '../../src/models/catalog';
import { ModelService } from '../../src/models/model.service';
import { startTestApi, type TestApi } from '../support/api';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';

interface WireModel {
  metadata: { id: string; name: string; workspaceId: string; updatedAt: string };
  spec: Record<string, unknown>;
}

describe('models', () => {
  let api: TestApi;
  let account: TestAccount;
  let reader: string;
  let manager: string;

  async function listAll(token: string, query = ''): Promise<WireModel[]> {
    const response = await api.request('GET', `/v1/models?limit=1000${query}`, { token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.items;
  }

  async function modelNamed(token: string, name: string): Promise<WireModel> {
    const [model] = (await listAll(token, `&prefix=${encodeURIComponent(name)}`)).filter((item) => item.metadata.name === name);
    assert.ok(model, `no model ${name}`);
    return model;
  }

  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
    reader = (await newKey(api, account, account.workspaceId, ['workspaces:read'])).token;
    manager = (await newKey(api, account, account.workspaceId, ['workspaces:manage'])).token;
  });
  after(async () => api.close());

  describe('the catalog', () => {
    it('has at least 20 OpenRouter models plus builtin/scripted, with family/model ids, limits and decimal cent prices', () => {
      assert.ok(MODEL_CATALOG.filter((model) => model.provider === 'openrouter').length >= 20);
      assert.equal(new Set(MODEL_CATALOG.map((model) => model.id)).size, MODEL_CATALOG.length);
      for (const model of MODEL_CATALOG) {
        assert.match(model.id, /^[a-z0-9-]+\/[a-z0-9.:-]+$/, model.id);
        assert.match(model.inputPricePerMillionTokens, /^\d+(\.\d+)?$/, model.id);
        assert.match(model.outputPricePerMillionTokens, /^\d+(\.\d+)?$/, model.id);
        assert.ok(model.maxInputTokens >= 8192 && model.maxOutputTokens >= 4096 && model.maxOutputTokens <= model.maxInputTokens, model.id);
      }
      const mini = MODEL_CATALOG.find((model) => model.id === 'openai/gpt-4o-mini');
      assert.deepEqual([mini?.inputPricePerMillionTokens, mini?.outputPricePerMillionTokens], ['15', '60']);
    });
  });

  describe('GET /v1/models', () => {
    it('lists the whole catalog, ENABLED, in catalog order, for a new account workspace', async () => {
      const models = await listAll(reader);
      assert.deepEqual(models.map((model) => model.metadata.name), MODEL_CATALOG.map((model) => model.id));
      const scripted = models.find((model) => model.metadata.name === SCRIPTED_MODEL_ID)!;
      assert.match(scripted.metadata.id, /^model_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(scripted.metadata.workspaceId, account.workspaceId);
      assert.deepEqual(scripted.spec, {
        family: 'builtin',
        provider: 'builtin',
        inputPricePerMillionTokens: '0',
        outputPricePerMillionTokens: '0',
        maxInputTokens: 1048576,
        maxOutputTokens: 65536,
        status: 'MODEL_STATUS_ENABLED',
        source: 'MODEL_SOURCE_CATALOG',
      });
      const sonnet = models.find((model) => model.metadata.name === 'anthropic/claude-sonnet-4')!;
      assert.deepEqual(sonnet.spec, {
        family: 'anthropic',
        provider: 'openrouter',
        inputPricePerMillionTokens: '300',
        outputPricePerMillionTokens: '1500',
        maxInputTokens: 200000,
        maxOutputTokens: 64000,
        status: 'MODEL_STATUS_ENABLED',
        source: 'MODEL_SOURCE_CATALOG',
      });
    });

    it('seeds a workspace created later through the API too', async () => {
      const workspaceId = await newWorkspace(api, account, 'models-later');
      const token = (await newKey(api, account, workspaceId, ['workspaces:read'])).token;
      const models = await listAll(token);
      assert.equal(models.length, MODEL_CATALOG.length);
      assert.ok(models.every((model) => model.metadata.workspaceId === workspaceId && model.spec.status === 'MODEL_STATUS_ENABLED'));
    });

    it('filters by name prefix', async () => {
      const models = await listAll(reader, '&prefix=anthropic/');
      assert.deepEqual(models.map((model) => model.metadata.name), MODEL_CATALOG.filter((model) => model.id.startsWith('anthropic/')).map((model) => model.id));
    });

    it('filters by status; MODEL_STATUS_UNSPECIFIED lists every status', async () => {
      const model = await modelNamed(manager, 'openai/gpt-4o');
      await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_DISABLED' } });
      assert.deepEqual((await listAll(reader, '&status=MODEL_STATUS_DISABLED')).map((item) => item.metadata.name), ['openai/gpt-4o']);
      assert.equal((await listAll(reader, '&status=MODEL_STATUS_ENABLED')).length, MODEL_CATALOG.length - 1);
      assert.equal((await listAll(reader, '&status=MODEL_STATUS_UNSPECIFIED')).length, MODEL_CATALOG.length);
      await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_ENABLED' } });
    });

    it('returns INVALID_ARGUMENT for an unknown status', async () => {
      const response = await api.request('GET', '/v1/models?status=ON', { token: reader });
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'status');
    });

    it('pages with limit and cursor in either order', async () => {
      const first = await api.request('GET', '/v1/models?limit=2&sortOrder=desc', { token: reader });
      assert.deepEqual(first.body.items.map((item: WireModel) => item.metadata.name), [SCRIPTED_MODEL_ID, MODEL_CATALOG[MODEL_CATALOG.length - 2].id]);
      const next = await api.request('GET', `/v1/models?limit=2&sortOrder=desc&cursor=${first.body.pagination.nextCursor}`, { token: reader });
      assert.equal(next.body.items[0].metadata.name, MODEL_CATALOG[MODEL_CATALOG.length - 3].id);
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without workspaces:read', async () => {
      assertStatus(await api.request('GET', '/v1/models'), 401, Code.UNAUTHENTICATED);
      const other = await newKey(api, account, account.workspaceId, ['secrets:manage', 'agents:manage']);
      const response = await api.request('GET', '/v1/models', { token: other.token });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this credential lacks the workspaces:read scope');
    });
  });

  describe('GET /v1/models/{id}', () => {
    it('returns a model of the workspace', async () => {
      const model = await modelNamed(reader, 'google/gemini-2.5-flash');
      const response = await api.request('GET', `/v1/models/${model.metadata.id}`, { token: reader });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, model);
    });

    it('returns NOT_FOUND for a model of another workspace and for an unknown id', async () => {
      const workspaceId = await newWorkspace(api, account, 'models-other');
      const otherToken = (await newKey(api, account, workspaceId, ['workspaces:read'])).token;
      const foreign = await modelNamed(otherToken, 'openai/gpt-4o-mini');
      const response = await api.request('GET', `/v1/models/${foreign.metadata.id}`, { token: reader });
      assertStatus(response, 404, Code.NOT_FOUND);
      assert.equal(response.body.message, `model ${foreign.metadata.id} not found`);
      assertStatus(await api.request('GET', `/v1/models/${missingId('model')}`, { token: reader }), 404, Code.NOT_FOUND);
    });

    it('returns INVALID_ARGUMENT for a malformed id (a full model name is not an id)', async () => {
      const response = await api.request('GET', '/v1/models/openai%2Fgpt-4o', { token: reader });
      assertStatus(response, 400, Code.INVALID_ARGUMENT);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'id');
    });

    it('returns UNAUTHENTICATED without a token and PERMISSION_DENIED without workspaces:read', async () => {
      const model = await modelNamed(reader, 'openai/gpt-4o-mini');
      assertStatus(await api.request('GET', `/v1/models/${model.metadata.id}`), 401, Code.UNAUTHENTICATED);
      const other = await newKey(api, account, account.workspaceId, ['memory:manage']);
      assertStatus(await api.request('GET', `/v1/models/${model.metadata.id}`, { token: other.token }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('PUT /v1/models/{id}/status', () => {
    it('disables and enables a model', async () => {
      const model = await modelNamed(manager, 'x-ai/grok-4');
      const disabled = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_DISABLED' } });
      assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
      assert.equal(disabled.body.spec.status, 'MODEL_STATUS_DISABLED');
      assert.ok(Date.parse(disabled.body.metadata.updatedAt) >= Date.parse(model.metadata.updatedAt));
      assert.equal((await api.request('GET', `/v1/models/${model.metadata.id}`, { token: reader })).body.spec.status, 'MODEL_STATUS_DISABLED');
      const enabled = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_ENABLED' } });
      assert.equal(enabled.body.spec.status, 'MODEL_STATUS_ENABLED');
    });

    it('returns INVALID_ARGUMENT for MODEL_STATUS_UNSPECIFIED, an unknown status and a missing one', async () => {
      const model = await modelNamed(manager, 'x-ai/grok-4');
      const unspecified = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_UNSPECIFIED' } });
      assertStatus(unspecified, 400, Code.INVALID_ARGUMENT);
      assert.equal(unspecified.body.message, 'status: must be MODEL_STATUS_ENABLED or MODEL_STATUS_DISABLED');
      assertStatus(await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'OFF' } }), 400, Code.INVALID_ARGUMENT);
      const missing = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: {} });
      assertStatus(missing, 400, Code.INVALID_ARGUMENT);
      assert.equal(missing.body.message, 'status: is required');
    });

    it('returns PERMISSION_DENIED with workspaces:read only, UNAUTHENTICATED without a token', async () => {
      const model = await modelNamed(manager, 'x-ai/grok-4');
      const response = await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: reader, body: { status: 'MODEL_STATUS_DISABLED' } });
      assertStatus(response, 403, Code.PERMISSION_DENIED);
      assert.equal(response.body.message, 'this credential lacks the workspaces:manage scope');
      assertStatus(await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { body: { status: 'MODEL_STATUS_DISABLED' } }), 401, Code.UNAUTHENTICATED);
    });

    it('returns NOT_FOUND for a model of another workspace and INVALID_ARGUMENT for a malformed id', async () => {
      const workspaceId = await newWorkspace(api, account, 'models-put-other');
      const otherToken = (await newKey(api, account, workspaceId, ['workspaces:read'])).token;
      const foreign = await modelNamed(otherToken, 'x-ai/grok-4');
      assertStatus(await api.request('PUT', `/v1/models/${foreign.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_DISABLED' } }), 404, Code.NOT_FOUND);
      assert.equal((await api.request('GET', `/v1/models/${foreign.metadata.id}`, { token: otherToken })).body.spec.status, 'MODEL_STATUS_ENABLED');
      assertStatus(await api.request('PUT', '/v1/models/model_x/status', { token: manager, body: { status: 'MODEL_STATUS_DISABLED' } }), 400, Code.INVALID_ARGUMENT);
    });
  });

  describe('model lookup for other areas', () => {
    it('finds a workspace model by full id, and null for an unknown one', async () => {
      const found = await api.services.models.findModel(account.workspaceId, 'openai/gpt-4o-mini');
      assert.equal(found?.name, 'openai/gpt-4o-mini');
      assert.equal(found?.workspaceId, account.workspaceId);
      assert.equal(await api.services.models.findModel(account.workspaceId, 'openai/gpt-0'), null);
    });

    it('requireModel() is INVALID_ARGUMENT naming the field for an unknown model', async () => {
      await assert.rejects(api.services.models.requireModel(account.workspaceId, 'acme/none'), (error: unknown) => {
        assert.ok(error instanceof InvalidArgumentError);
        assert.equal(error.message, 'modelConfig.modelId: "acme/none" is not a model of this workspace (see GET /v1/models)');
        return true;
      });
    });

    it('requireEnabledModel() is FAILED_PRECONDITION for a disabled model', async () => {
      const model = await modelNamed(manager, 'qwen/qwen3-coder');
      await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_DISABLED' } });
      await assert.rejects(api.services.models.requireEnabledModel(account.workspaceId, 'qwen/qwen3-coder'), (error: unknown) => {
        assert.ok(error instanceof FailedPreconditionError);
        assert.equal(error.message, `model qwen/qwen3-coder is disabled in this workspace; enable it with PUT /v1/models/${model.metadata.id}/status`);
        return true;
      });
      await api.request('PUT', `/v1/models/${model.metadata.id}/status`, { token: manager, body: { status: 'MODEL_STATUS_ENABLED' } });
      assert.equal((await api.services.models.requireEnabledModel(account.workspaceId, 'qwen/qwen3-coder')).id, model.metadata.id);
    });
  });

  describe('reconcileCatalog()', () => {
    // Its own database: the reconcile touches every workspace it can see.
    let database: TestDatabase;
    let dataSource: DataSource;
    let services: Services;
    const ADDED: CatalogModel = {
      id: 'acme/next-release-model',
      provider: 'openrouter',
      inputPricePerMillionTokens: '1.5',
      outputPricePerMillionTokens: '2',
      maxInputTokens: 32768,
      maxOutputTokens: 8192,
    };

    before(async () => {
      database = await createTestDatabase();
      dataSource = createDataSource({ url: database.url, poolSize: 2 });
      await dataSource.initialize();
      services = createServices({ dataSource, masterKey: Buffer.alloc(32, 7), config: loadConfig({ DATABASE_URL: database.url }) });
    });
    after(async () => {
      await dataSource.destroy();
      await database.drop();
    });

    const names = async (workspaceId: string): Promise<string[]> =>
      (await dataSource.query('SELECT name FROM models WHERE workspace_id = $1 ORDER BY id', [workspaceId])).map((row: { name: string }) => row.name);

    it('adds nothing when every workspace has the catalog, and restores missing rows', async () => {
      const first = await services.accounts.bootstrap({ accountName: 'one', email: 'one@example.com' });
      assert.equal(await services.models.reconcileCatalog(), 0);
      await dataSource.query("DELETE FROM models WHERE workspace_id = $1 AND name IN ('openai/gpt-4o', 'builtin/scripted')", [first.workspaceId]);
      assert.equal(await services.models.reconcileCatalog(), 2);
      assert.deepEqual([...(await names(first.workspaceId))].sort(), MODEL_CATALOG.map((model) => model.id).sort());
    });

    it('gives existing workspaces the models a later release adds, ENABLED, once, and leaves statuses alone', async () => {
      const second = await services.accounts.bootstrap({ accountName: 'two', email: 'two@example.com' });
      const disabled = await services.models.findModel(second.workspaceId, 'openai/gpt-4o-mini');
      await dataSource.query("UPDATE models SET status = 'MODEL_STATUS_DISABLED' WHERE id = $1", [disabled!.id]);
      const nextRelease = new ModelService(createModelsStore(dataSource), createSecretsStore(dataSource).providerKeys, [...MODEL_CATALOG, ADDED]);
      const workspaces: number = (await dataSource.query('SELECT count(*)::int AS count FROM workspaces'))[0].count;
      assert.equal(await nextRelease.reconcileCatalog(), workspaces);
      assert.equal(await nextRelease.reconcileCatalog(), 0);
      const added = await services.models.findModel(second.workspaceId, ADDED.id);
      assert.equal(added?.status, 'MODEL_STATUS_ENABLED');
      assert.equal(added?.family, 'acme');
      assert.equal(added?.inputPricePerMillionTokens, '1.5');
      assert.equal((await services.models.findModel(second.workspaceId, 'openai/gpt-4o-mini'))?.status, 'MODEL_STATUS_DISABLED');
    });

    it('leaves alone a workspace model that already has the name of a catalog model a later release adds', async () => {
      const fourth = await services.accounts.bootstrap({ accountName: 'four', email: 'four@example.com' });
      const workspace = (await services.store.workspaces.findById(fourth.workspaceId))!;
      const principal = { profileId: fourth.profileId } as Principal;
      const key = await services.providerKeys.create(principal, workspace, { metadata: { name: 'local' }, spec: { openrouter: { baseUrl: 'https://llm.example.com/v1' } } });
      const mine = await services.models.create(principal, workspace, {
        metadata: { name: 'acme/later-model' },
        spec: { aiProviderKeyId: key.metadata.id, upstreamModel: 'mine', maxInputTokens: 4096, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' },
      });
      const later = new ModelService(createModelsStore(dataSource), createSecretsStore(dataSource).providerKeys, [...MODEL_CATALOG, { ...ADDED, id: 'acme/later-model' }]);
      await later.reconcileCatalog();
      const kept = await services.models.findModel(fourth.workspaceId, 'acme/later-model');
      assert.equal(kept?.id, mine.metadata.id);
      assert.equal(kept?.upstreamModel, 'mine');
      assert.equal(kept?.aiProviderKeyId, key.metadata.id);
    });

    it('leaves alone a workspace model whose name differs from a new catalog model\'s in case only, and stops looking for it', async () => {
      const fifth = await services.accounts.bootstrap({ accountName: 'five', email: 'five@example.com' });
      const workspace = (await services.store.workspaces.findById(fifth.workspaceId))!;
      const principal = { profileId: fifth.profileId } as Principal;
      const key = await services.providerKeys.create(principal, workspace, { metadata: { name: 'local' }, spec: { openrouter: { baseUrl: 'https://llm.example.com/v1' } } });
      const mine = await services.models.create(principal, workspace, {
        metadata: { name: 'Acme/Cased-Model' },
        spec: { aiProviderKeyId: key.metadata.id, upstreamModel: 'mine', maxInputTokens: 4096, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' },
      });
      const later = new ModelService(createModelsStore(dataSource), createSecretsStore(dataSource).providerKeys, [...MODEL_CATALOG, { ...ADDED, id: 'acme/cased-model' }]);
      await later.reconcileCatalog();
      assert.equal(await later.reconcileCatalog(), 0, 'the workspace counts as having the model');
      const rows = await dataSource.query('SELECT id FROM models WHERE workspace_id = $1 AND lower(name) = $2', [fifth.workspaceId, 'acme/cased-model']);
      assert.deepEqual(rows, [{ id: mine.metadata.id }]);
    });

    it('keeps two names differing in case only out of one workspace, even when written behind the service\'s back', async () => {
      const sixth = await services.accounts.bootstrap({ accountName: 'six', email: 'six@example.com' });
      const store = createModelsStore(dataSource);
      const [row] = await dataSource.query("SELECT id FROM models WHERE workspace_id = $1 AND name = 'openai/gpt-4o'", [sixth.workspaceId]);
      const original = (await store.findById(row.id))!;
      await assert.rejects(store.insert({ ...original, id: missingId('model'), name: 'OpenAI/GPT-4o' }), (error: unknown) => {
        assert.ok(error instanceof AlreadyExistsError, String(error));
        assert.equal(error.message, 'metadata.name: the workspace already has a model with this name (names are compared ignoring case)');
        return true;
      });
    });

    it('is safe to run concurrently (two nodes starting together)', async () => {
      const third = await services.accounts.bootstrap({ accountName: 'three', email: 'three@example.com' });
      await dataSource.query('DELETE FROM models WHERE workspace_id = $1', [third.workspaceId]);
      const results = await Promise.all([services.models.reconcileCatalog(), services.models.reconcileCatalog(), services.models.reconcileCatalog()]);
      assert.equal(results.reduce((sum, count) => sum + count, 0), MODEL_CATALOG.length);
      assert.equal((await names(third.workspaceId)).length, MODEL_CATALOG.length);
    });
  });
});
