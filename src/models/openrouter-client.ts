// The OpenRouter chat-completions client (docs/api.md "Model calls"): one
// undici keep-alive pool per provider origin, every connection under the
// outbound URL policy; plain or streamed answers (a streamed answer's text
// handed to the caller's onDelta as it arrives); Retry-After honoured on
// 429 and 503 within a bounded retry budget and never past the deadline; every
// failure a ModelCallError. The provider key lives only in the request's
// Authorization header (none for a key without one: a local server): it is
// never logged and redacted from every message.
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCodeIn, refusalIn } from '../network/error-chain';
import type { UrlPolicyOptions } from '../network/url-policy';
import { DEFAULT_MODEL_CALL_DEADLINE_MS, type ChatCallOptions, type ChatRequest, type ChatResponse } from '../ports/model-provider';
import { ModelCallError, ModelCallErrorType } from './model-call-error';
import { catalogPrices, sumFailedUsage, withFailedAttemptsUsage, type ModelPrices, type PriceLookup } from './model-usage';
import { parseProviderError, parseRetryAfter, providerFailure, redactKey } from './openrouter-errors';
import { ChatStreamAssembler, fromWireCompletion, SseDataReader, toWireRequest, type WireContext } from './openrouter-wire';
import { baseUrlRefused, ProviderPools, type CompletionTarget } from './provider-pools';

/** What a call needs of an AI provider key; ProviderCredentials (src/secrets) is one. */
export interface ProviderCallCredentials {
  /** The plaintext key: sent as the bearer token, never logged, never in a message; absent: no Authorization header. */
  apiKey?: string;
  /** `https://openrouter.ai/api/v1` or the key's `spec.openrouter.baseUrl`. */
  baseUrl: string;
  /** Named in messages that ask the user to fix the key. */
  keyId?: string;
}

/** How one call reaches a workspace model: the id its provider knows it by, and the model's own prices. */
export interface CallRoute {
  /** The `model` of the request body. @default the request's model id */
  upstreamModel?: string;
  /** Prices when the provider reports no cost. @default the client's (the catalog's) for the request's model id */
  prices?: ModelPrices;
}

export interface OpenRouterRetryOptions {
  /** Attempts in all, the first included. @default 4 */
  maxAttempts: number;
  /** Longest total wait between the attempts of one call. @default 30000 */
  budgetMs: number;
  /** Wait after the first failure without Retry-After; doubled per attempt, ±20 % jitter. @default 500 */
  initialDelayMs: number;
  /** Longest wait without Retry-After. @default 8000 */
  maxDelayMs: number;
}

/** Reported before each wait between attempts (for metrics and logs; it carries no key). */
export interface ModelRetryEvent {
  model: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  waitMs: number;
  type: ModelCallErrorType;
  status?: number;
}

export interface OpenRouterClientOptions {
  /** The outbound URL policy (AGENTRT_ALLOW_PRIVATE_NETWORK), applied when connecting. */
  urlPolicy: UrlPolicyOptions;
  /** Ask for streamed answers (SSE). @default true */
  streaming?: boolean;
  retry?: Partial<OpenRouterRetryOptions>;
  /** Prices when the provider reports no cost. @default the catalog's */
  prices?: PriceLookup;
  /** OpenRouter app attribution: `HTTP-Referer` and `X-OpenRouter-Title`. */
  attribution?: { url?: string; title?: string };
  /** Connections per provider origin. @default 32 */
  connectionsPerOrigin?: number;
  /** Origins with a pool at once; the least recently used pool is closed beyond it. @default 64 */
  maxPools?: number;
  onRetry?: (event: ModelRetryEvent) => void;
}

const DEFAULT_RETRY: OpenRouterRetryOptions = { maxAttempts: 4, budgetMs: 30_000, initialDelayMs: 500, maxDelayMs: 8_000 };
/** Largest answer read (a completion, or a whole stream). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Largest error body read; the rest is dropped. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The signals of one call: the caller's, and a timer at the deadline. */
interface CallWatch {
  signal: AbortSignal;
  deadline: number;
  timedOut(): boolean;
  cancelled(): boolean;
  dispose(): void;
}

function watchCall(signal: AbortSignal | undefined, deadline: number): CallWatch {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(new Error('the model call passed its deadline')), Math.max(0, deadline - Date.now()));
  const timedOut = () => timer.signal.aborted || Date.now() >= deadline;
  return {
    signal: signal ? AbortSignal.any([timer.signal, signal]) : timer.signal,
    deadline,
    timedOut,
    cancelled: () => !timedOut() && signal?.aborted === true,
    dispose: () => clearTimeout(handle),
  };
}

type Body = AsyncIterable<Buffer> & { destroy(): unknown };

/** Reads at most `cap` bytes; `over` says whether there was more (the rest is dropped with the connection). */
async function readCapped(body: Body, cap: number): Promise<{ text: string; over: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > cap) {
      body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), over: true };
    }
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), over: false };
}

