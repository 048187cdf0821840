// One webhook delivery attempt on the wire (api-decisions.md "Webhooks"): a
// signed POST over one keep-alive pool whose sockets pass the URL policy at
// connect time, redirects never followed, and every way it ends turned into a
// WebhookAttemptOutcome. It decides nothing about retries and keeps no state
// beyond the pool; its messages name the host at most, never the URL or a secret.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { errorCodeIn, refusalIn } from '../network/error-chain';
import { CONNECT_TIMEOUT_CAP_MS, guardedConnector } from '../network/guarded-fetch';
import type { UrlPolicyOptions } from '../network/url-policy';
import { traceHeaders } from '../tracing/tracing';
import { parseRetryAfter } from './webhook-retry-schedule';
import { webhookHeaders } from './webhook-signature';

/** Success is a 2xx within this time (Standard Webhooks recommends 15 to 30 s). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;
/** Response headers kept on a delivery, names and values counted in UTF-8 bytes. */
export const WEBHOOK_RESPONSE_HEADERS_MAX_BYTES = 8 * 1024;
const USER_AGENT = 'agentrt-webhooks/1.0';

export interface WebhookSenderOptions {
  /** The outbound URL policy (AGENTRT_ALLOW_PRIVATE_NETWORK), applied to every socket at connect time. */
  urlPolicy: UrlPolicyOptions;
  /** The whole attempt: connect, answer and the drained body. @default DEFAULT_WEBHOOK_TIMEOUT_MS */
  timeoutMs?: number;
}

export interface WebhookAttemptRequest {
  /** The agent's webhook URL. It may carry a token, so no message repeats it. */
  url: string;
  /** The delivery id (`webhook-id`), the same on every attempt. */
  id: string;
  /** The event envelope as JSON: these exact bytes are signed and sent. */
  body: string;
  /** Signing secrets, current first (see signWebhook). */
  secrets: readonly string[];
  /** Aborting it (the actor cancelled, the node stops) rejects `send` with its reason. */
  signal?: AbortSignal;
  /** The clock for `webhook-timestamp` and Retry-After dates. @default () => new Date() */
  now?: () => Date;
}

export interface WebhookAttemptOutcome {
  /** The receiver answered 2xx. */
  ok: boolean;
  /** 0 when no response came (network error, time-out, refused address). */
  httpStatusCode: number;
  latencyMs: number;
  /** Bytes of the response body (read and dropped); null without a response or when it could not be read to the end. */
  responseContentLength: number | null;
  /** Lower-case names; whole headers beyond WEBHOOK_RESPONSE_HEADERS_MAX_BYTES are dropped. */
  responseHeaders: Record<string, string> | null;
  /** The receiver's Retry-After in ms, on a 429 or 503 that carries a readable one. */
  retryAfterMs?: number;
  /** The receiver answered 410 Gone: the endpoint is to be disabled. */
  gone: boolean;
  /** Why the attempt failed, for people ("HTTP 500", "connection refused", "timed out after 15000 ms"…). */
  errorMessage?: string;
  /**
   * True when the receiver was never reached: the URL policy refused its
   * address, DNS failed, the connection was refused or timed out, the network
   * was unreachable, or the TLS handshake failed. A fault of the URL or of the
   * receiver's host rather than of one request, so it outlasts retries.
   */
  connectFailed?: boolean;
}

const HTTP_GONE = 410;
const STATUSES_WITH_RETRY_AFTER = new Set([429, 503]);
const DNS_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);
const CONNECT_FAILURES = new Set([...DNS_FAILURES, ...UNREACHABLE, 'ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT']);
const isTlsFailure = (code: string) => code === 'EPROTO' || /^ERR_(TLS|SSL)_|CERT/.test(code);

const systemNow = () => new Date();

/** Joins repeated headers and keeps whole headers, in the order received, while they fit the cap. */
function cappedHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const kept: Record<string, string> = {};
  let bytes = 0;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (bytes + size > WEBHOOK_RESPONSE_HEADERS_MAX_BYTES) continue;
    kept[name.toLowerCase()] = value;
    bytes += size;
  }
  return kept;
}

function statusFailureMessage(status: number): string | undefined {
  if (status >= 200 && status < 300) return undefined;
  // A 3xx asks us to go elsewhere; the receiver should change its URL instead (Standard Webhooks).
  if (status >= 300 && status < 400) return `redirect not followed (${status})`;
  return `HTTP ${status}`;
}

/** What went wrong before an answer came, in words that name the host at most. */
function networkFailureMessage(error: unknown, host: string, timeoutMs: number, connectTimeoutMs: number): string {
  const refusal = refusalIn(error);
  if (refusal) return `address not allowed: ${refusal.message}`;
  const code = errorCodeIn(error) ?? '';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (DNS_FAILURES.has(code)) return `DNS lookup failed for ${host}`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `timed out connecting after ${connectTimeoutMs} ms`;
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') return `timed out after ${timeoutMs} ms`;
  if (RESETS.has(code)) return 'connection reset by the receiver';
  if (UNREACHABLE.has(code)) return `the receiver is unreachable (${code})`;
  if (isTlsFailure(code)) return `TLS handshake with the receiver failed (${code})`;
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return 'the receiver sent response headers too large to read';
  // Not the error's message: undici's may quote the request.
  return `the request to the receiver failed (${code || (error instanceof Error ? error.name : 'unknown error')})`;
}

