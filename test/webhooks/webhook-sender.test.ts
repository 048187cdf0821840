// Webhook attempts against real node:http receivers on 127.0.0.1: every
// delivery a receiver accepts is verified with the standardwebhooks library,
// as a customer's receiver would verify it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { newWebhookSigningSecret } from '../../src/accounts/account.service';
import { WebhookSender, WEBHOOK_RESPONSE_HEADERS_MAX_BYTES, type WebhookAttemptOutcome } from '../../src/webhooks/webhook-sender';
import { webhookSigningKey } from '../../src/webhooks/webhook-signature';

interface ReceivedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface TestReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Sockets the receiver accepted. */
  connections: number;
  close(): Promise<void>;
}

type Answer = (request: ReceivedRequest, response: http.ServerResponse) => void;

async function startReceiver(answer: Answer): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request = { method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      answer(request, response);
    });
  });
  const receiver = { requests, connections: 0 };
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

const accept: Answer = (_request, response) => response.writeHead(200, { 'X-Receiver': 'test' }).end('accepted');

/** Verifies with the standardwebhooks library, given our secret as whsec_. */
function verifyAsReceiver(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(`whsec_${secret.slice('wh_'.length)}`).verify(request.body, request.headers);
}

describe('WebhookSender', () => {
  const secret = newWebhookSigningSecret();
  const body = JSON.stringify({ type: 'objective_event.finalized', timestamp: new Date().toISOString(), data: { objectiveId: 'obj_1' } });
  const receivers: TestReceiver[] = [];
  let sender: WebhookSender;

  async function receiver(answer: Answer): Promise<TestReceiver> {
    const started = await startReceiver(answer);
    receivers.push(started);
    return started;
  }

  function send(url: string, extra: Partial<Parameters<WebhookSender['send']>[0]> = {}): Promise<WebhookAttemptOutcome> {
    return sender.send({ url, id: 'whdel_01JABCDEFGHJKMNPQRSTVWXYZ0', body, secrets: [secret], ...extra });
  }

  beforeEach(() => {
    sender = new WebhookSender({ urlPolicy: { allowPrivateNetwork: true } });
  });
  afterEach(async () => {
    await sender.close();
    await Promise.all(receivers.splice(0).map((started) => started.close()));
  });

  describe('when the receiver answers 2xx', () => {
    it('delivers a POST that the standardwebhooks library verifies, with whsec_ and with the raw key', async () => {
      const target = await receiver(accept);
      const outcome = await send(target.url);
      assert.equal(outcome.ok, true);
      assert.equal(outcome.httpStatusCode, 200);
      assert.equal(outcome.errorMessage, undefined);
      assert.equal(outcome.gone, false);
      const [request] = target.requests;
      assert.equal(request.method, 'POST');
      assert.equal(request.body, body);
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers['webhook-id'], 'whdel_01JABCDEFGHJKMNPQRSTVWXYZ0');
      assert.deepEqual(verifyAsReceiver(secret, request), JSON.parse(body));
      assert.deepEqual(new Webhook(webhookSigningKey(secret), { format: 'raw' }).verify(request.body, request.headers), JSON.parse(body));
    });

    it('reports the response length and lower-cased headers, not the body', async () => {
      const target = await receiver(accept);
      const outcome = await send(target.url);
      assert.equal(outcome.responseContentLength, 'accepted'.length);
      assert.equal(outcome.responseHeaders?.['x-receiver'], 'test');
      assert.ok(outcome.latencyMs >= 0);
      assert.ok(!JSON.stringify(outcome).includes('accepted'));
    });

    it('counts a large chunked body to its last byte', async () => {
      const target = await receiver((_request, response) => {
        response.writeHead(202);
        for (let chunk = 0; chunk < 100; chunk++) response.write(Buffer.alloc(1_000, 'x'));
        response.end();
      });
      const outcome = await send(target.url);
      assert.equal(outcome.ok, true);
      assert.equal(outcome.httpStatusCode, 202);
      assert.equal(outcome.responseHeaders?.['transfer-encoding'], 'chunked');
      assert.equal(outcome.responseContentLength, 100_000);
    });

    it('stamps each attempt with its own time and keeps the id', async () => {
      const target = await receiver(accept);
      const first = new Date();
      const second = new Date(first.getTime() + 120_000);
      await send(target.url, { now: () => first });
      await send(target.url, { now: () => second });
      const [one, two] = target.requests;
      assert.equal(one.headers['webhook-timestamp'], String(Math.floor(first.getTime() / 1000)));
      assert.equal(two.headers['webhook-timestamp'], String(Math.floor(second.getTime() / 1000)));
      assert.equal(one.headers['webhook-id'], two.headers['webhook-id']);
      assert.notEqual(one.headers['webhook-signature'], two.headers['webhook-signature']);
      for (const request of [one, two]) assert.deepEqual(verifyAsReceiver(secret, request), JSON.parse(body));
    });

    it('carries both signatures during a rotation: either secret verifies, an unrelated one does not', async () => {
      const target = await receiver(accept);
      const previous = newWebhookSigningSecret();
      await send(target.url, { secrets: [secret, previous] });
      const [request] = target.requests;
      assert.equal(request.headers['webhook-signature'].split(' ').length, 2);
      assert.deepEqual(verifyAsReceiver(secret, request), JSON.parse(body));
      assert.deepEqual(verifyAsReceiver(previous, request), JSON.parse(body));
      assert.throws(() => verifyAsReceiver(newWebhookSigningSecret(), request), { message: 'No matching signature found' });
    });

    it('reuses one keep-alive connection for consecutive deliveries', async () => {
      const target = await receiver(accept);
      assert.equal((await send(target.url)).ok, true);
      assert.equal((await send(target.url)).ok, true);
      assert.equal(target.requests.length, 2);
      assert.equal(target.connections, 1);
    });

    it('keeps whole response headers up to 8 KiB and drops the ones beyond', async () => {
      const big = 'v'.repeat(1_000);
      const target = await receiver((_request, response) => {
        for (let index = 0; index < 12; index++) response.setHeader(`x-big-${index}`, big);
        response.setHeader('x-small', 'kept');
        response.writeHead(200).end();
      });
      const outcome = await send(target.url);
      const headers = outcome.responseHeaders ?? {};
      const size = Object.entries(headers).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);
      assert.ok(size <= WEBHOOK_RESPONSE_HEADERS_MAX_BYTES, `${size} bytes kept`);
      const bigKept = Object.keys(headers).filter((name) => name.startsWith('x-big-'));
      assert.ok(bigKept.length >= 7 && bigKept.length < 12, `${bigKept.length} big headers kept`);
      for (const name of bigKept) assert.equal(headers[name], big);
      assert.equal(headers['x-small'], 'kept');
    });
  });

  describe('when the receiver answers otherwise', () => {
    it('fails on a 500 and reports the status', async () => {
      const target = await receiver((_request, response) => response.writeHead(500).end('boom'));
      const outcome = await send(target.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.httpStatusCode, 500);
      assert.equal(outcome.errorMessage, 'HTTP 500');
      assert.equal(outcome.responseContentLength, 4);
      assert.equal(outcome.retryAfterMs, undefined);
      assert.equal(outcome.gone, false);
      assert.equal(outcome.connectFailed, undefined, 'the receiver was reached');
    });

    it('does not follow a 302: the attempt fails and the Location is never called', async () => {
      const elsewhere = await receiver(accept);
      const target = await receiver((_request, response) => response.writeHead(302, { location: elsewhere.url }).end());
      const outcome = await send(target.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.httpStatusCode, 302);
      assert.equal(outcome.errorMessage, 'redirect not followed (302)');
      assert.equal(outcome.responseHeaders?.location, elsewhere.url);
      assert.equal(elsewhere.requests.length, 0);
    });

    it('reports a 410 as gone', async () => {
      const target = await receiver((_request, response) => response.writeHead(410).end());
      const outcome = await send(target.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.gone, true);
      assert.equal(outcome.errorMessage, 'HTTP 410');
    });

    it('reads Retry-After on a 429 as seconds and on a 503 as a date', async () => {
      const now = new Date('2030-01-01T00:00:00Z');
      const throttled = await receiver((_request, response) => response.writeHead(429, { 'retry-after': '120' }).end());
      const unavailable = await receiver((_request, response) => response.writeHead(503, { 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' }).end());
      const throttledOutcome = await send(throttled.url, { now: () => now });
      assert.equal(throttledOutcome.httpStatusCode, 429);
      assert.equal(throttledOutcome.retryAfterMs, 120_000);
      assert.equal((await send(unavailable.url, { now: () => now })).retryAfterMs, 30_000);
    });

    it('ignores Retry-After on other statuses', async () => {
      const target = await receiver((_request, response) => response.writeHead(500, { 'retry-after': '120' }).end());
      const outcome = await send(target.url);
      assert.equal(outcome.retryAfterMs, undefined);
      assert.equal(outcome.responseHeaders?.['retry-after'], '120');
    });
  });

  describe('when no answer comes', () => {
    it('times out at the deadline with status 0', async () => {
      sender = new WebhookSender({ urlPolicy: { allowPrivateNetwork: true }, timeoutMs: 200 });
      const target = await receiver(() => undefined);
      const outcome = await send(target.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.httpStatusCode, 0);
      assert.equal(outcome.errorMessage, 'timed out after 200 ms');
      assert.equal(outcome.connectFailed, undefined, 'the receiver was reached');
      assert.equal(outcome.responseHeaders, null);
      assert.equal(outcome.responseContentLength, null);
      assert.ok(outcome.latencyMs >= 190 && outcome.latencyMs < 2_000, `${outcome.latencyMs} ms`);
      assert.equal(target.requests.length, 1);
    });

    it('counts a 2xx whose body stalls past the deadline as delivered, with its length unknown', async () => {
      sender = new WebhookSender({ urlPolicy: { allowPrivateNetwork: true }, timeoutMs: 200 });
      const target = await receiver((_request, response) => {
        response.writeHead(200);
        response.write('partial');
      });
      const outcome = await send(target.url);
      assert.equal(outcome.ok, true);
      assert.equal(outcome.httpStatusCode, 200);
      assert.equal(outcome.responseContentLength, null);
      assert.equal(outcome.errorMessage, undefined);
    });

    it('reports a refused connection with status 0', async () => {
      const closed = await startReceiver(accept);
      await closed.close();
      const outcome = await send(closed.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.httpStatusCode, 0);
      assert.equal(outcome.errorMessage, 'connection refused');
      assert.equal(outcome.connectFailed, true);
    });

    it('refuses a loopback receiver under the default policy before any request leaves', async () => {
      sender = new WebhookSender({ urlPolicy: { allowPrivateNetwork: false } });
      const target = await receiver(accept);
      const outcome = await send(target.url);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.httpStatusCode, 0);
      assert.equal(outcome.errorMessage, 'address not allowed: refused to connect to 127.0.0.1 (127.0.0.1), a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses');
      assert.equal(outcome.connectFailed, true);
      assert.equal(target.connections, 0);
      assert.equal(target.requests.length, 0);
    });

    it('names neither the secret nor the URL\'s token or credentials in any failure', async () => {
      const quiet = await receiver(() => undefined);
      const closed = await startReceiver(accept);
      await closed.close();
      sender = new WebhookSender({ urlPolicy: { allowPrivateNetwork: false }, timeoutMs: 200 });
      const permissive = new WebhookSender({ urlPolicy: { allowPrivateNetwork: true }, timeoutMs: 200 });
      try {
        const withToken = (url: string) => `${url}?token=tok_SECRET_QUERY`;
        const outcomes = [
          await sender.send({ url: withToken(quiet.url), id: 'whdel_1', body, secrets: [secret] }),
          await permissive.send({ url: withToken(quiet.url), id: 'whdel_1', body, secrets: [secret] }),
          await permissive.send({ url: withToken(closed.url), id: 'whdel_1', body, secrets: [secret] }),
          await permissive.send({ url: 'http://user:pa55word@127.0.0.1:9/', id: 'whdel_1', body, secrets: [secret] }),
          await permissive.send({ url: withToken('http://receiver.invalid/hooks'), id: 'whdel_1', body, secrets: [secret] }),
        ];
        assert.deepEqual(outcomes.map((outcome) => outcome.connectFailed ?? false), [true, false, true, false, true]);
        assert.deepEqual(outcomes.map((outcome) => outcome.errorMessage), [
          'address not allowed: refused to connect to 127.0.0.1 (127.0.0.1), a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses',
          'timed out after 200 ms',
          'connection refused',
          'the webhook URL carries credentials, which are never sent',
          'DNS lookup failed for receiver.invalid',
        ]);
        for (const text of outcomes.map((outcome) => JSON.stringify(outcome))) {
          for (const leak of ['tok_SECRET_QUERY', 'pa55word', secret, secret.slice(3)]) assert.ok(!text.includes(leak), `${text} leaks ${leak}`);
        }
      } finally {
        await permissive.close();
      }
    });
  });

  describe('when the caller aborts', () => {
    it('rejects with the abort reason while waiting for the receiver', async () => {
      const target = await receiver(() => undefined);
      const controller = new AbortController();
      const reason = new Error('node stopping');
      setTimeout(() => controller.abort(reason), 50);
      await assert.rejects(send(target.url, { signal: controller.signal }), (error) => error === reason);
    });

    it('rejects at once, sending nothing, when the signal was already aborted', async () => {
      const target = await receiver(accept);
      const reason = new Error('actor cancelled');
      await assert.rejects(send(target.url, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
      assert.equal(target.connections, 0);
    });

    it('rejects with the reason while the body is still arriving', async () => {
      const controller = new AbortController();
      const reason = new Error('node stopping');
      const target = await receiver((_request, response) => {
        response.writeHead(200);
        response.write('partial');
        setTimeout(() => controller.abort(reason), 50);
      });
      await assert.rejects(send(target.url, { signal: controller.signal }), (error) => error === reason);
    });
  });
});
