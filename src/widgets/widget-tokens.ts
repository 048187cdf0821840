// Widget session tokens (api-decisions.md "Widgets"): JWTs signed with HS256
// under a service key of their own purpose, so no API key token (another key,
// another `typ`) or OIDC token can pass as one, nor one as those. Algorithm,
// `typ`, issuer and audience (the widget's hostname) are pinned (RFC 8725);
// `sub` is the session id, `exp` its expiry. Whether the session still exists
// is the verifier's question (widget-session.service.ts), not the token's.
import { jwtVerify, SignJWT } from 'jose';
import type { SigningKeySource } from '../auth/tokens';

export const WIDGET_TOKEN_TYPE = 'agentrt-widget+jwt';
/** The service key (persistence service_keys) that signs widget session tokens. */
export const WIDGET_TOKEN_KEY_PURPOSE = 'widget-session-token';
const ISSUER = 'agentrt';
const ALGORITHM = 'HS256';
/** Tokens longer than this are refused before parsing. */
const MAX_TOKEN_LENGTH = 4096;

export class WidgetTokens {
  private key?: Promise<Uint8Array>;

  constructor(private readonly keySource: SigningKeySource) {}

  private signingKey(): Promise<Uint8Array> {
    this.key ??= this.keySource().catch((error: unknown) => {
      this.key = undefined; // a failed load (database down) is retried on the next call
      throw error;
    });
    return this.key;
  }

  /** Signs the token of session `sessionId` for the widget served at `hostname`, valid until `expiresAt` (whole seconds). */
  async issue(sessionId: string, hostname: string, expiresAt: Date): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: WIDGET_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(hostname)
      .setSubject(sessionId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(await this.signingKey());
  }

  /**
   * The session id of a token of ours for `hostname` that has not expired.
   * @throws Error for anything else (the caller answers one message for every reason)
   */
  async verify(token: string, hostname: string, now: Date): Promise<string> {
    if (token.length > MAX_TOKEN_LENGTH) throw new Error('token too long');
    const { payload } = await jwtVerify(token, await this.signingKey(), {
      algorithms: [ALGORITHM], typ: WIDGET_TOKEN_TYPE, issuer: ISSUER, audience: hostname, requiredClaims: ['exp', 'sub'], currentDate: now,
    });
    if (typeof payload.sub !== 'string') throw new Error('sub is not a string');
    return payload.sub;
  }
}
