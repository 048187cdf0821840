import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, REDACTED } from '../../src/logger';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'debug', destination }) };
}

describe('createLogger', () => {
  it('redacts secrets at the top level and up to four objects deep', () => {
    const { lines, logger } = capture();
    logger.info({
      token: 'T0',
      req: { headers: { authorization: 'Bearer T1', accept: 'json' } },
      body: { spec: { value: 'S1', apiKey: 'K1', description: 'kept' } },
      deep: { a: { b: { c: { password: 'P4' } } } },
    });
    const text = JSON.stringify(lines[0]);
    for (const secret of ['T0', 'T1', 'S1', 'K1', 'P4']) assert.ok(!text.includes(secret), `${secret} was logged`);
    assert.equal(lines[0].token, REDACTED);
    assert.deepEqual(lines[0].req, { headers: { authorization: REDACTED, accept: 'json' } });
    assert.equal((lines[0].body as { spec: { description: string } }).spec.description, 'kept');
  });

  it('redacts the bound parameters of a failed query', () => {
    const { lines, logger } = capture();
    logger.error({ err: { message: 'duplicate key', parameters: ['sk-secret'] } }, 'query failed');
    assert.ok(!JSON.stringify(lines[0]).includes('sk-secret'));
  });

  it('keeps the request and listening messages and their fields in JSON lines (log queries and tests look for them)', () => {
    const { lines, logger } = capture();
    logger.info({ method: 'GET', route: '/v1/account', status: 200, durationMs: 1.2 }, 'request');
    logger.info({ url: 'http://127.0.0.1:8080' }, 'listening');
    assert.deepEqual(lines.map(({ msg, method, route, status, durationMs, url }) => ({ msg, method, route, status, durationMs, url })), [
      { msg: 'request', method: 'GET', route: '/v1/account', status: 200, durationMs: 1.2, url: undefined },
      { msg: 'listening', method: undefined, route: undefined, status: undefined, durationMs: undefined, url: 'http://127.0.0.1:8080' },
    ]);
  });

  it('refuses an unknown level, naming LOG_LEVEL', () => {
    assert.throws(() => createLogger({ level: 'loud' }), /LOG_LEVEL must be one of/);
  });
});

describe('createLogger({ format: "pretty" })', () => {
  function capturePretty() {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    return { chunks, logger: createLogger({ level: 'info', format: 'pretty', destination }) };
  }

  it('writes one line per entry: local time, level, message, then the fields on the same line', () => {
    const { chunks, logger } = capturePretty();
    logger.info({ file: '/data/master.key' }, 'master key generated');
    assert.equal(chunks.length, 1);
    assert.match(chunks[0], /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: master key generated \{"file":"\/data\/master\.key"\}\n$/);
  });

  it('writes a request as method, route, status and duration, then its other fields', () => {
    const { chunks, logger } = capturePretty();
    logger.info({ requestId: 'req_1', method: 'GET', route: '/v1/workspaces/:workspaceId/agents', status: 200, durationMs: 3.6, principal: 'apikey_1' }, 'request');
    assert.match(chunks[0], /\] INFO: GET \/v1\/workspaces\/:workspaceId\/agents 200 3\.6 ms \{"requestId":"req_1","principal":"apikey_1"\}\n$/);
  });

  it('writes where the node listens in the message, then its other fields', () => {
    const { chunks, logger } = capturePretty();
    logger.info({ url: 'http://127.0.0.1:8080', nodeId: 'node-1' }, 'listening');
    assert.match(chunks[0], /\] INFO: listening on http:\/\/127\.0\.0\.1:8080 \{"nodeId":"node-1"\}\n$/);
  });

  it('redacts secrets as in JSON lines', () => {
    const { chunks, logger } = capturePretty();
    logger.info({ token: 'T0', req: { headers: { authorization: 'Bearer T1' } } }, 'request');
    assert.ok(!chunks.join('').includes('T0') && !chunks.join('').includes('T1'), chunks.join(''));
    assert.ok(chunks.join('').includes(REDACTED));
  });

  it('writes no colour codes to a destination that is not a terminal', () => {
    const { chunks, logger } = capturePretty();
    logger.warn('careful');
    assert.doesNotMatch(chunks.join(''), /\x1b\[/);
  });
});
