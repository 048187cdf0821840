// What the widget host knows of the request it serves: the widget whose
// hostname the Host header names, found through a short-lived memo so API
// requests (whose Host is no widget's) cost one cached lookup.
import type Koa from 'koa';
import { expiringMemo } from '../../src/resource/expiring-memo';
import type { WidgetSessionVerifier } from '../../src/ports/widget-sessions';

/** A widget as the host serves it (WidgetSessionVerifier.widgetByHostname). */
export type WidgetSite = NonNullable<Awaited<ReturnType<WidgetSessionVerifier['widgetByHostname']>>>;

/** The widget a request is for and the hostname it came on (the session token's audience). */
export interface WidgetRequest {
  hostname: string;
  site: WidgetSite;
}

/**
 * How long a hostname's answer is kept, found or not: a new widget's hostname
 * serves within this, a deleted one stops within it (its tokens fail at once:
 * verify asks the database), and API requests reach the database at most once
 * per Host per this long.
 */
export const WIDGET_LOOKUP_TTL_MS = 2000;
/** Hostnames kept at most (a flood of made-up Host headers evicts the oldest). */
const WIDGET_LOOKUP_MAX_ENTRIES = 10_000;
const HOSTNAME = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

/** The request's Host without its port, lowercased; null when it cannot be a widget's hostname (an IPv6 literal, junk). */
export function requestHostname(ctx: Koa.Context): string | null {
  const hostname = ctx.hostname.toLowerCase();
  return HOSTNAME.test(hostname) ? hostname : null;
}

/** Finds the widget of a hostname, memoised for WIDGET_LOOKUP_TTL_MS (null answers too). */
export function widgetLookup(widgets: Pick<WidgetSessionVerifier, 'widgetByHostname'>, ttlMs = WIDGET_LOOKUP_TTL_MS) {
  return expiringMemo((hostname) => widgets.widgetByHostname(hostname), { ttlMs, maxEntries: WIDGET_LOOKUP_MAX_ENTRIES });
}

export function widgetRequestOf(ctx: Koa.Context): WidgetRequest {
  return ctx.state.widget as WidgetRequest;
}
