// CORS of the widget host's /api routes: only the widget's allowedOrigins,
// matched exactly against the Origin header. Another origin (or none) gets no
// CORS header at all, so a browser page there cannot read an answer.
import type Koa from 'koa';
import { PermissionDeniedError } from '../../src/errors';
import { widgetRequestOf } from './widget-site';

export const CORS_METHODS = 'GET, POST, PUT, OPTIONS';
export const CORS_REQUEST_HEADERS = 'Authorization, Content-Type, Last-Event-ID';
/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function widgetCors(): Koa.Middleware {
  return async function widgetCors(ctx, next) {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    const allowed = origin !== '' && widgetRequestOf(ctx).site.allowedOrigins.includes(origin);
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
    }
    if (ctx.method !== 'OPTIONS') return next();
    if (!allowed) throw new PermissionDeniedError('this origin may not call this widget');
    ctx.set('Access-Control-Allow-Methods', CORS_METHODS);
    ctx.set('Access-Control-Allow-Headers', CORS_REQUEST_HEADERS);
    ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    ctx.status = 204;
  };
}
