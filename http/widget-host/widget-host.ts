// The widget host (api-decisions "Widgets"): a request for one of the widget
// host's own paths (`/`, `/widget.js`, `/assets/…`, `/api/…`, of which the API
// serves only `GET /`) whose Host is a widget's hostname is answered here (the chat
// page, the loader, the page's files, the /api routes of a visitor's session).
// Every other request goes to the API whatever its Host, untouched and without
// a lookup: a widget named after the hostname the API is reached by can never
// take /v1, /healthz or any other API path over.
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
import { LOADER_FILE } from './assets';
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
    if (!isWidgetPath(ctx.path)) return next();
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
    // A widget path no widget route serves (the API has nothing there either).
    if (ctx.body === undefined && ctx.status === 404) throw new NotFoundError(`no widget route for ${ctx.method} ${ctx.path}`);
  };
}

/** The widget host's own paths (their CORS preflights included): the API serves none of them. */
export function isWidgetPath(path: string): boolean {
  return path === '/' || path === `/${LOADER_FILE}` || path === '/api' || path.startsWith('/api/') || path.startsWith('/assets/');
}
