// The checks of a widget's spec as a client sends it (api-decisions.md
// "Widgets"), one function per field, each naming its field and returning the
// canonical value. Pure.
import { InvalidArgumentError } from '../errors';
import { isCspOrigin } from './frame-origin';
import { DEFAULT_WIDGET_THEME, type WidgetTheme } from './records';

/** Most origins one widget allows. */
export const MAX_ALLOWED_ORIGINS = 50;
const HOSTNAME_MAX = 253;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** scheme://authority and nothing after it (no path, query or fragment, not even `/`). */
const ORIGIN_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/i;

/**
 * A DNS hostname in lower case: at least two labels of letters, digits and
 * inner hyphens (1 to 63 characters each), at most 253 characters, no
 * trailing dot, and a last label that is not all digits (no IP addresses).
 * @throws InvalidArgumentError naming `field`
 */
export function checkHostname(value: string, field = 'spec.hostname'): string {
  const hostname = value.toLowerCase();
  const labels = hostname.split('.');
  const valid = hostname.length > 0 && hostname.length <= HOSTNAME_MAX && labels.length >= 2
    && labels.every((label) => LABEL.test(label)) && !/^[0-9]+$/.test(labels[labels.length - 1]);
  if (!valid) {
    throw InvalidArgumentError.forField(field, 'must be a DNS hostname such as chat.example.com (letters, digits and hyphens in dot-separated labels; no scheme, port, path or IP address)');
  }
  return hostname;
}

/**
 * Exact origins, normalised (lower case, default port dropped) and without repeats:
 * http or https, no path (not even `/`), query, fragment, credentials or wildcard,
 * and a host a Content-Security-Policy can name (isCspOrigin).
 * @throws InvalidArgumentError naming `spec.allowedOrigins` or the offending `spec.allowedOrigins[i]`
 */
export function checkAllowedOrigins(values: readonly string[] | undefined): string[] {
  const field = 'spec.allowedOrigins';
  if (values === undefined || values.length === 0) throw InvalidArgumentError.forField(field, 'must name at least one origin such as https://www.example.com');
  if (values.length > MAX_ALLOWED_ORIGINS) throw InvalidArgumentError.forField(field, `must name at most ${MAX_ALLOWED_ORIGINS} origins`);
  return [...new Set(values.map((value, index) => checkOrigin(value, `${field}[${index}]`)))];
}

function checkOrigin(value: string, field: string): string {
  const rule = 'must be an exact origin scheme://host[:port] with scheme http or https, such as https://www.example.com (no path, no trailing slash, no wildcard)';
  if (value.includes('*') || !ORIGIN_SHAPE.test(value)) throw InvalidArgumentError.forField(field, rule);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw InvalidArgumentError.forField(field, rule);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) throw InvalidArgumentError.forField(field, rule);
  // A Content-Security-Policy source cannot name an IPv6 address: frame-ancestors could never let such an origin frame the widget.
  if (url.hostname.startsWith('[')) throw InvalidArgumentError.forField(field, 'cannot be an IPv6 address: frame-ancestors cannot name one; use a hostname');
  // CORS would answer such an origin while the page's frame-ancestors (the same rule) leaves it out.
  if (!isCspOrigin(url.origin)) {
    throw InvalidArgumentError.forField(field, 'must have a host of letters, digits, dots and hyphens only (as frame-ancestors can name it), such as https://www.example.com');
  }
  return url.origin;
}

/** UNSPECIFIED or absent is the default theme. */
export function checkTheme(value: string | undefined): WidgetTheme {
  return value === undefined || value === 'THEME_UNSPECIFIED' ? DEFAULT_WIDGET_THEME : (value as WidgetTheme);
}

/** Blank text is no text (the page shows its own default). */
export function optionalText(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value;
}
