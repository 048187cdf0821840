// The one rule of which origins a widget may allow: those a Content-Security-
// Policy source list can name (scheme://host[:port], http or https, a host of
// letters, digits, dots and hyphens). widget-input.ts refuses any other at
// write time and http/widget-host/csp.ts builds frame-ancestors with it, so an
// origin CORS answers is always one that may frame the widget. Pure.

const CSP_ORIGIN = /^https?:\/\/[a-z0-9.-]+(?::\d{1,5})?$/i;

/** Whether `origin` can appear in a CSP source list as it is (never echo another into a header). */
export function isCspOrigin(origin: string): boolean {
  return CSP_ORIGIN.test(origin);
}
