// A real HTTP tool server for tests (node:http): records every request it
// receives, and offers the answers tool execution must handle: an echo, an
// answer that never comes, a redirect, a 1 MiB body, a 500, an empty 204 and a
// rendezvous that answers only once two requests are in (to prove calls run
// in parallel without timing anything), a delayed answer (calls that stay in
// flight for a while, to load a node), and an echo that de-duplicates by
// Idempotency-Key as a careful tool does (a repeated key gets the first answer),
// and a body of a requested size (`/sized?bytes=`).
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedToolRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestToolServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: ReceivedToolRequest[];
  /** Emits `request` with each ReceivedToolRequest as it arrives. */
  events: EventEmitter;
  /** Resolves when `count` requests to `path` have arrived (counting those already in). */
  arrived(path: string, count?: number): Promise<void>;
  /** Requests to `path` (ignoring the query). */
  requestsTo(path: string): ReceivedToolRequest[];
  close(): Promise<void>;
}

export const LARGE_BODY_BYTES = 1024 * 1024;
/** How long `/delayed` waits before answering, unless its `ms` query parameter says otherwise. */
export const DELAYED_ANSWER_MS = 200;
/** How many rendezvous requests must be in before any is answered. */
export const RENDEZVOUS_SIZE = 2;

const pathOf = (url: string) => new URL(url, 'http://tool.test').pathname;

export async function startTestToolServer(): Promise<TestToolServer> {
  const requests: ReceivedToolRequest[] = [];
  const events = new EventEmitter();
  const waitingAtRendezvous: Array<() => void> = [];
  const firstByIdempotencyKey = new Map<string, ReceivedToolRequest>();
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const received: ReceivedToolRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(received);
    events.emit('request', received);
    const json = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    switch (pathOf(received.url)) {
      case '/echo':
        return json(200, received);
      case '/idempotent': {
        const key = String(received.headers['idempotency-key'] ?? '');
        if (!firstByIdempotencyKey.has(key)) firstByIdempotencyKey.set(key, received);
        return json(200, firstByIdempotencyKey.get(key));
      }
      case '/slow':
        return; // never answers; the client's deadline or signal ends the call
      case '/delayed': {
        // Answers after `?ms=` (default 200): calls that are in flight for a while without hanging forever.
        const delayMs = Number(new URL(received.url, 'http://tool.test').searchParams.get('ms') ?? DELAYED_ANSWER_MS);
        const timer = setTimeout(() => json(200, { delayedMs: delayMs, body: received.body }), delayMs);
        response.once('close', () => clearTimeout(timer));
        return;
      }
      case '/redirect':
        return response.writeHead(302, { location: `/echo?redirected=true` }).end('moved');
      case '/sized': {
        // `?bytes=` of text (default 8 KiB): a tool result of a known size.
        const bytes = Number(new URL(received.url, 'http://tool.test').searchParams.get('bytes') ?? 8192);
        return response.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(bytes, 'x'));
      }
      case '/large':
        return response.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.alloc(LARGE_BODY_BYTES, 'x'));
      case '/fail':
        return response.writeHead(500, { 'content-type': 'text/plain' }).end('the database is on fire');
      case '/empty':
        return response.writeHead(204).end();
      case '/rendezvous': {
        waitingAtRendezvous.push(() => json(200, { seen: requests.filter((item) => pathOf(item.url) === '/rendezvous').length, body: received.body }));
        if (waitingAtRendezvous.length >= RENDEZVOUS_SIZE) waitingAtRendezvous.splice(0).forEach((answer) => answer());
        return;
      }
      default:
        return response.writeHead(404).end('no such tool');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const requestsTo = (path: string) => requests.filter((item) => pathOf(item.url) === path);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    events,
    requestsTo,
    async arrived(path, count = 1) {
      while (requestsTo(path).length < count) await once(events, 'request');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Held requests (/slow, a lone rendezvous) and keep-alive sockets would keep it open.
        server.closeAllConnections();
      }),
  };
}
