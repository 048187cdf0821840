// The widget host (api-decisions "Widgets"): a request whose Host is a
// widget's hostname is answered here (the chat page, the loader, the page's
// files, the /api routes of a visitor's session) and never reaches the API;
// any other request passes through untouched after one memoised lookup.
import type Koa from 'koa';
import type { RateLimiter } from '../../src/auth/rate-limiter';
import { NotFoundError } from '../../src/errors';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import type { WidgetVisitorLimits } from '../../src/config';
import type { WidgetSessionVerifier } from '../../src/ports/widget-sessions';
import type { ObjectiveLiveFeed } from '../../src/ports/objective-live';
import { streamSettings, type ObjectiveRoutesOptions } from '../routes/objectives.routes';
import { widgetApiRoutes } from './api.routes';
import { VisitorLimits } from './visitor-limits';
import { widgetCors } from './cors';
import { widgetPages, type WidgetPagesOptions } from './pages';
import { requestHostname, type WidgetRequest } from './widget-site';

export interface WidgetHostOptions {
  widgets: WidgetSessionVerifier;
  /** The API's own hostname (config.publicUrl's): always the API's, whatever widget row names it. */
  apiHostname?: string;
  objectives: ObjectiveService;
  rateLimiter: RateLimiter;
  bodyLimitBytes: number;
  visitorLimits: WidgetVisitorLimits;
  isDraining?: () => boolean;
  /** SSE timings (tests shorten them). */
  stream?: ObjectiveRoutesOptions['stream'];
  /** Answer deltas and commit nudges for the visitors' streams. @default none: streams poll */
  live?: ObjectiveLiveFeed;
  pages?: WidgetPagesOptions;
}

export function widgetHost(options: WidgetHostOptions): Koa.Middleware {
  const api = widgetApiRoutes({ ...options, visitorLimits: new VisitorLimits(options.visitorLimits), stream: streamSettings(options) });
  const pages = widgetPages(options.pages);
  const cors = widgetCors();
  const routes = api.routes();
  const end = async () => undefined;
  /** The page and its files, else (under /api) CORS then the session's routes. */
  const serve = (ctx: Koa.Context) => pages(ctx, async () => {
    if (ctx.path === '/api' || ctx.path.startsWith('/api/')) await cors(ctx, () => routes(ctx as Parameters<typeof routes>[0], end));
  });
  return async function widgetHost(ctx, next) {
    const hostname = requestHostname(ctx);
    const site = hostname && hostname !== options.apiHostname ? await options.widgets.widgetByHostname(hostname) : null;
    if (!site) return next();
    ctx.state.widget = { hostname: hostname!, site } satisfies WidgetRequest;
    try {
      await serve(ctx);
    } finally {
      // The metrics' route label: a template, never the path (scanners must not grow the label set).
      const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
      ctx.state.routePath ??= matched ? `widget ${matched}` : undefined;
    }
    // Nothing of the API answers on a widget host.
    if (ctx.body === undefined && ctx.status === 404) throw new NotFoundError(`no widget route for ${ctx.method} ${ctx.path}`);
  };
}
