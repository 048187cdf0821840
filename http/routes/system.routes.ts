// Operational endpoints outside /v1 auth: liveness, readiness, metrics, the
// OpenAPI document (public, like any API description), and `GET /`, which
// points a newcomer at the API reference.
import Router from '@koa/router';
import { UnavailableError } from '../../src/errors';
import { unreachableReason } from '../../src/ports/dependency-health';
import { writeError } from '../middleware/errors';
import { metricsText } from '../middleware/metrics';
import { OPENAPI_DOCUMENT_PATH } from '../openapi';

export interface SystemRoutesDependencies {
  /** Resolves when the node can serve (not draining, every dependency reachable); rejects otherwise, with an UnavailableError saying why. */
  checkReady: () => Promise<void>;
  openApiDocument: () => Record<string, unknown>;
  /** Why the node must be restarted (a dependency it can never reach again); undefined while it recovers on its own. */
  deadReason?: () => string | undefined;
  /** Brings the gauges read at scrape time up to date (the read model's open objectives). */
  beforeScrape?: () => Promise<void>;
}

export function systemRoutes({ checkReady, openApiDocument, deadReason, beforeScrape }: SystemRoutesDependencies): Router {
  const router = new Router();
  router.get('/', (ctx) => {
    ctx.state.routePath = '/';
    ctx.body = {
      name: 'agentrt',
      docs: '/docs',
      openapi: '/v1/openapi.json',
      readme: 'README.md at the root of the agentrt source: first steps, configuration, commands',
    };
  });
  router.get('/healthz', (ctx) => {
    ctx.state.routePath = '/healthz';
    // Only what a restart cures fails liveness: a dependency's outage is for /readyz.
    const dead = deadReason?.();
    if (dead) writeError(ctx, new UnavailableError(`not live: ${dead}`));
    else ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.state.routePath = '/readyz';
    try {
      await checkReady();
      ctx.body = { status: 'ready' };
    } catch (error) {
      const reason = error instanceof UnavailableError ? error.message : unreachableReason(['postgres']);
      const retryAfterSeconds = error instanceof UnavailableError ? error.retryAfterSeconds : undefined;
      writeError(ctx, new UnavailableError(`not ready: ${reason}`, { retryAfterSeconds }));
    }
  });
  router.get('/metrics', async (ctx) => {
    ctx.state.routePath = '/metrics';
    await beforeScrape?.();
    const { contentType, body } = await metricsText();
    ctx.type = contentType;
    ctx.body = body;
  });
  router.get(OPENAPI_DOCUMENT_PATH, (ctx) => {
    ctx.state.routePath = OPENAPI_DOCUMENT_PATH;
    ctx.body = openApiDocument();
  });
  return router;
}
