// Content-Security-Policy of the widget host's page and loader: only the
// widget's allowedOrigins may frame them (api-decisions "Widgets"); the page
// loads nothing but the node's own files.

/** An origin as it may appear in a CSP source list (scheme://host[:port]); anything else is dropped, never echoed into a header. */
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(?::\d{1,5})?$/i;

/** `frame-ancestors` of the widget's allowed origins, `'none'` when it has none. */
export function frameAncestors(allowedOrigins: readonly string[]): string {
  const origins = allowedOrigins.filter((origin) => ORIGIN.test(origin));
  return `frame-ancestors ${origins.length ? origins.join(' ') : "'none'"}`;
}

/** The chat page's policy: its own scripts, styles and API, nothing inline that runs (the config is a JSON data block). */
export function pagePolicy(allowedOrigins: readonly string[]): string {
  return [
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
    "base-uri 'none'", "form-action 'none'", "object-src 'none'", frameAncestors(allowedOrigins),
  ].join('; ');
}

/** The loader's policy (a script: only frame-ancestors means anything, the rest forbids a browser rendering it as a document). */
export function loaderPolicy(allowedOrigins: readonly string[]): string {
  return `default-src 'none'; ${frameAncestors(allowedOrigins)}`;
}
