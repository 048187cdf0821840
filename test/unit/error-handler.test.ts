import assert from 'node:assert/strict';
import pino from 'pino';
import type Koa from 'koa';
import { errorHandler } from '../../http/middleware/errors';

/** Runs the error middleware over a `next` that throws, and answers what it wrote. */
async function answerTo(thrown: unknown): Promise<{ status: number; body: { code: number; message: string }; retryAfter?: string }> {
  const headers: Record<string, string> = {};
  const ctx = { state: { requestId: 'req_1', routePath: '/v1/x' }, set: (name: string, value: string) => void (headers[name.toLowerCase()] = value) } as unknown as Koa.Context;
  await errorHandler(pino({ level: 'silent' }))(ctx, async () => {
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
    ]) {
      const answer = await answerTo(thrown);
      assert.equal(answer.status, 503, String((thrown as Error).message));
      assert.equal(answer.body.code, 14);
      assert.equal(answer.body.message, 'the database is unreachable; retry shortly');
      assert.equal(answer.retryAfter, '1');
    }
  });

  it('keeps INTERNAL, with the request id and nothing of the cause, for anything else', async () => {
    const answer = await answerTo(new Error('secret detail'));
    assert.equal(answer.status, 500);
    assert.equal(answer.body.message, 'internal error (request id req_1)');
  });
});
