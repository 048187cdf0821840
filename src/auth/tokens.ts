// API key tokens: JWTs signed by the service with HS256 under a random 256-bit
// signing key stored wrapped by the master key (so rotating the master key
// does not invalidate tokens). The algorithm, issuer, audience and `typ` are
// pinned (RFC 8725), so a widget token or an OIDC token can never pass as an API key.
// jose signs; verification, which every request pays, is a synchronous HMAC
// (see verifyCompactHs256).
import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, webcrypto, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
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

/** The signing key in the two forms its two users want, both made once. */
interface SigningKeys {
  /** For jose, which signs with WebCrypto. */
  signing: webcrypto.CryptoKey;
  /** For node:crypto's HMAC, which verifies. */
  verifying: KeyObject;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The protected header segment of the tokens we issue (jose serialises the
 * header object as given): telling ours from OIDC tokens, and checking the
 * header of a verified token, usually cost a string comparison.
 */
const ISSUED_HEADER_SEGMENT = Buffer.from(JSON.stringify({ alg: ALGORITHM, typ: API_KEY_TOKEN_TYPE })).toString('base64url');

/** A JSON object from a base64url segment, or an Error. */
function decodeSegment(segment: string): Record<string, unknown> {
  if (!BASE64URL.test(segment)) throw new Error('segment is not base64url');
  const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('segment is not a JSON object');
  return value as Record<string, unknown>;
}

/** A NumericDate claim: absent, or a finite number. */
function numericDate(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) throw new Error(`${name} is not a number`);
  return value as number | undefined;
}

/**
 * Verifies a compact HS256 JWS of ours and answers its claims, with the checks
 * jose's jwtVerify made for this pinned configuration (header alg and typ, no
 * `crit`, signature, iss, aud, nbf and exp when present), but synchronously:
 * WebCrypto's HMAC is a thread-pool job that cost about a tenth of the CPU of
 * an authenticated GET, node:crypto's HMAC a few microseconds.
 * The signature is compared as canonical base64url text in constant time, so
 * a token differing from the one we signed in any byte is refused.
 * @throws Error for anything that is not a valid, current token of ours
 */
function verifyCompactHs256(token: string, key: KeyObject, nowSeconds: number): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error('not a compact JWS');
  const [encodedHeader, encodedPayload, signature] = parts;
  // The algorithm is pinned, so the signature can be checked first: nothing
  // that did not come from us is ever parsed.
  const expected = Buffer.from(createHmac('sha256', key).update(`${encodedHeader}.${encodedPayload}`).digest('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Error('signature verification failed');
  if (encodedHeader !== ISSUED_HEADER_SEGMENT) {
    const header = decodeSegment(encodedHeader);
    if (header.alg !== ALGORITHM) throw new Error('unexpected alg');
    if (header.typ !== API_KEY_TOKEN_TYPE) throw new Error('unexpected typ');
    if (header.crit !== undefined || header.b64 !== undefined) throw new Error('unsupported header parameter');
  }
  const claims = decodeSegment(encodedPayload);
  if (claims.iss !== ISSUER) throw new Error('unexpected iss');
  const audience = claims.aud;
  if (audience !== AUDIENCE && !(Array.isArray(audience) && audience.includes(AUDIENCE))) throw new Error('unexpected aud');
  numericDate(claims, 'iat');
  const notBefore = numericDate(claims, 'nbf');
  if (notBefore !== undefined && notBefore > nowSeconds) throw new Error('token is not yet valid');
  const expires = numericDate(claims, 'exp');
  if (expires !== undefined && expires <= nowSeconds) throw new Error('token has expired');
  return claims;
}

export class ApiKeyTokens {
  // Imported once: jose would otherwise import raw bytes on every sign, and
  // node:crypto would wrap them on every verify.
  private keys?: Promise<SigningKeys>;
  /** The keys once loaded: verification then needs no await. */
  private loaded?: SigningKeys;

  constructor(private readonly keySource: SigningKeySource) {}

  /** Loads the signing key now, so a node with the wrong master key fails at start. */
  async load(): Promise<void> {
    await this.signingKeys();
  }

  private signingKeys(): Promise<SigningKeys> {
    this.keys ??= this.keySource()
      .then(async (raw) => ({
        signing: await webcrypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
        verifying: createSecretKey(raw),
      }))
      .then((keys) => (this.loaded = keys))
      .catch((error: unknown) => {
        this.keys = undefined; // a failed load (database down) is retried on the next call
        throw error;
      });
    return this.keys;
  }

  /** Signs the bearer token of an API key at its current version. */
  async issue(claims: ApiKeyClaims): Promise<string> {
    return new SignJWT({ ver: claims.tokenVersion })
      .setProtectedHeader({ alg: ALGORITHM, typ: API_KEY_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.apiKeyId)
      .setIssuedAt()
      .sign((await this.signingKeys()).signing);
  }

  /**
   * Verifies signature, algorithm, issuer, audience and type.
   * @throws UnauthenticatedError for anything that is not a valid token of ours
   */
  async verify(token: string): Promise<ApiKeyClaims> {
    const { verifying } = this.loaded ?? (await this.signingKeys());
    try {
      const payload = verifyCompactHs256(token, verifying, Math.floor(Date.now() / 1000));
      if (typeof payload.sub !== 'string' || typeof payload.ver !== 'number') throw new Error('claims missing');
      return { apiKeyId: payload.sub, tokenVersion: payload.ver };
    } catch (error) {
      throw new UnauthenticatedError('invalid API key token', { cause: error });
    }
  }
}

/** True when a bearer token claims to be one of our API key tokens (its header's `typ`). */
export function isApiKeyToken(token: string): boolean {
  if (token.startsWith(`${ISSUED_HEADER_SEGMENT}.`)) return true;
  const dot = token.indexOf('.');
  try {
    return dot > 0 && decodeSegment(token.slice(0, dot)).typ === API_KEY_TOKEN_TYPE;
  } catch {
    return false;
  }
}
