// The Koa application: request context and metrics outermost, then error
// mapping, then the routers, then 405/404 for what no router answered.
// createApp does not listen, so tests drive app.callback().
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { DependencyHealthPort } from '../src/ports/dependency-health';
import type { OpenObjectiveCounts } from '../src/ports/objectives-store';
import { errorHandler } from './middleware/errors';
import { collectProcessMetrics, requestMetrics } from './middleware/metrics';
import { noRoute } from './middleware/no-route';
import { openObjectiveGauges } from './middleware/read-model-metrics';
import { requestContext } from './middleware/request-context';
import { requestTracing } from './middleware/tracing';
import { tracingEnabled } from '../src/tracing/tracing';
import { mountRoutes, type MountDependencies } from './mount';
import { buildOpenApiDocument } from './openapi';
import type { RouteDefinition } from './route';
import { docsRoutes } from './routes/docs.routes';
import { systemRoutes } from './routes/system.routes';
import { widgetHost, type WidgetHostOptions } from './widget-host/widget-host';

/** The mounted API router, kept on the app so tests can walk what is really served. */
export const API_ROUTER = Symbol('agentrt.apiRouter');

export interface AppDependencies {
  logger: Logger;
  routes: RouteDefinition[];
  mount: MountDependencies;
  checkReady: () => Promise<void>;
  version: string;
  /** Whether Postgres and NATS are reachable: the error handler reports database failures to it and answers 503 while one is down. */
  health?: DependencyHealthPort;
  /** The read model's open objectives, counted into /metrics at scrape time (ObjectivesStore.openCounts); absent: not exported. */
  openObjectiveCounts?: () => Promise<OpenObjectiveCounts>;
  /** Serves the widget host's paths on the widgets' hostnames (http/widget-host); absent: every request is the API's. */
  widgetHost?: WidgetHostOptions;
}

export function createApp(deps: AppDependencies): Koa {
  const app = new Koa({ proxy: false });
  // Koa's own error logging is replaced by errorHandler, which logs once.
  app.silent = true;
  const openApi = buildOpenApiDocument(deps.routes, deps.version);
  const api = new Router();
  mountRoutes(api, deps.routes, deps.mount);
  Object.defineProperty(app, API_ROUTER, { value: api });
  collectProcessMetrics();
  const system = systemRoutes({
    checkReady: deps.checkReady, openApiDocument: () => openApi, deadReason: () => deps.health?.deadReason(),
    beforeScrape: deps.openObjectiveCounts && openObjectiveGauges({ read: deps.openObjectiveCounts, logger: deps.logger }),
  });
  // Tracing (only when on), request context and metrics wrap the error handler, so they see the final status.
  if (tracingEnabled()) app.use(requestTracing());
  app.use(requestContext(deps.logger));
  app.use(requestMetrics());
  app.use(errorHandler(deps.logger, deps.health));
  // Before every router: the widget host's own paths on a widget's hostname (no API path is one of them).
  if (deps.widgetHost) app.use(widgetHost(deps.widgetHost));
  app.use(system.routes());
  app.use(docsRoutes().routes());
  app.use(api.routes());
  app.use(noRoute());
  return app;
}
