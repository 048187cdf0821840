// Request id and access log: every request gets an id (X-Request-Id, echoed back)
// and one structured log line when it ends. Secrets never reach the log: only
// method, route, status, duration and who called are logged.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { newUlid } from '../../src/ids';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestContext(logger: Logger): Koa.Middleware {
  return async function requestContext(ctx, next) {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : newUlid();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          requestId,
          method: ctx.method,
          route: ctx.state.routePath ?? ctx.path,
          status: ctx.status,
          durationMs: Math.round(durationMs * 10) / 10,
          principal: ctx.state.principal?.apiKeyId ?? ctx.state.principal?.profileId,
        },
        'request',
      );
    }
  };
}
