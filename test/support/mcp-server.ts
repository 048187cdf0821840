// A real Model Context Protocol server for tests, built with the same SDK the
// service uses: streamable HTTP (stateless), a tool list the test can change,
// the ability to page the list to exercise cursors, and a record of tool calls
// (with their Idempotency-Key) answered by a handler the test can replace.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface TestMcpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A `tools/call` result as the handler gives it (the SDK's CallToolResult). */
export interface TestMcpCallResult {
  content: Array<Record<string, unknown> & { type: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** One `tools/call` the server received. */
export interface TestMcpCall {
  name: string;
  arguments: Record<string, unknown>;
  idempotencyKey?: string;
}

export interface TestMcpServer {
  url: string;
  /** The tools the server lists; replace it to change the server. */
  tools: TestMcpTool[];
  /** How many tools one tools/list page holds (cursor paging). */
  pageSize: number;
  /** tools/list requests served. */
  listCalls: number;
  /** tools/call requests received, in order. */
  calls: TestMcpCall[];
  /** Answers tools/call; replace it to change the server. @default `called <name>` as text */
  onCall: (call: TestMcpCall) => Promise<TestMcpCallResult> | TestMcpCallResult;
  close(): Promise<void>;
}

export async function startTestMcpServer(tools: TestMcpTool[] = []): Promise<TestMcpServer> {
  const state: TestMcpServer = {
    url: '', tools, pageSize: 100, listCalls: 0, calls: [],
    onCall: (call) => ({ content: [{ type: 'text', text: `called ${call.name}` }] }),
    close: async () => undefined,
  };
  const mcpFor = () => {
    const server = new Server({ name: 'test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      state.listCalls += 1;
      const start = Number(request.params?.cursor ?? 0);
      const page = state.tools.slice(start, start + state.pageSize);
      const next = start + state.pageSize < state.tools.length ? String(start + state.pageSize) : undefined;
      return { tools: page.map((tool) => ({ ...tool, inputSchema: tool.inputSchema as { type: 'object' } })), ...(next ? { nextCursor: next } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const key = extra.requestInfo?.headers['idempotency-key'];
      const call: TestMcpCall = { name: request.params.name, arguments: request.params.arguments ?? {}, ...(typeof key === 'string' ? { idempotencyKey: key } : {}) };
      state.calls.push(call);
      return (await state.onCall(call)) as never;
    });
    return server;
  };
  const httpServer = http.createServer(async (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const server = mcpFor();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  state.close = () => new Promise<void>((resolve) => {
    httpServer.close(() => resolve());
    // Keep-alive clients would hold the server open; a test's server goes away whole.
    httpServer.closeAllConnections();
  });
  return state;
}
