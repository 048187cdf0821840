// Content-Security-Policy of the widget host's page and loader: only the
// widget's allowedOrigins may frame them (api-decisions "Widgets"); the page
// loads nothing but the node's own files.
import { isCspOrigin } from '../../src/widgets/frame-origin';

/**
 * `frame-ancestors` of the widget's allowed origins, `'none'` when it has none.
 * Writes refuse an origin a CSP cannot name (isCspOrigin); one stored before is
 * still dropped here, never echoed into a header.
 */
export function frameAncestors(allowedOrigins: readonly string[]): string {
  const origins = allowedOrigins.filter(isCspOrigin);
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
