// API key tokens: JWTs signed by the service with HS256 under a random 256-bit
// signing key stored wrapped by the master key (so rotating the master key
// does not invalidate tokens). The algorithm, issuer, audience and `typ` are
// pinned (RFC 8725), so a widget token or an OIDC token can never pass as an API key.
import { hkdfSync, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify, decodeProtectedHeader } from 'jose';
import { UnauthenticatedError } from '../errors';

export const API_KEY_TOKEN_TYPE = 'agentrt-key+jwt';
/** The service key (persistence service_keys) that signs API key tokens. */
export const API_KEY_TOKEN_KEY_PURPOSE = 'api-key-token';
const ISSUER = 'agentrt';
const AUDIENCE = 'agentrt-api';
const ALGORITHM = 'HS256';
/** Tokens longer than this are refused before parsing. */
export const MAX_TOKEN_LENGTH = 8192;

export interface ApiKeyClaims {
  apiKeyId: string;
  tokenVersion: number;
}

/** Derives a purpose-bound 256-bit key from the master key. */
export function deriveKey(masterKey: Buffer, purpose: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', masterKey, 'agentrt', purpose, 32));
}

/** Where the signing key comes from: loaded once, on first use. */
export type SigningKeySource = () => Promise<Uint8Array>;

export class ApiKeyTokens {
  // Imported once as a CryptoKey: jose would otherwise import raw bytes on
  // every sign and verify, a measurable share of each request.
  private key?: Promise<webcrypto.CryptoKey>;

  constructor(private readonly keySource: SigningKeySource) {}

  /** Loads the signing key now, so a node with the wrong master key fails at start. */
  async load(): Promise<void> {
    await this.signingKey();
  }

  private signingKey(): Promise<webcrypto.CryptoKey> {
    this.key ??= this.keySource().then((raw) => webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])).catch((error: unknown) => {
      this.key = undefined; // a failed load (database down) is retried on the next call
      throw error;
    });
    return this.key;
  }

  /** Signs the bearer token of an API key at its current version. */
  async issue(claims: ApiKeyClaims): Promise<string> {
    return new SignJWT({ ver: claims.tokenVersion })
      .setProtectedHeader({ alg: ALGORITHM, typ: API_KEY_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.apiKeyId)
      .setIssuedAt()
      .sign(await this.signingKey());
  }

  /**
   * Verifies signature, algorithm, issuer, audience and type.
   * @throws UnauthenticatedError for anything that is not a valid token of ours
   */
  async verify(token: string): Promise<ApiKeyClaims> {
    const key = await this.signingKey();
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: AUDIENCE,
        typ: API_KEY_TOKEN_TYPE,
      });
      if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number') throw new Error('claims missing');
      return { apiKeyId: payload.sub, tokenVersion: payload.ver };
    } catch (error) {
      throw new UnauthenticatedError('invalid API key token', { cause: error });
    }
  }
}

/** True when a bearer token claims to be one of our API key tokens. */
export function isApiKeyToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === API_KEY_TOKEN_TYPE;
  } catch {
    return false;
  }
}
