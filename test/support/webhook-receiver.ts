// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records
// every request (headers and raw body) and answers per path as the test
// programs it (a status, a delay, a sequence of answers), like a customer's
// endpoint that is healthy, slow, failing for a while, or gone.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** How a path answers its n-th request (0-based, counted per path). */
export type AnswerPlan = (request: ReceivedWebhook, index: number) => ReceiverAnswer;

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests to one path, in arrival order. */
  at(path: string): ReceivedWebhook[];
  /** Sets how a path answers (default: 204). */
  answer(path: string, plan: AnswerPlan): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const plans = new Map<string, AnswerPlan>();
  const counts = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://receiver.test').pathname;
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const webhook: ReceivedWebhook = {
        path, headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now(),
        id: headers['webhook-id'] ?? '', timestamp: headers['webhook-timestamp'] ?? '', signature: headers['webhook-signature'] ?? '',
      };
      received.push(webhook);
      const index = counts.get(path) ?? 0;
      counts.set(path, index + 1);
      const plan: AnswerPlan = plans.get(path) ?? (() => ({ status: 204 }));
      const answer = plan(webhook, index);
      const send = () => {
        if (response.destroyed) return;
        response.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    at: (path) => received.filter((webhook) => webhook.path === path),
    answer: (path, plan) => plans.set(path, plan),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
