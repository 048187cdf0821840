// API key tokens: JWTs signed by the service with HS256 under a key derived
// from the master key. The algorithm, issuer, audience and `typ` are pinned
// (RFC 8725), so a widget token or an OIDC token can never pass as an API key.
import { hkdfSync } from 'node:crypto';
import { SignJWT, jwtVerify, decodeProtectedHeader } from 'jose';
import { UnauthenticatedError } from '../errors';

export const API_KEY_TOKEN_TYPE = 'agentrt-key+jwt';
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

export class ApiKeyTokens {
  private readonly key: Uint8Array;

  constructor(masterKey: Buffer) {
    this.key = deriveKey(masterKey, 'api-key-token');
  }

  /** Signs the bearer token of an API key at its current version. */
  async issue(claims: ApiKeyClaims): Promise<string> {
    return new SignJWT({ ver: claims.tokenVersion })
      .setProtectedHeader({ alg: ALGORITHM, typ: API_KEY_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.apiKeyId)
      .setIssuedAt()
      .sign(this.key);
  }

  /**
   * Verifies signature, algorithm, issuer, audience and type.
   * @throws UnauthenticatedError for anything that is not a valid token of ours
   */
  async verify(token: string): Promise<ApiKeyClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
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
