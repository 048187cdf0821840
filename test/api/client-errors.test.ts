// Refusals node:http makes before Koa sees a request (http/client-errors.ts),
// sent over raw sockets: each answer is a Status body with the right code, and
// the node serves requests normally afterwards.
import assert from 'node:assert/strict';
import net from 'node:net';
import { clientErrorAnswer } from '../../http/client-errors';
import { startTestApi, type TestApi } from '../support/api';
import { Code, newAccount, type TestAccount } from '../support/fixtures';

const DEADLINE_EXCEEDED = 4;
const HEADERS_TIMEOUT_MS = 400;
const REQUEST_TIMEOUT_MS = 800;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: { code: number; message: string; details: Array<Record<string, unknown>> };
  /** Milliseconds from connecting to the connection's close. */
  elapsedMs: number;
}

/** Writes `chunks` on a new connection (without ending it) and reads until the server closes it. */
function rawExchange(url: string, ...chunks: string[]): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const received: Buffer[] = [];
    const socket = net.connect(Number(port), hostname, () => {
      for (const chunk of chunks) socket.write(chunk);
    });
    socket.on('data', (data) => received.push(data));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve({ ...parseResponse(Buffer.concat(received).toString('utf8')), elapsedMs: Date.now() - started });
      } catch (error) {
        reject(error);
      }
    });
  });
}

function parseResponse(text: string): Omit<RawAnswer, 'elapsedMs'> {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no complete HTTP response: ${JSON.stringify(text)}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  }));
  const body = text.slice(end + 4);
  assert.equal(Buffer.byteLength(body), Number(headers['content-length']), 'Content-Length matches the body');
  return { status, headers, body: JSON.parse(body) };
}

function assertRawStatus(answer: RawAnswer, httpStatus: number, code: number, message: RegExp): void {
  assert.equal(answer.status, httpStatus, JSON.stringify(answer));
  assert.equal(answer.body.code, code, JSON.stringify(answer.body));
  assert.match(answer.body.message, message);
  assert.ok(Array.isArray(answer.body.details));
  assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(answer.headers.connection, 'close');
  assert.match(answer.headers['x-request-id'], /^[0-9A-HJKMNP-TV-Z]{26}$/);
}

