// McpClient over @modelcontextprotocol/sdk (streamable HTTP transport), with
// every connection through the outbound URL policy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiError, UnavailableError } from '../errors';
import { guardedFetch } from '../network/guarded-fetch';
import type { UrlPolicyOptions } from '../network/url-policy';
import type { McpClient, McpToolDescription } from '../ports/mcp-client';

const CLIENT_INFO = { name: 'agentrt', version: '1.0' };
const MAX_PAGES = 100;

/** The ApiError (a URL policy refusal) somewhere in a cause chain, if any. */
function apiErrorIn(error: unknown): ApiError | undefined {
  for (let current = error, depth = 0; current && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof ApiError) return current;
  }
  return undefined;
}

export class SdkMcpClient implements McpClient {
  constructor(
    private readonly policy: UrlPolicyOptions,
    private readonly timeoutMs = 15_000,
  ) {}

  async listTools(serverUrl: string): Promise<McpToolDescription[]> {
    const client = new Client(CLIENT_INFO);
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: guardedFetch(this.policy) as never });
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
}
