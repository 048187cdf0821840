// Keep-alive connection pools to model providers: one undici Pool per base
// URL origin (not the global fetch), every connection opened under the
// outbound URL policy, the least recently used pool closed beyond a limit.
import { isIP } from 'node:net';
import { Pool } from 'undici';
import { PermissionDeniedError } from '../errors';
import { guardedConnector } from '../network/guarded-fetch';
import { assertAddressAllowed, type UrlPolicyOptions } from '../network/url-policy';
import { ModelCallError, ModelCallErrorType } from './model-call-error';

const CONNECT_TIMEOUT_MS = 10_000;

/** Where a chat completion goes: the origin's pool and the path under the base URL. */
export interface CompletionTarget {
  pool: Pool;
  path: string;
  /** For messages: a base URL's path or query could hold a credential, its host cannot. */
  host: string;
}

export interface ProviderPoolsOptions {
  /** @default 32 */
  connectionsPerOrigin?: number;
  /** @default 64 */
  maxPools?: number;
}

/** BASE_URL_REFUSED for an address the URL policy refused. */
export function baseUrlRefused(refusal: PermissionDeniedError): ModelCallError {
  return new ModelCallError(ModelCallErrorType.BASE_URL_REFUSED, `the AI provider key's baseUrl is refused: ${refusal.message}`);
}

export class ProviderPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly policy: UrlPolicyOptions, private readonly options: ProviderPoolsOptions = {}) {}

  /**
   * The pool and path of `<baseUrl>/chat/completions`.
   * @throws ModelCallError BASE_URL_REFUSED for an unusable URL or a refused literal address
   */
  completionTarget(baseUrl: string): CompletionTarget {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new ModelCallError(ModelCallErrorType.BASE_URL_REFUSED, "the AI provider key's baseUrl is not an absolute URL");
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ModelCallError(ModelCallErrorType.BASE_URL_REFUSED, "the AI provider key's baseUrl is not an http or https URL");
    // Refuse a literal address before sending anything (the connector checks every connection again, names once resolved).
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      try {
        assertAddressAllowed(url.hostname, literal, this.policy);
      } catch (refusal) {
        throw refusal instanceof PermissionDeniedError ? baseUrlRefused(refusal) : refusal;
      }
    }
    return { pool: this.poolFor(url.origin), path: `${url.pathname.replace(/\/+$/, '')}/chat/completions${url.search}`, host: url.host };
  }

  /** Closes every pool's connections once their requests in flight are done. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool) {
      // Most recently used last, so eviction takes the coldest origin.
      this.pools.delete(origin);
      this.pools.set(origin, pool);
      return pool;
    }
    if (this.pools.size >= (this.options.maxPools ?? 64)) {
      const [coldest, coldPool] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(coldest);
      // close() lets its requests in flight finish; a failure to close changes nothing for new calls.
      coldPool.close().catch(() => undefined);
    }
    pool = new Pool(origin, {
      connections: this.options.connectionsPerOrigin ?? 32,
      connect: guardedConnector(this.policy, CONNECT_TIMEOUT_MS),
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      // The call's deadline bounds the wait; undici's own timers would cut long generations short.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.pools.set(origin, pool);
    return pool;
  }
}
