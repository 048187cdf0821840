// A real Model Context Protocol server for tests, built with the same SDK the
// service uses: streamable HTTP with sessions and event-stream answers (as
// most deployed servers run), a tool list the test can change, the ability to
// page the list to exercise cursors, a record of tool calls (with their
// Idempotency-Key) answered by a handler the test can replace, the count of
// sessions still open, and a `kill` that drops it as a crashed process would.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

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
  /** The W3C `traceparent` header of the request, when it carried one. */
  traceparent?: string;
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
  /**
   * Answers tools/call; replace it to change the server. `notify` sends a log
   * message on the call's event stream (a tool reporting progress), which
   * opens the stream before the answer. @default `called <name>` as text
   */
  onCall: (call: TestMcpCall, notify: (text: string) => Promise<void>) => Promise<TestMcpCallResult> | TestMcpCallResult;
  /** Sessions initialized and not yet ended by the client (DELETE). */
  openSessions(): number;
  /** Sessions initialized since the server started. */
  sessionsStarted: number;
  /** Chunks of answers to POST requests handed to the network (an event stream's events included). */
  chunksSent: number;
  /** Stops listening and drops every connection at once, answering nothing more (a crashed server). */
  kill(): void;
  close(): Promise<void>;
}

/** Calls `sent` each time a chunk written to `response` has left for the network, so a test can kill the server after a client saw it. */
function countSentChunks(response: http.ServerResponse, sent: () => void): void {
  const write = response.write.bind(response) as (chunk: unknown, encoding: BufferEncoding | undefined, callback: (error?: Error | null) => void) => boolean;
  response.write = ((chunk: unknown, ...rest: unknown[]) => {
    const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined;
    const callback = rest.find((item): item is (error?: Error | null) => void => typeof item === 'function');
    return write(chunk, encoding, (error) => {
      if (!error) sent();
      callback?.(error);
    });
  }) as typeof response.write;
}

export interface TestMcpServerOptions {
  /** Events carry ids and are kept, so a client can resume a broken answer stream (the SDK's example event store). */
  resumable?: boolean;
}

export async function startTestMcpServer(tools: TestMcpTool[] = [], options: TestMcpServerOptions = {}): Promise<TestMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state: TestMcpServer = {
    url: '', tools, pageSize: 100, listCalls: 0, calls: [], sessionsStarted: 0, chunksSent: 0,
    onCall: (call) => ({ content: [{ type: 'text', text: `called ${call.name}` }] }),
    openSessions: () => sessions.size,
    kill: () => undefined,
    close: async () => undefined,
  };
  const mcpFor = () => {
    const server = new Server({ name: 'test-mcp', version: '1.0.0' }, { capabilities: { tools: {}, logging: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      state.listCalls += 1;
      const start = Number(request.params?.cursor ?? 0);
      const page = state.tools.slice(start, start + state.pageSize);
      const next = start + state.pageSize < state.tools.length ? String(start + state.pageSize) : undefined;
      return { tools: page.map((tool) => ({ ...tool, inputSchema: tool.inputSchema as { type: 'object' } })), ...(next ? { nextCursor: next } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const key = extra.requestInfo?.headers['idempotency-key'];
      const traceparent = extra.requestInfo?.headers.traceparent;
      const call: TestMcpCall = {
        name: request.params.name, arguments: request.params.arguments ?? {},
        ...(typeof key === 'string' ? { idempotencyKey: key } : {}), ...(typeof traceparent === 'string' ? { traceparent } : {}),
      };
      state.calls.push(call);
      const notify = (text: string) => extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: text } });
      return (await state.onCall(call, notify)) as never;
    });
    return server;
  };
  const httpServer = http.createServer(async (request, response) => {
    let body: unknown;
    if (request.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      countSentChunks(response, () => (state.chunksSent += 1));
    }
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || !isInitializeRequest(body)) {
        response.writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
        return;
      }
      const fresh: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(options.resumable ? { eventStore: new InMemoryEventStore() } : {}),
        onsessioninitialized: (id) => {
          sessions.set(id, fresh);
          state.sessionsStarted += 1;
        },
      });
      const server = mcpFor();
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
        void server.close();
      };
      await server.connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  state.kill = () => {
    httpServer.close();
    httpServer.closeAllConnections();
  };
  state.close = () => new Promise<void>((resolve) => {
    httpServer.close(() => resolve());
    // Keep-alive clients (and open event streams) would hold the server open; a test's server goes away whole.
    httpServer.closeAllConnections();
    for (const transport of sessions.values()) void transport.close();
  });
  return state;
}
