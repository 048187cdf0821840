// A fetch for outbound calls to user-configured URLs: every connection goes
// through the URL policy (literal addresses before, resolved names at connect).
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { PermissionDeniedError } from '../errors';
import { assertAddressAllowed, guardedLookup, type UrlPolicyOptions } from './url-policy';

export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** A fetch that refuses private, loopback and link-local targets unless allowed. */
export function guardedFetch(options: UrlPolicyOptions): FetchFunction {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(options) as never } });
  return async function policyFetch(input, init) {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : (input as Request).url);
    // A literal IP host never reaches the lookup, so check it here.
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
}
