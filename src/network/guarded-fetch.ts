// A fetch for outbound calls to user-configured URLs: every connection, the
// first and each redirect hop, goes through the URL policy at connect time
// (literal addresses as they are, names once resolved).
import { isIP } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { PermissionDeniedError } from '../errors';
import { assertAddressAllowed, guardedLookup, type UrlPolicyOptions } from './url-policy';

/** The longest wait for a socket to connect to a user-configured URL (a tool, a webhook receiver), whatever the call's own deadline. */
export const CONNECT_TIMEOUT_CAP_MS = 10_000;

export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Opens every outbound socket: a name is checked after resolution
 * (guardedLookup), a literal address here, since sockets never look one up.
 * Redirect hops connect through it too, so a 3xx to `http://127.0.0.1/` is refused.
 * @param connectTimeoutMs longest wait for a socket to connect (undici's default, 10 s, when absent)
 */
export function guardedConnector(options: UrlPolicyOptions, connectTimeoutMs?: number): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup(options) as never, ...(connectTimeoutMs !== undefined ? { timeout: connectTimeoutMs } : {}) });
  return function guardedConnect(connectOptions, callback) {
    const literal = connectOptions.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      try {
        assertAddressAllowed(connectOptions.hostname, literal, options);
      } catch (refusal) {
        return callback(refusal as Error, null);
      }
    }
    return connect(connectOptions, callback);
  };
}

/** A fetch that refuses private, loopback and link-local targets unless allowed. */
/** A policy-guarded fetch with its own keep-alive pool, which `close` ends. */
export type ClosableFetch = FetchFunction & { close(): Promise<void> };

export function guardedFetch(options: UrlPolicyOptions): ClosableFetch {
  const dispatcher = new Agent({ connect: guardedConnector(options) });
  const policyFetch: FetchFunction = async function policyFetch(input, init) {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : (input as Request).url);
    // Refuse a literal address before sending anything (the connector checks every hop again).
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) assertAddressAllowed(url.hostname, literal, options);
    try {
      return (await undiciFetch(url, { ...(init as object), dispatcher } as never)) as unknown as Response;
    } catch (error) {
      // fetch reports a refused connection as TypeError('fetch failed') caused by our refusal.
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof PermissionDeniedError ? cause : error;
    }
  };
  return Object.assign(policyFetch, { close: () => dispatcher.close() });
}