type DeltaListener = NonNullable<ChatCallOptions['onDelta']>;

/** Hands a piece of streamed text to the caller's listener: whatever it throws stays there, the call goes on. */
function tellDelta(onDelta: DeltaListener, offset: number, text: string): void {
  try {
    onDelta({ offset, text });
  } catch {
    // The listener's trouble (a live feed that is down) must not fail the model call.
  }
}

const isEmptyAnswer = (response: ChatResponse) => !response.content && response.toolCalls.length === 0 && response.finishReason !== 'length';

export class OpenRouterClient {
  private readonly pools: ProviderPools;
  private readonly retry: OpenRouterRetryOptions;
  private readonly prices: PriceLookup;
  private readonly streaming: boolean;

  constructor(private readonly options: OpenRouterClientOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.prices = options.prices ?? catalogPrices();
    this.streaming = options.streaming ?? true;
    this.pools = new ProviderPools(options.urlPolicy, { connectionsPerOrigin: options.connectionsPerOrigin, maxPools: options.maxPools });
  }

  /**
   * Runs one chat completion with the key in `credentials`, retrying what
   * may succeed later (429, 408, 5xx, connection failures, one empty answer)
   * within the retry budget and the deadline. Messages name the request's
   * model id; `route` sends another id upstream and prices with other prices.
   * @throws ModelCallError for every failure, the key redacted from its message
   */
  async complete(credentials: ProviderCallCredentials, request: ChatRequest, options: ChatCallOptions = {}, route: CallRoute = {}): Promise<ChatResponse> {
    const watch = watchCall(options.signal, options.deadline?.getTime() ?? Date.now() + DEFAULT_MODEL_CALL_DEADLINE_MS);
    const prices = route.prices;
    const context: WireContext = {
      model: request.model,
      keyId: credentials.keyId,
      prices: prices ? () => prices : this.prices,
      redact: (text) => redactKey(text, credentials.apiKey ?? ''),
    };
    try {
      if (watch.cancelled()) throw new ModelCallError(ModelCallErrorType.CANCELLED, `the call to model ${request.model} was cancelled`);
      if (watch.timedOut()) throw new ModelCallError(ModelCallErrorType.TIMED_OUT, `no time was left to call model ${request.model} before its deadline`);
      const target = this.pools.completionTarget(credentials.baseUrl);
      const body = JSON.stringify(toWireRequest({ ...request, model: route.upstreamModel ?? request.model }, this.streaming));
      return await this.attempts(target, credentials.apiKey, body, context, watch, options.onDelta);
    } finally {
      watch.dispose();
    }
  }

  /** Closes every pool's keep-alive connections. */
  async close(): Promise<void> {
    await this.pools.close();
  }

