// What the widget host knows of the request it serves: the widget whose
// hostname the Host header names. The verifier answers widgetByHostname from a
// short-lived memo, null answers included (WidgetSessionService,
// WIDGET_BY_HOSTNAME_TTL_MS), so an API request (whose Host is no widget's)
// costs one cached lookup and no database read.
import type Koa from 'koa';
import type { WidgetSessionVerifier } from '../../src/ports/widget-sessions';

/** A widget as the host serves it (WidgetSessionVerifier.widgetByHostname). */
export type WidgetSite = NonNullable<Awaited<ReturnType<WidgetSessionVerifier['widgetByHostname']>>>;

/** The widget a request is for and the hostname it came on (the session token's audience). */
export interface WidgetRequest {
  hostname: string;
  site: WidgetSite;
}

const HOSTNAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

/** The request's Host without its port and one trailing dot, lowercased; null when it cannot be a widget's hostname (an IPv6 literal, junk). */
export function requestHostname(ctx: Koa.Context): string | null {
  const hostname = ctx.hostname.toLowerCase().replace(/\.$/, '');
  return HOSTNAME.test(hostname) ? hostname : null;
}

export function widgetRequestOf(ctx: Koa.Context): WidgetRequest {
  return ctx.state.widget as WidgetRequest;
}
