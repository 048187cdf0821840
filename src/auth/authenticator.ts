// Turns a bearer token into a Principal: our API key JWTs (key state and token
// version checked on every request, so disable and rotation act at once) or an
// OpenID Connect user token verified against the issuer's JWKS.
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { UnauthenticatedError } from '../errors';
import { ApiKeyState, ProfileType, type ProfileRecord } from '../accounts/records';
import type { FoundationStore } from '../ports/foundation-store';
import type { Principal } from './principal';
import { FULL_ACCESS } from './scopes';
import { isApiKeyToken, MAX_TOKEN_LENGTH, type ApiKeyTokens } from './tokens';

export interface OidcOptions {
  issuer: string;
  jwksUrl: string;
  audience?: string;
}

const OIDC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

export class Authenticator {
  private readonly jwks?: JWTVerifyGetKey;

  constructor(
    private readonly store: FoundationStore,
    private readonly tokens: ApiKeyTokens,
    private readonly oidc?: OidcOptions,
  ) {
    if (oidc) this.jwks = createRemoteJWKSet(new URL(oidc.jwksUrl));
  }

  /**
   * @param authorization the Authorization header value
   * @param accountHint `X-Account-Id`, used only when an email has profiles in several accounts
   * @throws UnauthenticatedError for a missing, malformed, unknown, disabled or rotated credential
   */
  async authenticate(authorization: string | undefined, accountHint?: string): Promise<Principal> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>)');
    const token = match[1];
    if (token.length > MAX_TOKEN_LENGTH) throw new UnauthenticatedError('bearer token is too long');
    if (isApiKeyToken(token)) return this.apiKeyPrincipal(token);
    if (this.jwks) return this.userPrincipal(token, accountHint);
    throw new UnauthenticatedError('invalid bearer token');
  }

  private async apiKeyPrincipal(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    const key = await this.store.apiKeys.findById(claims.apiKeyId);
    if (!key) throw new UnauthenticatedError('the API key no longer exists');
    if (key.tokenVersion !== claims.tokenVersion) throw new UnauthenticatedError('the API key was rotated; this token is no longer valid');
    if (key.state !== ApiKeyState.ENABLED) throw new UnauthenticatedError('the API key is disabled');
    return {
      kind: 'API_KEY',
      accountId: key.accountId,
      profileId: key.principalProfileId,
      scopes: key.permissions,
      admin: key.system,
      apiKeyId: key.id,
      global: key.system,
      workspaceId: key.workspaceId ?? undefined,
    };
  }

  /**
   * Binds the profile to the first OIDC subject that signs in with its email;
   * afterwards only that subject may use it.
   * @throws UnauthenticatedError when another subject already holds the profile
   */
  private async bindSubject(profile: ProfileRecord, subject: string): Promise<void> {
    if (profile.oidcSubject === subject) return;
    const bound = profile.oidcSubject ?? (await this.store.profiles.bindOidcSubject(profile.id, subject));
    if (bound !== subject) throw new UnauthenticatedError('this email belongs to a profile bound to another identity of the issuer');
  }

  private async userPrincipal(token: string, accountHint?: string): Promise<Principal> {
    let email: string;
    let subject: string;
    try {
      const { payload } = await jwtVerify(token, this.jwks!, {
        issuer: this.oidc!.issuer,
        audience: this.oidc!.audience,
        algorithms: OIDC_ALGORITHMS,
        // jose checks `exp` only when present; a token without one would never expire.
        requiredClaims: ['exp'],
      });
      if (typeof payload.email !== 'string' || payload.email === '') throw new Error('token has no email claim');
      // The email is the link to a profile, so the issuer must vouch for it:
      // where users can edit their email unverified, it would be a takeover.
      if (payload.email_verified !== true) throw new Error('email is not verified');
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('token has no sub claim');
      email = payload.email;
      subject = payload.sub;
    } catch (error) {
      throw new UnauthenticatedError('invalid bearer token', { cause: error });
    }
    const profiles = (await this.store.profiles.findUsersByEmail(email)).filter((profile) => !accountHint || profile.accountId === accountHint);
    if (profiles.length === 0) throw new UnauthenticatedError('no user profile has this email');
    if (profiles.length > 1) throw new UnauthenticatedError('this email has profiles in several accounts; send X-Account-Id');
    const profile = profiles[0];
    if (profile.type !== ProfileType.USER) throw new UnauthenticatedError('no user profile has this email');
    await this.bindSubject(profile, subject);
    return {
      kind: 'USER',
      accountId: profile.accountId,
      profileId: profile.id,
      scopes: [FULL_ACCESS],
      admin: profile.admin,
      global: false,
      memberWorkspaceIds: await this.store.members.activeWorkspaceIds(profile.id),
    };
  }
}