  private async attempts(target: CompletionTarget, apiKey: string | undefined, body: string, context: WireContext, watch: CallWatch, onDelta: DeltaListener | undefined): Promise<ChatResponse> {
    let waitedMs = 0;
    let empty: ChatResponse | undefined;
    // What failed attempts reported using: billed, so it joins the answer's usage (or the final error's).
    let failedUsage: ModelCallError['usage'];
    for (let attempt = 1; ; attempt++) {
      let failure: ModelCallError;
      try {
        const response = await this.send(target, apiKey, body, context, watch, onDelta);
        // A success with nothing in it happens on a provider's cold start: worth one more try.
        if (empty || !isEmptyAnswer(response)) return withFailedAttemptsUsage(response, failedUsage);
        empty = response;
        failure = new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `model ${context.model} answered nothing`, { retryable: true });
      } catch (error) {
        failure = this.classify(error, target, context, watch);
        failedUsage = sumFailedUsage(failedUsage, failure.usage);
      }
      const waitMs = this.nextWait(failure, attempt, waitedMs, watch.deadline);
      if (waitMs === undefined) {
        if (empty) return withFailedAttemptsUsage(empty, failedUsage);
        throw failure.withUsage(failedUsage);
      }
      this.options.onRetry?.({ model: context.model, attempt, waitMs, type: failure.type, ...(failure.status !== undefined ? { status: failure.status } : {}) });
      try {
        await sleep(waitMs, undefined, { signal: watch.signal });
      } catch (error) {
        throw this.classify(error, target, context, watch);
      }
      waitedMs += waitMs;
    }
  }

  /** The wait before the next attempt, or undefined when the failure is final. */
  private nextWait(failure: ModelCallError, attempt: number, waitedMs: number, deadline: number): number | undefined {
    if (!failure.retryable || attempt >= this.retry.maxAttempts) return undefined;
    const backoff = Math.min(this.retry.maxDelayMs, this.retry.initialDelayMs * 2 ** (attempt - 1));
    const waitMs = failure.retryAfterMs ?? Math.round(backoff * (0.8 + Math.random() * 0.4));
    // A Retry-After longer than what is left is not cut short: the provider would refuse an earlier call anyway.
    if (waitedMs + waitMs > this.retry.budgetMs || Date.now() + waitMs >= deadline) return undefined;
    return waitMs;
  }

  private async send(target: CompletionTarget, apiKey: string | undefined, body: string, context: WireContext, watch: CallWatch, onDelta: DeltaListener | undefined): Promise<ChatResponse> {
    const response = await target.pool.request({ path: target.path, method: 'POST', headers: this.headers(apiKey), body, signal: watch.signal });
    const headers = response.headers as Record<string, string | string[] | undefined>;
    const responseId = typeof headers['x-generation-id'] === 'string' ? headers['x-generation-id'] : undefined;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const { text } = await readCapped(response.body as unknown as Body, MAX_ERROR_BODY_BYTES);
      const parsed = parseProviderError(text);
      const retryAfterMs = parseRetryAfter(headers);
      throw providerFailure(response.statusCode, { ...parsed, message: context.redact(parsed.message) }, { ...context, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    const contentType = String(headers['content-type'] ?? '');
    // A server may answer plain JSON although a stream was asked for (and the other way round): the content type decides.
    if (contentType.includes('text/event-stream')) return this.readStream(response.body as unknown as Body, context, responseId, onDelta);
    const { text, over } = await readCapped(response.body as unknown as Body, MAX_ANSWER_BYTES);
    if (over) throw new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `model ${context.model} answered more than ${MAX_ANSWER_BYTES} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `the provider of model ${context.model} answered something that is not JSON (content type "${contentType}")`);
    }
    return fromWireCompletion(parsed, context, responseId);
  }

  /** Reads one attempt's stream; each piece of answer text goes to `onDelta` as it arrives, offsets counted from 0 in this attempt. */
  private async readStream(body: Body, context: WireContext, responseId: string | undefined, onDelta: DeltaListener | undefined): Promise<ChatResponse> {
    const decoder = new TextDecoder();
    const reader = new SseDataReader();
    const assembler = new ChatStreamAssembler(context);
    let size = 0;
    let done = false;
    let streamed = 0;
    const take = (events: string[]) => {
      for (const data of events) {
        if (done) return;
        if (data.trim() === '[DONE]') {
          done = true;
          return;
        }
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          throw new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `the provider of model ${context.model} streamed a chunk that is not JSON`);
        }
        const text = assembler.push(chunk);
        if (text && onDelta) {
          tellDelta(onDelta, streamed, text);
          streamed += text.length;
        }
      }
    };
    // Read to the end even after [DONE], so the connection goes back to the pool.
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        body.destroy();
        throw new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `model ${context.model} streamed more than ${MAX_ANSWER_BYTES} bytes`);
      }
      take(reader.push(decoder.decode(chunk, { stream: true })));
    }
    take(reader.push(decoder.decode()));
    take(reader.end());
    if (!done && !assembler.finished) {
      throw new ModelCallError(ModelCallErrorType.PROVIDER_UNAVAILABLE, `the stream of model ${context.model} ended before the answer was complete`, { retryable: true });
    }
    return assembler.result(responseId);
  }

  private headers(apiKey: string | undefined): Record<string, string> {
    const { attribution } = this.options;
    return {
      ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}),
      'content-type': 'application/json',
      accept: this.streaming ? 'text/event-stream' : 'application/json',
      'user-agent': 'agentrt/1.0',
      ...(attribution?.url ? { 'http-referer': attribution.url } : {}),
      ...(attribution?.title ? { 'x-openrouter-title': attribution.title, 'x-title': attribution.title } : {}),
    };
  }

  /** Turns whatever a call threw into a ModelCallError; which signal fired first decides before the error does. */
  private classify(error: unknown, target: CompletionTarget, context: WireContext, watch: CallWatch): ModelCallError {
    if (error instanceof ModelCallError) return error;
    if (watch.timedOut()) return new ModelCallError(ModelCallErrorType.TIMED_OUT, `model ${context.model} did not answer before the call's deadline`);
    if (watch.cancelled()) return new ModelCallError(ModelCallErrorType.CANCELLED, `the call to model ${context.model} was cancelled`);
    const refusal = refusalIn(error);
    if (refusal) return baseUrlRefused(refusal);
    const code = errorCodeIn(error);
    const reason = context.redact(error instanceof Error ? error.message : String(error));
    const why = code && !reason.includes(code) ? `${reason} (${code})` : reason;
    if (code && (RETRYABLE_CODES.has(code) || code === 'ENOTFOUND')) {
      return new ModelCallError(ModelCallErrorType.PROVIDER_UNAVAILABLE, `could not reach the provider of model ${context.model} at ${target.host}: ${why}`, { retryable: code !== 'ENOTFOUND' });
    }
    return new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `the call to model ${context.model} at ${target.host} failed: ${why}`);
  }
}
