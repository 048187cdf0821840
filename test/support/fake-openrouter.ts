// A fake OpenRouter for tests: a real node:http server answering
// `POST <base>/chat/completions` with answers each test queues (or one fallback
// answer for every request), in the form
// the request asked for (plain JSON, or SSE chunks with keep-alive comments,
// tool call deltas split by index and usage in a last chunk), plus error
// statuses, raw streams and an answer that never comes. It records every
// request and counts TCP connections (to see keep-alive reuse).
//
// A slow streaming model: `fakeAnswers.completion({content}, {chunkDelayMs: 100, chunkChars: 4})`
// streams the content 4 characters a chunk, waiting 100 ms before each
// chunk after the first; the time its first content chunk was written
// (epoch ms, Date.now()) is then `requests[i].firstContentAt` of that
// request (undefined until written, and for answers with no content or not
// streamed), to compare with when the text showed up elsewhere.
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface FakeCompletion {
  content?: string | null;
  toolCalls?: FakeToolCall[];
  /** @default 'tool_calls' with tool calls, else 'stop' */
  finishReason?: string;
  /** The wire `usage` object; null sends none. @default {prompt_tokens: 10, completion_tokens: 5, total_tokens: 15} */
  usage?: Record<string, unknown> | null;
  model?: string;
  id?: string;
}

/** How a completion is streamed (when the request asks for a stream; a plain answer ignores it). */
export interface FakeStreaming {
  /** Wait before each SSE chunk after the first (a slow model). @default 0: as fast as the socket takes them */
  chunkDelayMs?: number;
  /** Characters of content per chunk. @default 3 */
  chunkChars?: number;
}

export type FakeAnswer =
  | { kind: 'completion'; completion: FakeCompletion; streaming?: FakeStreaming }
  | { kind: 'error'; status: number; body: string; headers: Record<string, string> }
  | { kind: 'raw-stream'; lines: string[] }
  | { kind: 'hang' };

export const fakeAnswers = {
  /** A completion, as JSON or streamed, whichever the request asked for; `streaming` slows the stream down. */
  completion: (completion: FakeCompletion, streaming?: FakeStreaming): FakeAnswer => ({ kind: 'completion', completion, ...(streaming ? { streaming } : {}) }),
  /** An error status with OpenRouter's body `{error: {code, message, metadata?}}`. */
  error: (status: number, message: string, options: { headers?: Record<string, string>; metadata?: Record<string, unknown> } = {}): FakeAnswer => ({
    kind: 'error',
    status,
    body: JSON.stringify({ error: { code: status, message, ...(options.metadata ? { metadata: options.metadata } : {}) } }),
    headers: { 'content-type': 'application/json', ...options.headers },
  }),
  /** A 200 SSE stream of exactly these lines (each written on its own, a blank line after each). */
  rawStream: (lines: string[]): FakeAnswer => ({ kind: 'raw-stream', lines }),
  /** Never answers: the client's deadline or signal ends the call. */
  hang: (): FakeAnswer => ({ kind: 'hang' }),
};

export interface ReceivedCompletionRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** When the first chunk with answer text was written (Date.now()); streamed completions only. */
  firstContentAt?: number;
}

