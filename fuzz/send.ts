// Sends one fuzz request over node:http, which, unlike fetch, lets a request
// carry latin1 header bytes, repeated headers, raw path bytes and a body with
// any content type. Waits at most `timeoutMs`; an event stream counts as
// answered once its headers arrive.
import http from 'node:http';

export interface SendRequest {
  method: string;
  target: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

/** What came back: an HTTP answer, or the transport error (`timeout` when nothing came in time). */
export type Answer = { status: number; contentType: string; text: string } | { error: string };

/** Keeps the answer text bounded (an error body may list every field of a huge request). */
const MAX_ANSWER_BYTES = 32 << 20;

export function send(baseUrl: string, agent: http.Agent, request: SendRequest, timeoutMs: number): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    let outgoing: http.ClientRequest;
    try {
      outgoing = http.request({ host: url.hostname, port: url.port, method: request.method, path: request.target, headers: request.headers, agent });
    } catch (error) {
      return finish({ error: `client refused to send: ${(error as Error).message}` });
    }
    const timer = setTimeout(() => {
      finish({ error: 'timeout' });
      outgoing.destroy();
    }, timeoutMs);
    outgoing.on('error', (error) => finish({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    outgoing.on('response', (response) => {
      const contentType = String(response.headers['content-type'] ?? '');
      if (contentType.startsWith('text/event-stream')) {
        finish({ status: response.statusCode ?? 0, contentType, text: '' });
        response.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
      });
      response.on('end', () => finish({ status: response.statusCode ?? 0, contentType, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', (error) => finish({ error: `response: ${error.message}` }));
    });
    outgoing.end(request.body);
  });
}
