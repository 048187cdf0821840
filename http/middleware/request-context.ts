// Request id and access log: every request gets an id (X-Request-Id, echoed back)
// and one structured log line when it ends. Secrets never reach the log: only
// method, route, status, duration and who called are logged. Probes and
// scrapes (/healthz, /readyz, /metrics), which arrive every few seconds, log at
// debug so that they do not drown the requests a person wants to see.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { newUlid } from '../../src/ids';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** Routes polled by load balancers, orchestrators and Prometheus: logged at debug. */
const PROBE_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

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
      const route: string = ctx.state.routePath ?? ctx.path;
      logger[PROBE_ROUTES.has(route) ? 'debug' : 'info'](
        {
          requestId,
          method: ctx.method,
          route,
          status: ctx.status,
          durationMs: Math.round(durationMs * 10) / 10,
          principal: ctx.state.principal?.apiKeyId ?? ctx.state.principal?.profileId,
        },
        'request',
      );
    }
  };
}