describe('client errors answered before routing', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi({
      server: { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 50 },
    });
    account = await newAccount(api);
  });
  after(async () => api.close());

  afterEach(async () => {
    const health = await api.request('GET', '/healthz');
    assert.equal(health.status, 200, 'the node stays healthy');
  });

  describe('when the request headers are 16 KiB or more', () => {
    it('answers 431 INVALID_ARGUMENT naming the limit, for one large header', async () => {
      const answer = await rawExchange(api.url, `GET /healthz HTTP/1.1\r\nHost: agentrt\r\nX-Large: ${'a'.repeat(20_000)}\r\n\r\n`);
      assertRawStatus(answer, 431, Code.INVALID_ARGUMENT, /^\(headers\): request line and headers exceed the 16384-byte limit$/);
      assert.deepEqual(answer.body.details, [{
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: '(headers)', description: 'request line and headers exceed the 16384-byte limit' }],
      }]);
    });

    it('answers 431 while the client is still sending a megabyte of headers', async () => {
      const answer = await rawExchange(api.url, `GET /healthz HTTP/1.1\r\nHost: agentrt\r\nX-Large: ${'c'.repeat(1 << 20)}\r\n\r\n`);
      assertRawStatus(answer, 431, Code.INVALID_ARGUMENT, /exceed the 16384-byte limit/);
    });

    it('answers 431 for many small headers, with a token in them never echoed', async () => {
      const headers = Array.from({ length: 400 }, (_, index) => `X-Filler-${index}: ${'b'.repeat(40)}\r\n`).join('');
      const request = `GET /v1/account HTTP/1.1\r\nHost: agentrt\r\nAuthorization: Bearer ${account.globalToken}\r\n${headers}\r\n`;
      const answer = await rawExchange(api.url, request);
      assertRawStatus(answer, 431, Code.INVALID_ARGUMENT, /exceed the 16384-byte limit/);
      assert.ok(!JSON.stringify(answer).includes(account.globalToken));
    });
  });

  describe('when the request line is malformed', () => {
    it('answers 400 INVALID_ARGUMENT for an unknown method', async () => {
      const answer = await rawExchange(api.url, 'FETCH!/healthz HTTP/1.1\r\nHost: agentrt\r\n\r\n');
      assertRawStatus(answer, 400, Code.INVALID_ARGUMENT, /^\(request\): malformed HTTP request: Invalid method encountered$/);
    });

    it('answers 400 INVALID_ARGUMENT for a line that is not HTTP', async () => {
      const answer = await rawExchange(api.url, 'GET /healthz HTTP/9.9 please\r\n\r\n');
      assertRawStatus(answer, 400, Code.INVALID_ARGUMENT, /^\(request\): malformed HTTP request: /);
    });
  });

  describe('when a header is malformed', () => {
    it('answers 400 INVALID_ARGUMENT for a space in a header name', async () => {
      const answer = await rawExchange(api.url, 'GET /healthz HTTP/1.1\r\nHost: agentrt\r\nBad Header: value\r\n\r\n');
      assertRawStatus(answer, 400, Code.INVALID_ARGUMENT, /^\(request\): malformed HTTP request: Invalid header (token|field char)/i);
    });

    it('answers 400 INVALID_ARGUMENT for a line without a colon', async () => {
      const answer = await rawExchange(api.url, 'GET /healthz HTTP/1.1\r\nHost: agentrt\r\nno colon here\r\n\r\n');
      assertRawStatus(answer, 400, Code.INVALID_ARGUMENT, /^\(request\): malformed HTTP request: /);
    });

    it('answers 400 INVALID_ARGUMENT for both Content-Length and chunked encoding', async () => {
      const answer = await rawExchange(api.url, 'POST /healthz HTTP/1.1\r\nHost: agentrt\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
      assertRawStatus(answer, 400, Code.INVALID_ARGUMENT, /^\(request\): malformed HTTP request: /);
    });
  });

  describe('when a request does not arrive in time', () => {
    it('answers 408 DEADLINE_EXCEEDED to headers that never end', async () => {
      const answer = await rawExchange(api.url, 'GET /healthz HTTP/1.1\r\nHost: agentrt\r\n');
      assertRawStatus(answer, 408, DEADLINE_EXCEEDED,
        new RegExp(`^request not received in time: headers must arrive within ${HEADERS_TIMEOUT_MS} ms and the whole request within ${REQUEST_TIMEOUT_MS} ms$`));
      assert.ok(answer.elapsedMs >= HEADERS_TIMEOUT_MS, `answered after ${answer.elapsedMs} ms`);
    });

    it('answers 408 DEADLINE_EXCEEDED to a body that never ends, while the route waits for it', async () => {
      const answer = await rawExchange(api.url, [
        'POST /v1/account/workspaces HTTP/1.1', 'Host: agentrt', `Authorization: Bearer ${account.globalToken}`,
        'Content-Type: application/json', 'Content-Length: 100', '', '{"metadata":',
      ].join('\r\n'));
      assertRawStatus(answer, 408, DEADLINE_EXCEEDED, /^request not received in time/);
      assert.ok(answer.elapsedMs >= REQUEST_TIMEOUT_MS, `answered after ${answer.elapsedMs} ms`);
    });
  });

  describe('afterwards', () => {
    it('serves a complete request on a raw connection', async () => {
      const { hostname, port } = new URL(api.url);
      const text = await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const socket = net.connect(Number(port), hostname, () => socket.write('GET /healthz HTTP/1.1\r\nHost: agentrt\r\nConnection: close\r\n\r\n'));
        socket.on('data', (data) => chunks.push(data));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      });
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    });
  });
});

describe('clientErrorAnswer(error, limits)', () => {
  const limits = { maxHeaderSize: 8192, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };
  const parserError = (code: string, reason?: string) => Object.assign(new Error('Parse Error'), { code, reason });

  it('writes nothing to a connection the client reset', () => {
    assert.equal(clientErrorAnswer(parserError('ECONNRESET'), limits), null);
  });

  it('answers an oversized chunk extension with 413 INVALID_ARGUMENT', () => {
    const answer = clientErrorAnswer(parserError('HPE_CHUNK_EXTENSIONS_OVERFLOW', 'Chunk extensions overflow'), limits);
    assert.equal(answer?.httpStatus, 413);
    assert.deepEqual(answer?.error.toStatus().code, Code.INVALID_ARGUMENT);
  });

  it('names the configured header limit and timeouts', () => {
    assert.equal(clientErrorAnswer(parserError('HPE_HEADER_OVERFLOW'), limits)?.error.message, '(headers): request line and headers exceed the 8192-byte limit');
    assert.equal(clientErrorAnswer(parserError('ERR_HTTP_REQUEST_TIMEOUT'), limits)?.error.message,
      'request not received in time: headers must arrive within 10000 ms and the whole request within 30000 ms');
  });

  it('does not repeat a reason that is not a fixed parser text', () => {
    const answer = clientErrorAnswer(parserError('EPROTO', 'bytes "secret" received'), limits);
    assert.equal(answer?.httpStatus, 400);
    assert.equal(answer?.error.message, '(request): malformed HTTP request: the request could not be parsed');
  });
});