export interface FakeOpenRouter {
  /** `http://127.0.0.1:<port>/api/v1`, a key's `spec.openrouter.baseUrl`. */
  baseUrl: string;
  requests: ReceivedCompletionRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** Queues answers for the next requests; with none queued a request gets the fallback. */
  answer(...answers: FakeAnswer[]): void;
  /** The answer to every request with none queued (a provider that is down, a model that never stops); null: the completion "ok". */
  fallback(answer: FakeAnswer | null): void;
  /** Resolves once `count` requests have arrived. */
  arrived(count: number): Promise<void>;
  /** Forgets requests and queued answers. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function plainCompletion(request: Record<string, unknown>, completion: FakeCompletion): Record<string, unknown> {
  const toolCalls = completion.toolCalls ?? [];
  return {
    id: completion.id ?? 'gen-fake-1',
    object: 'chat.completion',
    model: completion.model ?? request.model,
    choices: [{
      index: 0,
      finish_reason: completion.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
      message: {
        role: 'assistant',
        content: completion.content ?? null,
        ...(toolCalls.length ? { tool_calls: toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
      },
    }],
    ...(completion.usage === null ? {} : { usage: completion.usage ?? DEFAULT_USAGE }),
  };
}

/** Splits text in pieces of at most `size` characters (at least one piece). */
function pieces(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts.length ? parts : [''];
}

/** One SSE event of a streamed answer, and whether it carries answer text. */
interface StreamLine {
  text: string;
  content?: boolean;
}

/**
 * The same completion as SSE data: content in `chunkChars`-character deltas, each tool
 * call's id and name first, then its arguments in fragments interleaved
 * with the other calls' (so assembling by index matters), the finish reason,
 * then usage in a last chunk with no choices.
 */
function streamedCompletion(request: Record<string, unknown>, completion: FakeCompletion, chunkChars = 3): StreamLine[] {
  const base = { id: completion.id ?? 'gen-fake-1', object: 'chat.completion.chunk', model: completion.model ?? request.model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  const events: StreamLine[] = [{ text: chunk({ role: 'assistant', content: '' }) }];
  if (completion.content) for (const part of pieces(completion.content, chunkChars)) events.push({ text: chunk({ content: part }), content: true });
  const calls = completion.toolCalls ?? [];
  calls.forEach((call, index) => events.push({ text: chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }) }));
  const fragments = calls.map((call) => pieces(call.arguments, 4));
  for (let round = 0; round < Math.max(0, ...fragments.map((list) => list.length)); round++) {
    fragments.forEach((list, index) => {
      if (round < list.length) events.push({ text: chunk({ tool_calls: [{ index, function: { arguments: list[round] } }] }) });
    });
  }
  events.push({ text: chunk({}, completion.finishReason ?? (calls.length ? 'tool_calls' : 'stop')) });
  if (completion.usage !== null) events.push({ text: JSON.stringify({ ...base, choices: [], usage: completion.usage ?? DEFAULT_USAGE }) });
  return [{ text: ': OPENROUTER PROCESSING' }, ...events.map((event) => ({ ...event, text: `data: ${event.text}` })), { text: 'data: [DONE]' }];
}

/** Writes the lines as SSE events; `onContent` runs right after the first line with answer text went out. */
async function writeStream(response: http.ServerResponse, lines: StreamLine[], options: { delayMs?: number; onContent?: () => void } = {}): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let contentWritten = false;
  for (const [index, line] of lines.entries()) {
    if (index > 0 && options.delayMs) await sleep(options.delayMs);
    if (response.destroyed) return;
    // Each event in two writes, so an event is split across network chunks.
    const text = `${line.text}\n\n`;
    const middle = Math.floor(text.length / 2);
    response.write(text.slice(0, middle));
    response.write(text.slice(middle));
    if (line.content && !contentWritten) {
      contentWritten = true;
      options.onContent?.();
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

export async function startFakeOpenRouter(): Promise<FakeOpenRouter> {
  const requests: ReceivedCompletionRequest[] = [];
  const queue: FakeAnswer[] = [];
  let fallback: FakeAnswer | null = null;
  const events = new EventEmitter();
  let connections = 0;
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '';
    if (request.method !== 'POST' || !path.endsWith('/chat/completions')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: 'Not Found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const received: ReceivedCompletionRequest = { path, headers: request.headers, body };
    requests.push(received);
    events.emit('request');
    const answer = queue.shift() ?? fallback ?? fakeAnswers.completion({ content: 'ok' });
    switch (answer.kind) {
      case 'completion':
        if (body.stream === true) {
          return writeStream(response, streamedCompletion(body, answer.completion, answer.streaming?.chunkChars), {
            delayMs: answer.streaming?.chunkDelayMs, onContent: () => (received.firstContentAt = Date.now()),
          });
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(plainCompletion(body, answer.completion)));
        return;
      case 'error':
        response.writeHead(answer.status, answer.headers).end(answer.body);
        return;
      case 'raw-stream':
        return writeStream(response, answer.lines.map((text) => ({ text })));
      case 'hang':
        return;
    }
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    requests,
    connections: () => connections,
    answer: (...answers) => queue.push(...answers),
    fallback: (answer) => {
      fallback = answer;
    },
    async arrived(count) {
      while (requests.length < count) await once(events, 'request');
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      fallback = null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A hanging answer and keep-alive sockets would keep it open.
        server.closeAllConnections();
      }),
  };
}
