// The HTTP request's span (docs/operations.md "Tracing"): a server span named
// by the route template (`POST /v1/workspaces/{workspaceId}/objectives`),
// continuing the caller's `traceparent` when it sends a valid one, active
// while the request runs, so what the request starts (an objective, a command
// to an actor on any node) continues its trace. Mounted outermost, and only
// while tracing is on, so it sees the final status and costs nothing when off.
import type Koa from 'koa';
import { openSpan, SpanKind } from '../../src/tracing/tracing';

/** A 5xx is the server's failure; a 4xx is the caller's and leaves the server span unset (HTTP semantic conventions). */
const SERVER_ERROR = 500;

export function requestTracing(): Koa.Middleware {
  return async function requestTracing(ctx, next) {
    const span = openSpan(ctx.method, {
      kind: SpanKind.SERVER,
      parent: ctx.get('traceparent') || null,
      attributes: {
        'http.request.method': ctx.method, 'url.scheme': ctx.protocol, 'server.address': ctx.hostname,
        ...(Number(ctx.URL.port) > 0 ? { 'server.port': Number(ctx.URL.port) } : {}),
        ...(ctx.get('user-agent') ? { 'user_agent.original': ctx.get('user-agent') } : {}),
      },
    });
    if (!span) return next();
    let failure: unknown;
    try {
      await span.run(next);
    } catch (error) {
      // Only what the error handler let through (a stream cut); its status was not written.
      failure = error;
      throw error;
    } finally {
      const route: string | undefined = ctx.state.routePath;
      if (route) span.rename(`${ctx.method} ${route}`);
      span.setAttributes({
        'http.response.status_code': ctx.status,
        // The path only of a request a route took (ids and names of the API's own resources): a path no
        // route knows is whatever a caller typed, which spans do not keep.
        ...(route ? { 'http.route': route, 'url.path': ctx.path } : {}),
        ...(ctx.state.requestId ? { 'agentrt.request.id': ctx.state.requestId } : {}),
      });
      span.end(failure ?? (ctx.status >= SERVER_ERROR ? new HttpServerError(ctx.status) : undefined));
    }
  };
}

/** How a 5xx answer is recorded on the span: `error.type` is the status code, as the conventions ask. */
class HttpServerError extends Error {
  readonly type: string;

  constructor(status: number) {
    super(`HTTP ${status}`);
    this.type = String(status);
  }
}
