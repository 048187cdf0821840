import assert from 'node:assert/strict';
import pino from 'pino';
import type Koa from 'koa';
import { Writable } from 'node:stream';
import { errorHandler } from '../../http/middleware/errors';
import { errors as natsErrors } from '@nats-io/nats-core';
import { DependencyHealth } from '../../actors/runtime/dependency-health';

/** Runs the error middleware over a `next` that throws, and answers what it wrote. */
async function answerTo(thrown: unknown, health?: DependencyHealth): Promise<{ status: number; body: { code: number; message: string }; retryAfter?: string }> {
  const headers: Record<string, string> = {};
  const ctx = { state: { requestId: 'req_1', routePath: '/v1/x' }, set: (name: string, value: string) => void (headers[name.toLowerCase()] = value) } as unknown as Koa.Context;
  await errorHandler(pino({ level: 'silent' }), health)(ctx, async () => {
    throw thrown;
  });
  return { status: ctx.status, body: ctx.body as { code: number; message: string }, retryAfter: headers['retry-after'] };
}

describe('error middleware', () => {
  it('answers UNAVAILABLE with Retry-After when the database went away, not INTERNAL', async () => {
    for (const thrown of [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
      { driverError: { code: '08006' }, message: 'query failed' },
      // What pg and TypeORM throw against a stopped or overloaded server, wrapped or not.
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], 'connect failed'),
      new Error('loading the service key failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }),
    ]) {
      const answer = await answerTo(thrown);
      assert.equal(answer.status, 503, String((thrown as Error).message));
      assert.equal(answer.body.code, 14);
      // The one wording of DependencyHealth and docs/operations.md.
      assert.equal(answer.body.message, 'the database (PostgreSQL) is unreachable; retry shortly');
      assert.equal(answer.retryAfter, '1');
    }
  });

  it('reports a lost database to the health tracker (one warning for many requests) instead of a warning per request', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino({ level: 'debug' }, new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } }));
    const health = new DependencyHealth({ logger });
    health.track('postgres');
    try {
      for (let request = 0; request < 4; request += 1) {
        const answer = await answerTo(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), health);
        assert.equal(answer.status, 503);
      }
      assert.equal(health.isUp('postgres'), false);
      assert.equal(lines.filter((line) => line.level >= 40).length, 1);
    } finally {
      health.stop();
    }
  });

  it('answers UNAVAILABLE naming the dependency, not INTERNAL, for any failure while a dependency is known down', async () => {
    const health = new DependencyHealth({ logger: pino({ level: 'silent' }) });
    health.track('nats');
    try {
      assert.equal((await answerTo(new Error('secret detail'), health)).status, 500, 'INTERNAL while everything is up');
      health.down('nats');
      const answer = await answerTo(new Error('secret detail'), health);
      assert.equal(answer.status, 503);
      assert.equal(answer.body.message, 'the message bus (NATS) is unreachable; retry shortly');
      assert.equal(answer.retryAfter, '1');
    } finally {
      health.stop();
    }
  });

  it('never answers or reports a NATS connection failure as the database\'s', async () => {
    const health = new DependencyHealth({ logger: pino({ level: 'silent' }) });
    health.track('postgres');
    health.track('nats');
    // What nats.js throws when the NATS server refuses the connection: its cause is a socket error, as pg's are.
    const natsRefused = new natsErrors.ConnectionError('connection refused', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4222'), { code: 'ECONNREFUSED' }),
    });
    try {
      assert.notEqual((await answerTo(natsRefused, health)).body.message, 'the database (PostgreSQL) is unreachable; retry shortly');
      assert.equal(health.isUp('postgres'), true);
      health.down('nats');
      const answer = await answerTo(natsRefused, health);
      assert.equal(answer.status, 503);
      assert.equal(answer.body.message, 'the message bus (NATS) is unreachable; retry shortly');
      assert.equal(health.isUp('postgres'), true, 'the database is not reported down');
    } finally {
      health.stop();
    }
  });

  it('keeps INTERNAL, with the request id and nothing of the cause, for anything else', async () => {
    const answer = await answerTo(new Error('secret detail'));
    assert.equal(answer.status, 500);
    assert.equal(answer.body.message, 'internal error (request id req_1)');
  });
});
