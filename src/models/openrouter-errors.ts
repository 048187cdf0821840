// How an OpenRouter (or OpenAI-compatible) failure becomes a ModelCallError a
// user can act on: by HTTP status, then by the error body's code and message
// (https://openrouter.ai/docs/api/errors). Also Retry-After, and the key
// redaction every provider text goes through before it enters a message.
import { ModelCallError, ModelCallErrorType } from './model-call-error';

/** An error as a provider describes it: `{error: {code, message, metadata}}`, or plain text. */
export interface ProviderErrorBody {
  message: string;
  code?: string | number;
  metadata?: Record<string, unknown>;
}

export interface FailureContext {
  model: string;
  /** The AI provider key's id, so the message says which key to replace. */
  keyId?: string;
  retryAfterMs?: number;
}

/** Characters of the provider's own message kept in ours. */
const PROVIDER_MESSAGE_CHARS = 300;
const REDACTED = '[redacted]';
// Key-shaped tokens (sk-or-v1-…, masked or partial echoes of one) are removed even when they are not this key.
const KEY_SHAPED = /\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}/g;

const CONTEXT_TOO_LONG = /context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|input is too long|reduce the length|token limit/i;
const TOOLS_UNSUPPORTED = /support(s|ing)? tool|does not support tools|tools? (use |calling )?(is |are )?not supported/i;
const MODEL_UNKNOWN = /not a valid model|no such model|unknown model|invalid model|model[^.]*(not found|does not exist)|model_not_found/i;
const MODERATION = /moderation|flagged/i;

/** `text` without the key (and without anything shaped like a key). */
export function redactKey(text: string, apiKey: string): string {
  const withoutKey = apiKey.length >= 4 ? text.split(apiKey).join(REDACTED) : text;
  return withoutKey.replace(KEY_SHAPED, REDACTED);
}

/** The error a provider sent, from a body that may be JSON of several shapes or plain text. */
export function parseProviderError(text: string): ProviderErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: text.replace(/\s+/g, ' ').trim() };
  }
  const outer = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const error = outer.error;
  if (typeof error === 'string') return { message: error };
  const inner = (typeof error === 'object' && error !== null ? error : outer) as Record<string, unknown>;
  return {
    message: typeof inner.message === 'string' ? inner.message : '',
    ...(typeof inner.code === 'string' || typeof inner.code === 'number' ? { code: inner.code } : {}),
    ...(typeof inner.metadata === 'object' && inner.metadata !== null ? { metadata: inner.metadata as Record<string, unknown> } : {}),
  };
}

/**
 * Milliseconds a `Retry-After` (delay seconds or an HTTP date) or
 * `retry-after-ms` header asks for; undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const first = (name: string) => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim();
  };
  const milliseconds = first('retry-after-ms');
  if (milliseconds && /^\d+(\.\d+)?$/.test(milliseconds)) return Math.ceil(Number(milliseconds));
  const value = first('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function said(status: number, body: ProviderErrorBody): string {
  const message = body.message.length > PROVIDER_MESSAGE_CHARS ? `${body.message.slice(0, PROVIDER_MESSAGE_CHARS)}…` : body.message;
  return `${status ? `HTTP ${status}` : 'provider error'}${message ? `: ${message}` : ''}`;
}

function haystackOf(body: ProviderErrorBody): string {
  const raw = body.metadata?.raw;
  return `${body.code ?? ''} ${body.message} ${typeof raw === 'string' ? raw : raw !== undefined ? JSON.stringify(raw) : ''}`;
}

function isModeration(body: ProviderErrorBody): boolean {
  return body.metadata?.reasons !== undefined || body.metadata?.flagged_input !== undefined || MODERATION.test(body.message);
}

/** A 4xx (or a status-less stream error) told apart by what the provider said. */
function requestFailure(status: number, body: ProviderErrorBody, context: FailureContext): ModelCallError | null {
  const haystack = haystackOf(body);
  const options = status ? { status } : {};
  if (status === 413 || CONTEXT_TOO_LONG.test(haystack)) {
    return new ModelCallError(ModelCallErrorType.CONTEXT_TOO_LONG, `the conversation is longer than model ${context.model} accepts (${said(status, body)}); shorten it or choose a model with a larger context window`, options);
  }
  if (TOOLS_UNSUPPORTED.test(haystack)) {
    return new ModelCallError(ModelCallErrorType.TOOLS_UNSUPPORTED, `no provider of model ${context.model} supports tool calling (${said(status, body)}); choose a model with tool support or remove the agent's tools`, options);
  }
  if (status === 404 || MODEL_UNKNOWN.test(haystack)) {
    return new ModelCallError(ModelCallErrorType.MODEL_NOT_FOUND, `the provider does not serve model ${context.model} (${said(status, body)}); choose another modelConfig.modelId`, options);
  }
  return null;
}

/**
 * The ModelCallError for a provider's failure. `body.message` must already be
 * redacted. Status 0 stands for an error reported inside a 200 (a stream's
 * error event) whose code is not an HTTP status.
 */
export function providerFailure(status: number, body: ProviderErrorBody, context: FailureContext): ModelCallError {
  const key = context.keyId ? ` ${context.keyId}` : '';
  const retry = { status, retryable: true, ...(context.retryAfterMs !== undefined ? { retryAfterMs: context.retryAfterMs } : {}) };
  if (status === 401) {
    return new ModelCallError(ModelCallErrorType.PROVIDER_KEY_REFUSED, `the provider refused AI provider key${key} (${said(status, body)}); update the key's spec.apiKey`, { status });
  }
  if (status === 402) {
    return new ModelCallError(ModelCallErrorType.INSUFFICIENT_CREDITS, `AI provider key${key} has no credits left or reached its limit (${said(status, body)}); add credits or raise the key's limit`, { status });
  }
  if (status === 403) {
    return isModeration(body)
      ? new ModelCallError(ModelCallErrorType.CONTENT_REFUSED, `the provider's moderation refused the conversation (${said(status, body)})`, { status })
      : new ModelCallError(ModelCallErrorType.PROVIDER_KEY_REFUSED, `the provider does not allow AI provider key${key} this call (${said(status, body)}); check the key's permissions`, { status });
  }
  if (status === 429) {
    const wait = context.retryAfterMs !== undefined ? `; retry after ${Math.ceil(context.retryAfterMs / 1000)} s` : '';
    return new ModelCallError(ModelCallErrorType.RATE_LIMITED, `the provider rate-limited calls to model ${context.model} (${said(status, body)})${wait}`, retry);
  }
  if (status === 408 || status === 504) {
    return new ModelCallError(ModelCallErrorType.TIMED_OUT, `model ${context.model} timed out at the provider (${said(status, body)})`, retry);
  }
  if (status >= 500) {
    return new ModelCallError(ModelCallErrorType.PROVIDER_UNAVAILABLE, `the provider of model ${context.model} is unavailable (${said(status, body)})`, retry);
  }
  if ((status >= 400 && status < 500) || status === 0) {
    const failure = requestFailure(status, body, context);
    if (failure) return failure;
    if (status !== 0) return new ModelCallError(ModelCallErrorType.INVALID_REQUEST, `the provider refused the request to model ${context.model} (${said(status, body)})`, { status });
  }
  return new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `model ${context.model} failed at the provider (${said(status, body)})`, status ? { status } : {});
}

/** The HTTP status a stream's or a 200 body's error code stands for (0 when it is not one). */
export function statusOfErrorCode(code: string | number | undefined): number {
  const number = typeof code === 'number' ? code : typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : 0;
  return number >= 400 && number < 600 ? number : 0;
}
