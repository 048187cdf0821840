// The OpenRouter client against a fake OpenRouter (a real node:http server),
// in both answer forms: plain JSON and SSE streams. Request mapping, tool
// calls, usage and cost, Retry-After within the budget and the deadline,
// error mapping, keep-alive reuse, the URL policy, and that the key goes
// out in the Authorization header and nowhere else.
import assert from 'node:assert/strict';
import { ModelCallError, ModelCallErrorType } from '../../src/models/model-call-error';
import { OpenRouterClient, type ModelRetryEvent, type ProviderCallCredentials } from '../../src/models/openrouter-client';
import type { ChatRequest } from '../../src/ports/model-provider';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';

const KEY = 'sk-or-v1-4f7a0c2e9b1d8e6f3a5c7b9d0e2f4a6c';
const KEY_ID = 'aipk_01JTESTKEY0000000000000000';
const MODEL = 'openai/gpt-4o-mini';
const FAST_RETRY = { initialDelayMs: 10, maxDelayMs: 20, budgetMs: 5_000 };

function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: MODEL, messages: [{ role: 'user', content: 'hello' }], tools: [], ...overrides };
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000);

/** The ModelCallError a call fails with; also checks that neither its message nor its status body holds the key. */
async function failureOf(call: Promise<unknown>): Promise<ModelCallError> {
  let caught: unknown;
  try {
    await call;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ModelCallError, `expected a ModelCallError, got ${String(caught)}`);
  assert.ok(!caught.message.includes(KEY), caught.message);
  assert.ok(!JSON.stringify(caught.toStatus()).includes(KEY));
  assert.ok(!caught.message.includes('sk-or-'), caught.message);
  return caught;
}

