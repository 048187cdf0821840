// A local model end to end (issue 28 item 3), as docs/api.md walks it: an AI
// provider key with a baseUrl and no apiKey, a workspace model on it, an
// agent whose variation uses it, an objective answered by an OpenAI-compatible
// server (the fake, a real HTTP server) reached through that baseUrl. The
// server receives the upstream model id and no Authorization header; the
// objective costs 0 and its tokens count in its usage and the usage report.
// A priced workspace model is costed with its own prices and its budget
// (maxCostCents) holds. The key and the model are written through a second
// API node on the same database: every node reads them at each call, so a
// model added or changed on one node serves objectives on another. Runs on
// the embedded runtime and in cluster mode over NATS.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createVariation } from '../support/agents-world';
import { eventuallyValue } from '../support/eventually';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { runObjective } from '../support/objective-runs';
import { RUNTIME_MODES } from '../support/runtime-modes';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const MODEL = 'local/qwen2.5-7b';
const UPSTREAM = 'qwen2.5:7b';

for (const mode of RUNTIME_MODES) {
  describe(`a local model end to end (${mode.name})`, function () {
    this.timeout(60_000);
    let api: TestApi;
    let peer: TestApi;
    let ws: WorkspaceFixture;
    let server: FakeOpenRouter;
    /** The fake's address as a local server's would read: `http://127.0.0.1:<port>/v1`. */
    let localUrl: string;
    let modelId: string;

    const base = () => `/v1/workspaces/${ws.workspaceId}`;
    /** An agent of its own whose one variation runs on `model`, with `constraints` if given. */
    async function agentOn(name: string, model: string, constraints?: Record<string, unknown>): Promise<string> {
      const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } });
      await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You help.', modelConfig: { modelId: model }, ...(constraints ? { constraints } : {}) } });
      return agent.metadata.id as string;
    }

    before(async () => {
      server = await startFakeOpenRouter();
      localUrl = server.baseUrl.replace(/\/api\/v1$/, '/v1');
      const env = { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1' };
      api = await mode.start({ env });
      // Another node of the same deployment: the same database, an API without an actor runtime.
      peer = await startTestApi({ env });
      ws = await workspaceFixture(api);
      const key = await created(peer, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'ollama' }, spec: { openrouter: { baseUrl: localUrl } } });
      const model = await created(peer, ws.token, `${base()}/models`, {
        metadata: { name: MODEL },
        spec: { aiProviderKeyId: key.metadata.id, upstreamModel: UPSTREAM, maxInputTokens: 32768, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' },
      });
      modelId = model.metadata.id;
    });

    afterEach(() => server.reset());

    after(async () => {
      await peer?.close();
      await api?.close();
      await server?.close();
    });

    it('answers an objective through the keyless key: the upstream id, no Authorization header, cost 0, the tokens counted', async () => {
      const agentId = await agentOn('local-helper', MODEL);
      server.answer(fakeAnswers.completion({ content: 'Hello from a local model.', usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }));
      const run = await runObjective(api, ws, { agentId, initialMessage: 'Say hello.' });
      assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
      assert.equal(run.of('ASSISTANT_MESSAGE')[0].data.assistantMessage.content, 'Hello from a local model.');

      assert.equal(server.requests.length, 1);
      const [request] = server.requests;
      assert.equal(request.path, '/v1/chat/completions');
      assert.equal(request.body.model, UPSTREAM, 'the provider receives the upstream model id');
      assert.equal(request.headers.authorization, undefined, 'a key without apiKey sends no Authorization header');
      assert.deepEqual((request.body.messages as any[]).at(-1), { role: 'user', content: 'Say hello.' });

      assert.deepEqual(run.objective.info.usage, { promptTokens: 12, completionTokens: 7, costCents: 0 });
      const report = await eventuallyValue(async () => {
        const response = await api.request('GET', `${base()}/usage?groupBy=model`, { token: ws.token });
        return (response.body.items as any[] | undefined)?.find((item) => item.key === MODEL);
      }, 'the usage report counts the local model');
      assert.deepEqual(report, { key: MODEL, promptTokens: 12, completionTokens: 7, costCents: 0, objectiveCount: 1 });
    });

    it('follows a change made on the other node at the next call: the new upstream id, the new prices, the budget on them', async () => {
      const changed = await peer.request('PATCH', `${base()}/models/${modelId}`, {
        token: ws.token,
        body: { spec: { upstreamModel: 'qwen3:8b', inputPricePerMillionTokens: '100', outputPricePerMillionTokens: '300' } },
      });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      const agentId = await agentOn('priced-local', MODEL, { maxCostCents: 0.2 });
      // Each answer calls a tool the agent does not have: the model is asked again, until the budget stops it.
      server.fallback(fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'nothing', arguments: '{}' }], usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
      const run = await runObjective(api, ws, { agentId, initialMessage: 'Loop.' });
      assert.equal(server.requests[0].body.model, 'qwen3:8b');
      // 1000 x 100 + 500 x 300 cents per million tokens: 0.25 cents a call; the first call passes the 0.2 budget.
      assert.equal(server.requests.length, 1);
      assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_FAILED', JSON.stringify(run.objective.info));
      assert.deepEqual(run.objective.info.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxCostCents (0.25 cents spent; the limit is 0.2)' });
      assert.deepEqual(run.objective.info.usage, { promptTokens: 1000, completionTokens: 500, costCents: 0.25 });
    });

    it('sends a key\'s apiKey as the bearer token when it has one', async () => {
      const key = await created(peer, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'vllm' }, spec: { apiKey: 'sk-local-vllm-token', openrouter: { baseUrl: localUrl } } });
      await created(peer, ws.token, `${base()}/models`, {
        metadata: { name: 'vllm/llama-3.1-8b' },
        spec: { aiProviderKeyId: key.metadata.id, upstreamModel: 'meta-llama/Llama-3.1-8B-Instruct', maxInputTokens: 8192, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' },
      });
      const run = await runObjective(api, ws, { agentId: await agentOn('vllm-helper', 'vllm/llama-3.1-8b'), initialMessage: 'Hi.' });
      assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
      assert.equal(server.requests[0].headers.authorization, 'Bearer sk-local-vllm-token');
      assert.equal(server.requests[0].body.model, 'meta-llama/Llama-3.1-8B-Instruct');
    });
  });
}