/** Whether the failure came before the receiver was reached (see WebhookAttemptOutcome.connectFailed). */
function failedToConnect(error: unknown): boolean {
  if (refusalIn(error)) return true;
  const code = errorCodeIn(error) ?? '';
  return CONNECT_FAILURES.has(code) || isTlsFailure(code);
}

/**
 * Sends webhook attempts. One instance serves every endpoint of the node;
 * concurrent sends are fine. `close` ends its connections.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly connectTimeoutMs: number;

  constructor(options: WebhookSenderOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.connectTimeoutMs = Math.max(1, Math.min(this.timeoutMs, CONNECT_TIMEOUT_CAP_MS));
    this.agent = new Agent({ connect: guardedConnector(options.urlPolicy, this.connectTimeoutMs) });
  }

  /**
   * Makes one attempt: signed afresh with the current time, POSTed, the answer
   * read to its end (the body is counted, never kept). Never throws for a
   * network or HTTP failure: those are outcomes.
   * @throws the signal's reason when `request.signal` aborts
   * @throws Error for a malformed signing secret (signWebhook)
   */
  async send(request: WebhookAttemptRequest): Promise<WebhookAttemptOutcome> {
    request.signal?.throwIfAborted();
    const now = request.now ?? systemNow;
    const url = webhookUrl(request.url);
    if (typeof url === 'string') return { ...noAnswer(0), errorMessage: url };
    const headers = {
      ...webhookHeaders({ id: request.id, timestampSeconds: Math.floor(now().getTime() / 1000), body: request.body, secrets: request.secrets }),
      'user-agent': USER_AGENT,
      // The delivery's span, when tracing is on: the receiver can join the objective's trace.
      ...traceHeaders(),
    };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const watch = watchAttempt(this.timeoutMs, request.signal);
    try {
      let response: Dispatcher.ResponseData;
      try {
        response = await undiciRequest(url, { dispatcher: this.agent, method: 'POST', headers, body: request.body, signal: watch.signal });
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (watch.timedOut()) return { ...noAnswer(elapsed()), errorMessage: `timed out after ${this.timeoutMs} ms` };
        const errorMessage = networkFailureMessage(error, url.hostname, this.timeoutMs, this.connectTimeoutMs);
        return { ...noAnswer(elapsed()), errorMessage, ...(failedToConnect(error) ? { connectFailed: true } : {}) };
      }
      const responseContentLength = await this.drain(response.body, request.signal);
      return { ...answered(response, now()), latencyMs: elapsed(), responseContentLength };
    } finally {
      watch.dispose();
    }
  }

  /** Ends the keep-alive connections; sends still in flight finish first. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * Reads the body to its end, counting bytes, so the socket can serve the
   * next delivery. The status already decided the attempt, so a body cut off
   * (deadline, reset) only leaves its length unknown.
   */
  private async drain(body: Dispatcher.ResponseData['body'], callerSignal: AbortSignal | undefined): Promise<number | null> {
    let bytes = 0;
    try {
      for await (const chunk of body) bytes += (chunk as Buffer).length;
      // undici frees the socket only after the body's end is seen; without this
      // turn a send right after this one finds the socket busy and opens another.
      await nextTurn();
      return bytes;
    } catch {
      if (callerSignal?.aborted) throw callerSignal.reason;
      return null;
    }
  }
}

function noAnswer(latencyMs: number): WebhookAttemptOutcome {
  return { ok: false, httpStatusCode: 0, latencyMs, responseContentLength: null, responseHeaders: null, gone: false };
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** The URL to send to, or why it cannot be used (checkOutboundUrl refuses these at write time already). */
function webhookUrl(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the webhook URL is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the webhook URL is not an http or https URL';
  if (url.username || url.password) return 'the webhook URL carries credentials, which are never sent';
  return url;
}

interface AttemptWatch {
  /** Aborts at the deadline or when the caller's signal does. */
  signal: AbortSignal;
  timedOut(): boolean;
  dispose(): void;
}

/**
 * One controller per attempt, fed by the deadline and the caller's signal. The
 * listener goes when the attempt ends, so a long-lived node-stop signal
 * collects nothing across thousands of deliveries.
 */
function watchAttempt(timeoutMs: number, callerSignal: AbortSignal | undefined): AttemptWatch {
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort(new Error(`webhook attempt timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const forwardAbort = () => attempt.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', forwardAbort, { once: true });
  return {
    signal: attempt.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', forwardAbort);
    },
  };
}

/** What the status and headers of an answer say; the caller adds timing and the body's length. */
function answered(response: Dispatcher.ResponseData, now: Date): Omit<WebhookAttemptOutcome, 'latencyMs' | 'responseContentLength'> {
  const status = response.statusCode;
  const retryAfterMs = STATUSES_WITH_RETRY_AFTER.has(status) ? parseRetryAfter(headerText(response.headers['retry-after']), now) : undefined;
  const errorMessage = statusFailureMessage(status);
  return {
    ok: errorMessage === undefined,
    httpStatusCode: status,
    responseHeaders: cappedHeaders(response.headers),
    gone: status === HTTP_GONE,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(errorMessage !== undefined ? { errorMessage } : {}),
  };
}