describe('OpenRouterClient', () => {
  let server: FakeOpenRouter;
  const credentials = (): ProviderCallCredentials => ({ apiKey: KEY, baseUrl: server.baseUrl, keyId: KEY_ID });

  before(async () => {
    server = await startFakeOpenRouter();
  });
  after(async () => server.close());
  beforeEach(() => server.reset());

  for (const streaming of [false, true]) {
    describe(streaming ? 'with streamed answers' : 'with plain answers', () => {
      let client: OpenRouterClient;
      const retries: ModelRetryEvent[] = [];

      before(() => {
        client = new OpenRouterClient({
          urlPolicy: { allowPrivateNetwork: true },
          streaming,
          retry: FAST_RETRY,
          attribution: { url: 'https://agentrt.test', title: 'agentrt tests' },
          onRetry: (event) => retries.push(event),
        });
      });
      after(async () => client.close());
      beforeEach(() => {
        retries.length = 0;
      });

      it('sends the conversation, the tools and the key as an OpenRouter chat completion', async () => {
        const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
        await client.complete(credentials(), chatRequest({
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'weather?' },
            { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
            { role: 'tool', toolCallId: 'call_1', content: 'rain' },
          ],
          tools: [{ name: 'weather', description: 'the weather in a city', parameters }],
          temperature: 0.2,
          maxTokens: 100,
        }), { deadline: inSeconds(10) });
        const [received] = server.requests;
        assert.equal(received.path, '/api/v1/chat/completions');
        assert.equal(received.headers.authorization, `Bearer ${KEY}`);
        assert.equal(received.headers.accept, streaming ? 'text/event-stream' : 'application/json');
        assert.equal(received.headers['http-referer'], 'https://agentrt.test');
        assert.equal(received.headers['x-openrouter-title'], 'agentrt tests');
        assert.deepEqual(received.body, {
          model: MODEL,
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'weather?' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
            { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
          ],
          tools: [{ type: 'function', function: { name: 'weather', description: 'the weather in a city', parameters } }],
          tool_choice: 'auto',
          provider: { require_parameters: true },
          temperature: 0.2,
          max_tokens: 100,
          usage: { include: true },
          ...(streaming ? { stream: true, stream_options: { include_usage: true } } : {}),
        });
      });

      it('sends no tools, tool_choice or provider routing when no tool is offered, and a named tool choice as a function', async () => {
        await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.deepEqual(Object.keys(server.requests[0].body).filter((key) => ['tools', 'tool_choice', 'provider'].includes(key)), []);
        const tools = [{ name: 'lookup', description: 'looks up', parameters: { type: 'object' } }];
        await client.complete(credentials(), chatRequest({ tools, toolChoice: { name: 'lookup' } }), { deadline: inSeconds(10) });
        assert.deepEqual(server.requests[1].body.tool_choice, { type: 'function', function: { name: 'lookup' } });
      });

      it('answers the text with usage and the cost the provider reports, in cents', async () => {
        server.answer(fakeAnswers.completion({ content: 'Hello there, traveller', usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, cost: 0.00123 } }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.deepEqual(response, {
          content: 'Hello there, traveller',
          toolCalls: [],
          finishReason: 'stop',
          usage: { promptTokens: 12, completionTokens: 4, totalTokens: 16, costCents: 0.123, costSource: 'provider' },
          model: MODEL,
          responseId: 'gen-fake-1',
        });
      });

      it('adds the upstream cost of a BYOK call to what OpenRouter charged', async () => {
        server.answer(fakeAnswers.completion({ content: 'x', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, cost: 0.0001, is_byok: true, cost_details: { upstream_inference_cost: 0.002 } } }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.deepEqual(response.usage, { promptTokens: 1, completionTokens: 1, totalTokens: 2, costCents: 0.21, costSource: 'provider' });
      });

      it("prices the usage with the catalog's prices when the provider reports no cost", async () => {
        server.answer(fakeAnswers.completion({ content: 'x', usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        // openai/gpt-4o-mini: 15 and 60 cents per million tokens.
        assert.deepEqual(response.usage, { promptTokens: 1000, completionTokens: 500, totalTokens: 1500, costCents: 0.045, costSource: 'catalog' });
      });

      it('reports cost source none for a model without prices, and no usage when the provider sends none', async () => {
        server.answer(fakeAnswers.completion({ content: 'x', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }), fakeAnswers.completion({ content: 'y', usage: null }));
        const unpriced = await client.complete(credentials(), chatRequest({ model: 'someone/new-model' }), { deadline: inSeconds(10) });
        assert.deepEqual(unpriced.usage, { promptTokens: 3, completionTokens: 2, totalTokens: 5, costCents: 0, costSource: 'none' });
        const bare = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(bare.usage, undefined);
      });

      it('answers parallel tool calls with their ids, names and whole arguments', async () => {
        const toolCalls = [
          { id: 'call_a', name: 'weather', arguments: '{"city":"Oslo","unit":"celsius"}' },
          { id: 'call_b', name: 'time', arguments: '{"zone":"Europe/Oslo"}' },
        ];
        server.answer(fakeAnswers.completion({ content: null, toolCalls }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(response.content, null);
        assert.deepEqual(response.toolCalls, toolCalls);
        assert.equal(response.finishReason, 'tool_calls');
      });

      it('honours Retry-After in seconds on 429, then returns the answer', async () => {
        server.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': '1' } }), fakeAnswers.completion({ content: 'after the wait' }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(response.content, 'after the wait');
        assert.equal(server.requests.length, 2);
        assert.deepEqual(retries, [{ model: MODEL, attempt: 1, waitMs: 1000, type: 'RATE_LIMITED', status: 429 }]);
      });

      it('honours a Retry-After date on 503', async () => {
        const at = new Date(Date.now() + 1500).toUTCString();
        server.answer(fakeAnswers.error(503, 'No available providers', { headers: { 'retry-after': at } }), fakeAnswers.completion({ content: 'back' }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(response.content, 'back');
        assert.equal(retries.length, 1);
        assert.equal(retries[0].type, 'PROVIDER_UNAVAILABLE');
        assert.ok(retries[0].waitMs > 0 && retries[0].waitMs <= 1500, String(retries[0].waitMs));
      });

      it('gives up at once with RATE_LIMITED when Retry-After is beyond the retry budget', async () => {
        server.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': '3600' } }));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.RATE_LIMITED);
        assert.equal(error.code, 'RESOURCE_EXHAUSTED');
        assert.equal(error.retryable, true);
        assert.equal(error.retryAfterMs, 3_600_000);
        assert.equal(error.retryAfterSeconds, 3600);
        assert.equal(error.message, `the provider rate-limited calls to model ${MODEL} (HTTP 429: Rate limit exceeded); retry after 3600 s`);
        assert.equal(server.requests.length, 1);
        assert.deepEqual(retries, []);
      });

      it('does not wait past the deadline for a Retry-After within the budget', async () => {
        server.answer(fakeAnswers.error(429, 'Rate limit exceeded', { headers: { 'retry-after': '3' } }));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(2) }));
        assert.equal(error.type, ModelCallErrorType.RATE_LIMITED);
        assert.equal(server.requests.length, 1);
      });

      it('retries a 502 with backoff, at most maxAttempts times in all', async () => {
        server.answer(...Array.from({ length: 4 }, () => fakeAnswers.error(502, 'upstream is down')));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.PROVIDER_UNAVAILABLE);
        assert.equal(error.message, `the provider of model ${MODEL} is unavailable (HTTP 502: upstream is down)`);
        assert.equal(server.requests.length, 4);
        assert.deepEqual(retries.map((event) => event.attempt), [1, 2, 3]);
      });

      it('maps 401 to PROVIDER_KEY_REFUSED, naming the key id and never the key the provider echoes', async () => {
        server.answer(fakeAnswers.error(401, `Invalid API key: ${KEY} (partially sk-or-v1-4f7a...a6c)`));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.PROVIDER_KEY_REFUSED);
        assert.equal(error.retryable, false);
        assert.equal(error.message, `the provider refused AI provider key ${KEY_ID} (HTTP 401: Invalid API key: [redacted] (partially [redacted])); update the key's spec.apiKey`);
        assert.equal(server.requests.length, 1);
      });

      it('maps 402 to INSUFFICIENT_CREDITS', async () => {
        server.answer(fakeAnswers.error(402, 'Insufficient credits', { metadata: { limit_source: 'openrouter_credits' } }));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.INSUFFICIENT_CREDITS);
      });

      it('maps 403 with moderation reasons to CONTENT_REFUSED', async () => {
        server.answer(fakeAnswers.error(403, 'Input was flagged', { metadata: { reasons: ['violence'], flagged_input: 'x' } }));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.CONTENT_REFUSED);
      });

      it('maps a 400 about the context length to CONTEXT_TOO_LONG, without retrying', async () => {
        server.answer(fakeAnswers.error(400, "This endpoint's maximum context length is 128000 tokens. However, you requested about 190000 tokens."));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.CONTEXT_TOO_LONG);
        assert.equal(error.code, 'OUT_OF_RANGE');
        assert.equal(server.requests.length, 1);
      });

      it('maps 404 "No endpoints found that support tool use" to TOOLS_UNSUPPORTED', async () => {
        server.answer(fakeAnswers.error(404, 'No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing'));
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
        assert.equal(error.type, ModelCallErrorType.TOOLS_UNSUPPORTED);
      });

      it('maps an unknown model (400 "not a valid model ID", or 404) to MODEL_NOT_FOUND', async () => {
        server.answer(fakeAnswers.error(400, 'openai/gpt-9 is not a valid model ID'), fakeAnswers.error(404, 'Not Found'));
        const invalid = await failureOf(client.complete(credentials(), chatRequest({ model: 'openai/gpt-9' }), { deadline: inSeconds(10) }));
        assert.equal(invalid.type, ModelCallErrorType.MODEL_NOT_FOUND);
        const missing = await failureOf(client.complete(credentials(), chatRequest({ model: 'openai/gpt-9' }), { deadline: inSeconds(10) }));
        assert.equal(missing.type, ModelCallErrorType.MODEL_NOT_FOUND);
        assert.equal(missing.message, 'the provider does not serve model openai/gpt-9 (HTTP 404: Not Found); choose another modelConfig.modelId');
      });

      it('ends with TIMED_OUT when no answer comes before the deadline', async () => {
        server.answer(fakeAnswers.hang());
        const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: new Date(Date.now() + 300) }));
        assert.equal(error.type, ModelCallErrorType.TIMED_OUT);
        assert.equal(error.code, 'DEADLINE_EXCEEDED');
      });

      it('ends with CANCELLED when the signal aborts the call', async () => {
        server.answer(fakeAnswers.hang());
        const controller = new AbortController();
        const call = client.complete(credentials(), chatRequest(), { deadline: inSeconds(10), signal: controller.signal });
        await server.arrived(1);
        controller.abort();
        const error = await failureOf(call);
        assert.equal(error.type, ModelCallErrorType.CANCELLED);
      });

      it('retries one empty answer, then returns what comes', async () => {
        server.answer(fakeAnswers.completion({ content: '' }), fakeAnswers.completion({ content: 'warm now' }));
        const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(response.content, 'warm now');
        assert.equal(server.requests.length, 2);
      });

      it('reuses a keep-alive connection for consecutive calls', async () => {
        await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        const before = server.connections();
        await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(server.connections(), before);
      });
    });
  }

  describe('streams', () => {
    let client: OpenRouterClient;
    before(() => {
      client = new OpenRouterClient({ urlPolicy: { allowPrivateNetwork: true }, streaming: true, retry: FAST_RETRY });
    });
    after(async () => client.close());

    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      `data: ${JSON.stringify({ id: 'gen-raw', model: MODEL, choices: [{ index: 0, delta, finish_reason: finishReason }] })}`;

    it('skips comment lines and takes usage from a last chunk without choices', async () => {
      server.answer(fakeAnswers.rawStream([
        ': OPENROUTER PROCESSING',
        chunk({ content: 'Hel' }),
        ': OPENROUTER PROCESSING',
        chunk({ content: 'lo' }, 'stop'),
        `data: ${JSON.stringify({ id: 'gen-raw', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, cost: 0.00002 } })}`,
        'data: [DONE]',
      ]));
      const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
      assert.deepEqual(response, {
        content: 'Hello',
        toolCalls: [],
        finishReason: 'stop',
        usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9, costCents: 0.002, costSource: 'provider' },
        model: MODEL,
        responseId: 'gen-raw',
      });
    });

    it('maps an error event after a 200 (a mid-stream error) and retries it when it may pass', async () => {
      const midStreamError = `data: ${JSON.stringify({ id: 'gen-raw', error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}`;
      server.answer(fakeAnswers.rawStream([chunk({ content: 'partial' }), midStreamError]), fakeAnswers.completion({ content: 'second try' }));
      const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
      assert.equal(response.content, 'second try');
      assert.equal(server.requests.length, 2);
    });

    it('counts the usage a failed attempt reported: in the retried answer, or in the final error', async () => {
      const failedWithUsage = `data: ${JSON.stringify({
        id: 'gen-raw', error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cost: 0.0003 },
      })}`;
      server.answer(fakeAnswers.rawStream([chunk({ content: 'partial' }), failedWithUsage]), fakeAnswers.completion({ content: 'second try', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.0001 } }));
      const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
      assert.equal(response.content, 'second try');
      assert.deepEqual([response.usage?.promptTokens, response.usage?.completionTokens, response.usage?.totalTokens, response.usage?.costCents], [110, 25, 135, 0.04]);

      const attempts = 4; // the client's default
      server.answer(...Array.from({ length: attempts }, () => fakeAnswers.rawStream([failedWithUsage])));
      const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.PROVIDER_UNAVAILABLE);
      assert.deepEqual(error.usage, { promptTokens: 100 * attempts, completionTokens: 20 * attempts, costCents: 0.12 });
    });

    it('maps a mid-stream context error to CONTEXT_TOO_LONG without retrying', async () => {
      server.answer(fakeAnswers.rawStream([`data: ${JSON.stringify({ error: { code: 'context_length_exceeded', message: 'prompt is too long' } })}`]));
      const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.CONTEXT_TOO_LONG);
      assert.equal(server.requests.length, 1);
    });

    it('treats a stream that ends before the answer finished as unavailable, and retries it', async () => {
      server.answer(...Array.from({ length: 4 }, () => fakeAnswers.rawStream([chunk({ content: 'cut off' })])));
      const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.PROVIDER_UNAVAILABLE);
      assert.equal(error.message, `the stream of model ${MODEL} ended before the answer was complete`);
      assert.equal(server.requests.length, 4);
    });

    it('hands each piece of answer text to onDelta as it arrives, with its offset, and never a tool call\'s arguments', async () => {
      server.answer(fakeAnswers.completion({
        content: 'Hello there, world', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"secret-args"}' }],
      }, { chunkChars: 5, chunkDelayMs: 30 }));
      const deltas: Array<{ offset: number; text: string; at: number }> = [];
      const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10), onDelta: (delta) => deltas.push({ ...delta, at: Date.now() }) });
      assert.deepEqual(deltas.map(({ offset, text }) => ({ offset, text })), [
        { offset: 0, text: 'Hello' }, { offset: 5, text: ' ther' }, { offset: 10, text: 'e, wo' }, { offset: 15, text: 'rld' },
      ]);
      assert.equal(deltas.map((delta) => delta.text).join(''), response.content);
      assert.equal(response.toolCalls[0].arguments, '{"q":"secret-args"}');
      // As they arrive, not all at the end: the fake waits 30 ms between chunks.
      assert.ok(deltas[3].at - deltas[0].at >= 60, `deltas came ${deltas.map((delta) => delta.at - deltas[0].at).join(', ')} ms after the first`);
      const [request] = server.requests;
      assert.ok(request.firstContentAt! <= deltas[0].at, 'the fake records when it wrote the first content chunk');
    });

    it('starts onDelta\'s offsets at 0 again when an attempt is retried', async () => {
      const midStreamError = `data: ${JSON.stringify({ id: 'gen-raw', error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}`;
      server.answer(fakeAnswers.rawStream([chunk({ content: 'part' }), chunk({ content: 'ial' }), midStreamError]), fakeAnswers.completion({ content: 'second try' }));
      const deltas: Array<{ offset: number; text: string }> = [];
      const response = await client.complete(credentials(), chatRequest(), { deadline: inSeconds(10), onDelta: (delta) => deltas.push(delta) });
      assert.equal(response.content, 'second try');
      assert.deepEqual(deltas, [
        { offset: 0, text: 'part' }, { offset: 4, text: 'ial' },
        { offset: 0, text: 'sec' }, { offset: 3, text: 'ond' }, { offset: 6, text: ' tr' }, { offset: 9, text: 'y' },
      ]);
    });

    it('answers whatever onDelta throws', async () => {
      server.answer(fakeAnswers.completion({ content: 'still answered' }));
      let calls = 0;
      const response = await client.complete(credentials(), chatRequest(), {
        deadline: inSeconds(10),
        onDelta: () => {
          calls += 1;
          throw new Error('the live feed is down');
        },
      });
      assert.equal(response.content, 'still answered');
      assert.equal(calls, 5, 'every delta was offered, though each threw');
      assert.equal(server.requests.length, 1, 'a throwing listener is no reason to retry');
    });

    it('reads a plain JSON answer from a server that does not stream', async () => {
      const plainServer = new OpenRouterClient({ urlPolicy: { allowPrivateNetwork: true }, streaming: false });
      try {
        server.answer(fakeAnswers.completion({ content: 'plain' }));
        const plain = await plainServer.complete(credentials(), chatRequest(), { deadline: inSeconds(10) });
        assert.equal(plain.content, 'plain');
      } finally {
        await plainServer.close();
      }
    });
  });

  describe('outbound URL policy', () => {
    let client: OpenRouterClient;
    before(() => {
      client = new OpenRouterClient({ urlPolicy: { allowPrivateNetwork: false }, retry: FAST_RETRY });
    });
    after(async () => client.close());

    it('refuses a loopback baseUrl before sending anything', async () => {
      const error = await failureOf(client.complete(credentials(), chatRequest(), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.BASE_URL_REFUSED);
      assert.equal(error.retryable, false);
      assert.equal(server.requests.length, 0);
    });

    it('refuses a name that resolves to loopback when connecting', async () => {
      const baseUrl = server.baseUrl.replace('127.0.0.1', 'localhost');
      const error = await failureOf(client.complete({ ...credentials(), baseUrl }, chatRequest(), { deadline: inSeconds(10) }));
      assert.equal(error.type, ModelCallErrorType.BASE_URL_REFUSED);
      assert.equal(server.requests.length, 0);
    });
  });
});
