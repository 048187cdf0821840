// The widget host's pages: `GET /` the chat page (chat.html with the widget's
// settings inlined), `GET /widget.js` the loader, `GET /assets/<file>` the
// page's own files. The page and the loader carry the widget's CSP.
import type Koa from 'koa';
import { NotFoundError } from '../../src/errors';
import { prepareAsset, sendAsset, type Asset } from '../static-assets';
import { assetsDirectory, isAssetName, loadAssets, LOADER_FILE, PAGE_FILE } from './assets';
import { loaderPolicy, pagePolicy } from './csp';
import { widgetRequestOf, type WidgetSite } from './widget-site';

/** The id of the JSON data block the page reads its settings from. */
export const WIDGET_CONFIG_ELEMENT_ID = 'agentrt-widget-config';
/** Rendered pages kept (one per widget and settings); the oldest go first. */
const RENDERED_MAX = 1000;
/** The page revalidates on every load (its settings are inlined); the loader and assets are cached a while. */
const PAGE_CACHE = 'no-cache';
const LOADER_CACHE = 'public, max-age=300';
const ASSET_CACHE = 'public, max-age=3600';

/** What the page is told of its widget. */
export function widgetSettings(site: WidgetSite) {
  return { title: site.title, greeting: site.greeting, theme: site.theme, allowVisitorApprovals: site.allowVisitorApprovals, apiBase: '/api' };
}

/** JSON safe inside a `<script type="application/json">` block: nothing can close the element or start a comment. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** chat.html with the settings block placed before `</head>` (or first, for a page without one). */
export function renderPage(template: string, site: WidgetSite): string {
  const block = `<script type="application/json" id="${WIDGET_CONFIG_ELEMENT_ID}">${scriptSafeJson(widgetSettings(site))}</script>`;
  const at = template.search(/<\/head>/i);
  return at < 0 ? `${block}\n${template}` : `${template.slice(0, at)}${block}\n${template.slice(at)}`;
}

export interface WidgetPagesOptions {
  /** @default http/widget-host/assets */
  directory?: string;
}

export function widgetPages(options: WidgetPagesOptions = {}): Koa.Middleware {
  const assets = loadAssets(options.directory ?? assetsDirectory());
  const template = assets.get(PAGE_FILE)?.identity.toString('utf8');
  const rendered = new Map<string, Asset>();
  const pageOf = (site: WidgetSite): Asset => {
    const key = `${site.widgetId}\n${scriptSafeJson(widgetSettings(site))}`;
    let page = rendered.get(key);
    if (!page) {
      page = prepareAsset(Buffer.from(renderPage(template!, site)), 'text/html; charset=utf-8', true);
      rendered.set(key, page);
      if (rendered.size > RENDERED_MAX) rendered.delete(rendered.keys().next().value as string);
    }
    return page;
  };
  return async function widgetPages(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const { site } = widgetRequestOf(ctx);
    if (ctx.path === '/') {
      ctx.state.routePath = 'widget /';
      if (template === undefined) throw new NotFoundError('this node has no widget page');
      ctx.set('Content-Security-Policy', pagePolicy(site.allowedOrigins));
      ctx.set('Referrer-Policy', 'no-referrer');
      return sendAsset(ctx, pageOf(site), PAGE_CACHE);
    }
    if (ctx.path === `/${LOADER_FILE}`) {
      ctx.state.routePath = `widget /${LOADER_FILE}`;
      const loader = assets.get(LOADER_FILE);
      if (!loader) throw new NotFoundError('this node has no widget loader');
      ctx.set('Content-Security-Policy', loaderPolicy(site.allowedOrigins));
      return sendAsset(ctx, loader, LOADER_CACHE);
    }
    if (ctx.path.startsWith('/assets/')) {
      ctx.state.routePath = 'widget /assets/{file}';
      const name = ctx.path.slice('/assets/'.length);
      const asset = isAssetName(name) ? assets.get(name) : undefined;
      if (!asset) throw new NotFoundError(`no widget asset ${JSON.stringify(name.slice(0, 100))}`);
      return sendAsset(ctx, asset, ASSET_CACHE);
    }
    return next();
  };
}
