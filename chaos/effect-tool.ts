// The HTTP tool of the chaos run: an idempotent service, as a tool with side
// effects should be. The first request of an Idempotency-Key (the tool call
// id) performs the effect and answers after a short delay (so a node killed
// mid-call is likely), or after a long one on `/slow` (a call still running
// when a node is stopped or hands shards off); a later request with the same
// key performs nothing and answers the same result. Every request is recorded with its time and
// whether an earlier one of its key had been answered already.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ToolRequest {
  key: string;
  receivedAt: number;
  /** Answered (the answer handed to the kernel) at; undefined while open or when the caller left first. */
  answeredAt?: number;
  /** An earlier request of the same key had been answered before this one arrived: the runtime lost that answer. */
  afterAnswer: boolean;
}

export interface EffectTool {
  url: string;
  requests: ToolRequest[];
  /** Requests per Idempotency-Key, in arrival order. */
  byKey: Map<string, ToolRequest[]>;
  /** Requests without an Idempotency-Key header. */
  keyless: number;
  /** Requests still waiting for their answer. */
  open(): number;
  close(): Promise<void>;
}

export async function startEffectTool(answerDelayMs: number, slowAnswerDelayMs: number): Promise<EffectTool> {
  const requests: ToolRequest[] = [];
  const byKey = new Map<string, ToolRequest[]>();
  const tool: EffectTool = {
    url: '',
    requests,
    byKey,
    keyless: 0,
    open: () => requests.filter((request) => request.answeredAt === undefined && !closed.has(request)).length,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const closed = new Set<ToolRequest>();
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const key = incoming.headers['idempotency-key'];
      if (typeof key !== 'string' || key === '') {
        tool.keyless += 1;
        response.writeHead(400).end('Idempotency-Key required');
        return;
      }
      const earlier = byKey.get(key) ?? [];
      const request: ToolRequest = { key, receivedAt: Date.now(), afterAnswer: earlier.some((item) => item.answeredAt !== undefined) };
      requests.push(request);
      byKey.set(key, [...earlier, request]);
      response.on('close', () => {
        if (request.answeredAt === undefined) closed.add(request);
      });
      let args: unknown = null;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        args = 'unparsable';
      }
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(200, { 'content-type': 'application/json' });
        // The same answer for every request of a key: the effect happened once.
        response.end(JSON.stringify({ ok: true, key, args }), () => {
          request.answeredAt = Date.now();
        });
      }, incoming.url?.startsWith('/slow') ? slowAnswerDelayMs : answerDelayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tool.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return tool;
}
