// Who is calling: the authenticated principal every route sees. Built by the
// authentication middleware from an API key token or an OIDC user token.
export type PrincipalKind = 'API_KEY' | 'USER';

export interface Principal {
  kind: PrincipalKind;
  accountId: string;
  /** The caller's Profile id (the key's API_KEY profile, or the USER profile). */
  profileId: string;
  /** Granted scopes; a USER holds every scope where it has access. */
  scopes: readonly string[];
  /** Admin role: the global key, and USER profiles marked admin. */
  admin: boolean;
  /** The API key, for API key principals. */
  apiKeyId?: string;
  /** True for the account's global key, which spans every workspace. */
  global: boolean;
  /** The key's own workspace (workspace keys only). */
  workspaceId?: string;
  /** Workspaces a USER is an active member of. */
  memberWorkspaceIds?: readonly string[];
}

/** The id rate limits and idempotency keys are scoped to. */
export function principalKey(principal: Principal): string {
  return principal.apiKeyId ?? principal.profileId;
}
