// McpClient and McpToolCaller over @modelcontextprotocol/sdk (streamable HTTP
// transport), with every connection through the outbound URL policy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, DeadlineExceededError, UnavailableError } from '../errors';
import { guardedFetch, type ClosableFetch, type FetchFunction } from '../network/guarded-fetch';
import type { UrlPolicyOptions } from '../network/url-policy';
import type { McpClient, McpToolDescription } from '../ports/mcp-client';
import type { McpContentBlock, McpToolCallRequest, McpToolCallResult, McpToolCaller } from '../ports/mcp-tool-caller';
import { activeTraceparent } from '../tracing/tracing';

const CLIENT_INFO = { name: 'agentrt', version: '1.0' };
const MAX_PAGES = 100;

/** The ApiError (a URL policy refusal) somewhere in a cause chain, if any. */
function apiErrorIn(error: unknown): ApiError | undefined {
  for (let current = error, depth = 0; current && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof ApiError) return current;
  }
  return undefined;
}

/** True when a JSON-RPC message body is a `tools/call` request. */
function isToolCall(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  try {
    const message = JSON.parse(body) as { method?: unknown };
    return message?.method === 'tools/call';
  } catch {
    return false;
  }
}

/**
 * How long a call waits, once the event stream that should carry its answer
 * has ended, for the SDK to hand over an answer that stream held. The SDK
 * itself would wait for the call's whole deadline: it resumes only a stream
 * that sent event ids, and otherwise just reports the disconnect.
 */
const ANSWER_AFTER_STREAM_END_MS = 1_000;
/** Resuming a stream that sent event ids: a few quick attempts, so a server that is gone ends the call within seconds. */
const RECONNECTION = { initialReconnectionDelay: 500, maxReconnectionDelay: 2_000, reconnectionDelayGrowFactor: 2, maxRetries: 3 };
/** The longest wait for the server to acknowledge the end of a session (DELETE) before the connection is dropped anyway. */
const END_SESSION_WAIT_MS = 2_000;

/** The response with its body passed through, calling `ended` once the body ends or fails. */
function observeBodyEnd(response: Response, ended: () => void): Response {
  if (!response.body || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        controller.close();
      } catch (error) {
        controller.error(error);
      }
      ended();
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A fetch for one call's session. It adds `Idempotency-Key` to the
 * `tools/call` request only: the session's other requests (initialize,
 * notifications) are not the call, and a server de-duplicating by key must not
 * answer one with another's response. And it reports when the event stream
 * answering `tools/call` ends, so a call whose server went away ends too.
 */
function callFetch(fetch: FetchFunction, key: string, callStreamEnded: () => void): FetchFunction {
  return async (input, init) => {
    if (!init || !isToolCall(init.body)) return fetch(input, init);
    const headers = new Headers(init.headers);
    headers.set('idempotency-key', key);
    // The tool call's span, when tracing is on: the server can join the objective's trace (off: one boolean check).
    const traceparent = activeTraceparent();
    if (traceparent) headers.set('traceparent', traceparent);
    return observeBodyEnd(await fetch(input, { ...init, headers }), callStreamEnded);
  };
}

/**
 * Ends the session on the server (DELETE; a server may answer 405, having no
 * sessions to end), then the client. Without it a long-lived server would keep
 * one open session per call. Bounded: a server that does not answer is left.
 */
async function endSession(client: Client, transport: StreamableHTTPClientTransport): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_SESSION_WAIT_MS)));
  try {
    await Promise.race([transport.terminateSession().catch(() => undefined), waited]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

export class SdkMcpClient implements McpClient, McpToolCaller {
  /** One keep-alive pool for every call (sessions are per call, connections need not be). */
  private readonly fetch: ClosableFetch;

  constructor(
    private readonly policy: UrlPolicyOptions,
    private readonly timeoutMs = 15_000,
  ) {
    this.fetch = guardedFetch(policy);
  }

  /** Closes the keep-alive pool (node shutdown). */
  async close(): Promise<void> {
    await this.fetch.close();
  }

  async listTools(serverUrl: string): Promise<McpToolDescription[]> {
    const client = new Client(CLIENT_INFO);
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: this.fetch as never, reconnectionOptions: RECONNECTION });
    try {
      await client.connect(transport, { timeout: this.timeoutMs });
      const tools: McpToolDescription[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await client.listTools(cursor ? { cursor } : {}, { timeout: this.timeoutMs });
        for (const tool of result.tools) {
          tools.push({ name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: tool.inputSchema as Record<string, unknown> });
        }
        cursor = result.nextCursor;
        if (!cursor) break;
      }
      return tools;
    } catch (error) {
      const refusal = apiErrorIn(error);
      if (refusal) throw refusal;
      const reason = error instanceof Error ? error.message : String(error);
      throw new UnavailableError(`could not list the tools of MCP server ${serverUrl}: ${reason}`, { cause: error });
    } finally {
      await endSession(client, transport);
    }
  }

  async callTool(request: McpToolCallRequest): Promise<McpToolCallResult> {
    const { serverUrl, toolName, signal, timeoutMs } = request;
    const client = new Client(CLIENT_INFO);
    // Aborted when the server is gone: the stream of the answer ended without it and cannot be resumed.
    const lost = new AbortController();
    const serverGone = () => lost.abort(new McpError(ErrorCode.ConnectionClosed, 'the connection to the server ended before the answer'));
    let resumable = false;
    let streamEnded = false;
    let answerWait: NodeJS.Timeout | undefined;
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), {
      fetch: callFetch(this.fetch, request.idempotencyKey, () => {
        streamEnded = true;
        // A stream with event ids is resumed by the SDK, which reports when it gives up (below).
        if (!resumable) answerWait = setTimeout(serverGone, ANSWER_AFTER_STREAM_END_MS);
      }) as never,
      reconnectionOptions: RECONNECTION,
    });
    client.onerror = (error) => {
      if (streamEnded && /Maximum reconnection attempts/.test(error.message)) serverGone();
    };
    const options = { signal: AbortSignal.any([signal, lost.signal]), timeout: timeoutMs };
    try {
      await client.connect(transport, options);
      const result = await client.callTool({ name: toolName, arguments: request.arguments }, undefined, { ...options, onresumptiontoken: () => (resumable = true) });
      // Servers of protocol 2024-10-07 and before answer `toolResult` instead of content.
      const content = Array.isArray(result.content)
        ? (result.content as McpContentBlock[])
        : [{ type: 'text', text: JSON.stringify((result as { toolResult?: unknown }).toolResult ?? null) }];
      return {
        content,
        ...(result.structuredContent ? { structuredContent: result.structuredContent as Record<string, unknown> } : {}),
        isError: result.isError === true,
      };
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      const refusal = apiErrorIn(error);
      if (refusal) throw refusal;
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new DeadlineExceededError(`MCP server ${serverUrl} did not answer within ${timeoutMs} ms`, { cause: error });
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new UnavailableError(`MCP server ${serverUrl} failed the call of tool "${toolName}": ${reason}`, { cause: error });
    } finally {
      clearTimeout(answerWait);
      await endSession(client, transport);
    }
  }
}
