// The ModelProvider the objective actor calls, over a real workspace (the API
// on the test database, so provider keys are stored encrypted and decrypted
// by the production service) and the fake OpenRouter: builtin/scripted needs
// no key, catalog models use the workspace's key and baseUrl, a workspace
// model its own key, upstream id and prices, and the key reaches the
// provider's Authorization header and nothing else.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ModelCallError, ModelCallErrorType } from '../../src/models/model-call-error';
import { ModelRouter } from '../../src/models/model-router';
import { OpenRouterClient } from '../../src/models/openrouter-client';
import type { ChatRequest } from '../../src/ports/model-provider';
import { startTestApi, type TestApi } from '../support/api';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { newAccount, newKey, type TestAccount } from '../support/fixtures';

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000);
const chatRequest = (model: string, content = 'hello'): ChatRequest => ({ model, messages: [{ role: 'user', content }], tools: [] });

async function failureOf(call: Promise<unknown>): Promise<ModelCallError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ModelCallError, String(error));
    return error;
  }
  return assert.fail('expected a ModelCallError');
}

describe('ModelRouter', () => {
  let api: TestApi;
  let server: FakeOpenRouter;
  let client: OpenRouterClient;
  let router: ModelRouter;
  let account: TestAccount;
  let token: string;

  before(async () => {
    api = await startTestApi({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    server = await startFakeOpenRouter();
    client = new OpenRouterClient({ urlPolicy: { allowPrivateNetwork: true }, retry: { initialDelayMs: 10, maxDelayMs: 20 } });
    router = new ModelRouter({ credentials: api.services.providerKeys, models: api.services.models, openRouter: client });
  });
  after(async () => {
    await client.close();
    await server.close();
    await api.close();
  });
  beforeEach(async () => {
    server.reset();
    account = await newAccount(api);
    token = (await newKey(api, account, account.workspaceId, ['secrets:manage', 'workspaces:manage'])).token;
  });

  async function addProviderKey(apiKey: string): Promise<string> {
    const response = await api.request('POST', `/v1/workspaces/${account.workspaceId}/ai_provider_keys`, {
      token,
      body: { metadata: { name: 'openrouter' }, spec: { apiKey, openrouter: { baseUrl: server.baseUrl } } },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id as string;
  }

  it('runs builtin/scripted without any provider key', async () => {
    const response = await router.complete(account.workspaceId, chatRequest('builtin/scripted', 'SAY no key needed'), { deadline: inSeconds(10) });
    assert.equal(response.content, 'no key needed');
    assert.equal(server.requests.length, 0);
  });

  it('fails with NO_PROVIDER_KEY when the workspace has no key for an OpenRouter model', async () => {
    const error = await failureOf(router.complete(account.workspaceId, chatRequest('openai/gpt-4o-mini'), { deadline: inSeconds(10) }));
    assert.equal(error.type, ModelCallErrorType.NO_PROVIDER_KEY);
    assert.equal(error.code, 'FAILED_PRECONDITION');
    assert.equal(error.message, `workspace ${account.workspaceId} has no AI_PROVIDER_OPENROUTER provider key; add one with POST /v1/workspaces/${account.workspaceId}/ai_provider_keys`);
  });

  it("calls the key's baseUrl with the decrypted key, and the key appears in no log line", async () => {
    const apiKey = `sk-or-v1-${randomUUID().replace(/-/g, '')}`;
    await addProviderKey(apiKey);
    server.answer(fakeAnswers.completion({ content: 'from the provider' }));
    const response = await router.complete(account.workspaceId, chatRequest('openai/gpt-4o-mini'), { deadline: inSeconds(10) });
    assert.equal(response.content, 'from the provider');
    assert.equal(server.requests[0].headers.authorization, `Bearer ${apiKey}`);
    assert.ok(!JSON.stringify(response).includes(apiKey));
    assert.ok(!api.logs.some((line) => line.includes(apiKey)));
  });

  it('names the refused key in PROVIDER_KEY_REFUSED, without its value', async () => {
    const apiKey = `sk-or-v1-${randomUUID().replace(/-/g, '')}`;
    const keyId = await addProviderKey(apiKey);
    server.answer(fakeAnswers.error(401, `User not found for key ${apiKey}`));
    const error = await failureOf(router.complete(account.workspaceId, chatRequest('openai/gpt-4o-mini'), { deadline: inSeconds(10) }));
    assert.equal(error.type, ModelCallErrorType.PROVIDER_KEY_REFUSED);
    assert.ok(error.message.includes(keyId), error.message);
    assert.ok(!JSON.stringify({ message: error.message, status: error.toStatus() }).includes(apiKey));
  });

  describe('a workspace model', () => {
    async function addModel(spec: Record<string, unknown>): Promise<void> {
      const response = await api.request('POST', `/v1/workspaces/${account.workspaceId}/models`, { token, body: { metadata: { name: 'local/llama' }, spec } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
    }

    it("goes to its key's baseUrl under its upstream id, priced with its prices, with no Authorization header for a key without apiKey", async () => {
      const key = await api.request('POST', `/v1/workspaces/${account.workspaceId}/ai_provider_keys`, { token, body: { metadata: { name: 'local' }, spec: { openrouter: { baseUrl: server.baseUrl } } } });
      await addModel({ aiProviderKeyId: key.body.metadata.id, upstreamModel: 'llama3.2:3b', maxInputTokens: 8192, inputPricePerMillionTokens: '2', outputPricePerMillionTokens: '4' });
      server.answer(fakeAnswers.completion({ content: 'local answer', usage: { prompt_tokens: 1_000_000, completion_tokens: 500_000, total_tokens: 1_500_000 } }));
      const response = await router.complete(account.workspaceId, chatRequest('local/llama'), { deadline: inSeconds(10) });
      assert.equal(response.content, 'local answer');
      assert.deepEqual(response.usage, { promptTokens: 1_000_000, completionTokens: 500_000, totalTokens: 1_500_000, costCents: 4, costSource: 'catalog' });
      assert.equal(server.requests[0].body.model, 'llama3.2:3b');
      assert.equal(server.requests[0].headers.authorization, undefined);
    });

    it('takes the cost the provider reports over its prices', async () => {
      const key = await addProviderKey('sk-or-v1-routed');
      await addModel({ aiProviderKeyId: key, upstreamModel: 'openai/gpt-4o-mini', maxInputTokens: 8192, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' });
      server.answer(fakeAnswers.completion({ content: 'billed', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.002 } }));
      const response = await router.complete(account.workspaceId, chatRequest('local/llama'), { deadline: inSeconds(10) });
      assert.equal(response.usage?.costCents, 0.2);
      assert.equal(response.usage?.costSource, 'provider');
    });

    it('fails with MODEL_NOT_FOUND once the workspace no longer has the model', async () => {
      const error = await failureOf(router.complete(account.workspaceId, chatRequest('local/deleted'), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.MODEL_NOT_FOUND);
      assert.equal(error.message, `model local/deleted is not a model of workspace ${account.workspaceId} (deleted or renamed since the objective started); choose another in the variation's spec.modelConfig.modelId`);
      assert.equal(error.retryable, false);
      assert.equal(server.requests.length, 0);
    });
  });

  it('fails with MODEL_NOT_FOUND for a builtin model that does not exist', async () => {
    const error = await failureOf(router.complete(account.workspaceId, chatRequest('builtin/oracle'), { deadline: inSeconds(10) }));
    assert.equal(error.type, ModelCallErrorType.MODEL_NOT_FOUND);
  });
});
