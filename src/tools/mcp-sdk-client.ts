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
 * A fetch that adds `Idempotency-Key` to the `tools/call` request only: the
 * session's other requests (initialize, notifications) are not the call, and a
 * server de-duplicating by key must not answer one with another's response.
 */
function withIdempotencyKey(fetch: FetchFunction, key: string): FetchFunction {
  return (input, init) => {
    if (!init || !isToolCall(init.body)) return fetch(input, init);
    const headers = new Headers(init.headers);
    headers.set('idempotency-key', key);
    return fetch(input, { ...init, headers });
  };
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
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: this.fetch as never });
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
      await client.close().catch(() => undefined);
    }
  }

  async callTool(request: McpToolCallRequest): Promise<McpToolCallResult> {
    const { serverUrl, toolName, signal, timeoutMs } = request;
    const client = new Client(CLIENT_INFO);
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: withIdempotencyKey(this.fetch, request.idempotencyKey) as never });
    const options = { signal, timeout: timeoutMs };
    try {
      await client.connect(transport, options);
      const result = await client.callTool({ name: toolName, arguments: request.arguments }, undefined, options);
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
      await client.close().catch(() => undefined);
    }
  }
}
