// First middleware of the chain: every failure becomes the Status body with the
// grpc-gateway HTTP status (api-decisions.md). Only ApiError messages reach
// clients; anything else is logged and answered with a generic INTERNAL.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { InternalError, toApiError, type ApiError, type StatusCode } from '../../src/errors';
import { postgresUnavailableError } from '../../persistence/runtime/pg-errors';
import type { DependencyHealthPort } from '../../src/ports/dependency-health';

/** grpc-gateway mapping from code name to HTTP status. */
export const HTTP_STATUS: Record<StatusCode, number> = {
  OK: 200,
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  UNAUTHENTICATED: 401,
};

/** An edge error whose HTTP status differs from the table (413 body too large, 415 content type). */
export interface HttpStatusOverride {
  httpStatus?: number;
}

function statusOf(error: ApiError): number {
  return (error as HttpStatusOverride).httpStatus ?? HTTP_STATUS[error.code];
}

/** Writes an ApiError as the Status body on a Koa context. */
export function writeError(ctx: Koa.Context, error: ApiError): void {
  ctx.status = statusOf(error);
  ctx.body = error.toStatus();
  if (error.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
}

/**
 * The error middleware. With `health`, a broken database connection is
 * reported to it (one warning per outage, its probe tells when it is back)
 * rather than logged per request, and while a dependency is known down any
 * other failure answers UNAVAILABLE too: a request failing then failed for it.
 */
export function errorHandler(logger: Logger, health?: DependencyHealthPort): Koa.Middleware {
  return async function errorHandler(ctx, next) {
    try {
      await next();
    } catch (thrown) {
      const error = toApiError(thrown);
      // The database went away (restarted, failing over): a retry soon may work, so say so rather than INTERNAL.
      const databaseAway = error.code === 'INTERNAL' ? postgresUnavailableError(thrown, health) : undefined;
      if (databaseAway) {
        if (!health) logger.warn({ err: thrown, requestId: ctx.state.requestId, route: ctx.state.routePath }, 'database unreachable');
        writeError(ctx, databaseAway);
        return;
      }
      const away = error.code === 'INTERNAL' ? health?.unavailable()[0] : undefined;
      if (away) {
        logger.debug({ err: thrown, requestId: ctx.state.requestId, route: ctx.state.routePath, dependency: away }, 'request failed while a dependency is unreachable');
        writeError(ctx, health!.unavailableError(away));
        return;
      }
      if (error.code === 'INTERNAL') {
        logger.error({ err: error.cause ?? error, requestId: ctx.state.requestId, route: ctx.state.routePath }, 'unhandled error');
        writeError(ctx, new InternalError(`internal error (request id ${ctx.state.requestId})`));
        return;
      }
      writeError(ctx, error);
    }
  };
}
