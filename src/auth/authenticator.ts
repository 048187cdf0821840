// Turns a bearer token into a Principal: our API key JWTs (key state and token
// version read with the workspace in one round trip, kept for at most
// CREDENTIAL_TTL_MS, and forgotten at once when this node changes a key or
// archives a workspace: a disable or rotation acts at once on the node that made
// it, within a second on the others) or an
// OpenID Connect user token verified against the issuer's JWKS. For an API key
// the workspace the request names is read in the same round trip as the key
// (authorized later, by workspace-access.ts).
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { UnauthenticatedError } from '../errors';
import { ApiKeyState, ProfileType, type ProfileRecord } from '../accounts/records';
import type { FoundationStore } from '../ports/foundation-store';
import type { Principal } from './principal';
import { FULL_ACCESS } from './scopes';
import { isApiKeyToken, MAX_TOKEN_LENGTH, type ApiKeyTokens } from './tokens';
import type { WorkspaceRef } from './workspace-access';
import { expiringMemo, type ExpiringMemo } from '../resource/expiring-memo';
import type { CredentialChanges } from './credential-changes';

export interface OidcOptions {
  issuer: string;
  jwksUrl: string;
  audience?: string;
}

const OIDC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

export interface AuthenticateOptions {
  /** `X-Account-Id`, used only when an email has profiles in several accounts. */
  accountHint?: string;
  /**
   * The workspace the request acts in, to read with the credential: its id,
   * null for the key's own workspace, undefined when the request acts in none.
   */
  workspaceId?: string | null;
}

/** What authentication established: who calls and, when it was read with the key, a workspace. */
export interface Authentication {
  principal: Principal;
  /**
   * The workspace read with the credential: the id looked up and the row
   * (null when there is none). Not yet authorized. Undefined when nothing was
   * read (user tokens, requests outside workspaces).
   */
  workspaceRead?: { id: string; workspace: WorkspaceRef | null };
}

/** How long a key's state and its workspace are honoured without reading them again (the revocation delay on other nodes). */
export const CREDENTIAL_TTL_MS = 1000;

type Credential = Awaited<ReturnType<FoundationStore['apiKeys']['findCredential']>>;

export class Authenticator {
  private readonly jwks?: JWTVerifyGetKey;
  /** Keyed by key id and the workspace the request names (none, the key's own, or an id). */
  private readonly credentials: ExpiringMemo<Credential>;

  constructor(
    private readonly store: FoundationStore,
    private readonly tokens: ApiKeyTokens,
    private readonly oidc?: OidcOptions,
    changes?: CredentialChanges,
  ) {
    if (oidc) this.jwks = createRemoteJWKSet(new URL(oidc.jwksUrl));
    this.credentials = expiringMemo((key) => {
      const [apiKeyId, workspace] = JSON.parse(key) as [string, string | null | undefined];
      return this.store.apiKeys.findCredential(apiKeyId, workspace);
    }, { ttlMs: CREDENTIAL_TTL_MS });
    changes?.onChange(() => this.credentials.clear());
  }

  /**
   * @param authorization the Authorization header value
   * @throws UnauthenticatedError for a missing, malformed, unknown, disabled or rotated credential
   */
  async authenticate(authorization: string | undefined, options: AuthenticateOptions = {}): Promise<Authentication> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) throw new UnauthenticatedError('missing bearer token (Authorization: Bearer <token>)');
    const token = match[1];
    if (token.length > MAX_TOKEN_LENGTH) throw new UnauthenticatedError('bearer token is too long');
    if (isApiKeyToken(token)) return this.apiKeyPrincipal(token, options.workspaceId);
    if (this.jwks) return { principal: await this.userPrincipal(token, options.accountHint) };
    throw new UnauthenticatedError('invalid bearer token');
  }

  private async apiKeyPrincipal(token: string, workspaceId: string | null | undefined): Promise<Authentication> {
    const claims = await this.tokens.verify(token);
    // JSON keeps undefined (no workspace) apart from null (the key's own): undefined becomes a missing element.
    const found = await this.credentials(JSON.stringify(workspaceId === undefined ? [claims.apiKeyId] : [claims.apiKeyId, workspaceId]));
    const key = found?.key;
    const lookedUp = workspaceId === undefined ? undefined : (workspaceId ?? key?.workspaceId);
    const workspaceRead = found && lookedUp ? { id: lookedUp, workspace: found.workspace } : undefined;
    if (!key) throw new UnauthenticatedError('the API key no longer exists');
    if (key.tokenVersion !== claims.tokenVersion) throw new UnauthenticatedError('the API key was rotated; this token is no longer valid');
    if (key.state !== ApiKeyState.ENABLED) throw new UnauthenticatedError('the API key is disabled');
    return {
      principal: {
        kind: 'API_KEY',
        accountId: key.accountId,
        profileId: key.principalProfileId,
        scopes: key.permissions,
        admin: key.system,
        apiKeyId: key.id,
        global: key.system,
        workspaceId: key.workspaceId ?? undefined,
      },
      workspaceRead,
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
