// The account (spec 4.1): read it, rotate its webhook signing secret, and
// bootstrap a new account with its first workspace, admin user and global key.
import { randomBytes } from 'node:crypto';
import { newId } from '../ids';
import { InvalidArgumentError, NotFoundError } from '../errors';
import type { Principal } from '../auth/principal';
import { FULL_ACCESS } from '../auth/scopes';
import type { ApiKeyTokens } from '../auth/tokens';
import type { ServiceSealer } from '../crypto/service-sealer';
import type { FoundationStore } from '../ports/foundation-store';
import { toAccountResourceMetadata } from '../resource/metadata';
import type { Account, CallerProfile } from '../schemas/account.schema';
import type { ApiKeyService } from './api-key.service';
import { insertKey } from './api-key.service';
import { toCallerProfile } from './mappers';
import { ProfileType, type AccountRecord } from './records';
import type { WorkspaceService } from './workspace.service';

/** `wh_` + base64 of 32 random bytes; works as `whsec_<same>` in Standard Webhooks libraries. */
export function newWebhookSigningSecret(): string {
  return `wh_${randomBytes(32).toString('base64')}`;
}

// Deliberately loose: one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;

/** Current and previous signing secrets share one AAD, so rotation moves sealed text as is. */
function signingSecretAad(accountId: string): string {
  return `account:${accountId}:webhook-signing-secret`;
}

/** The secrets that sign an account's webhooks: both sign for 24 h after a rotation. */
export interface WebhookSigningSecrets {
  current: string;
  previous?: string;
  rotatedAt?: Date;
}

export interface BootstrapInput {
  accountName: string;
  email: string;
  workspaceName?: string;
}

export interface BootstrapResult {
  accountId: string;
  workspaceId: string;
  profileId: string;
  globalApiKey: { id: string; token: string };
}

/** Called once a rotation of an account's webhook signing secret is stored. */
export type SigningSecretRotatedHook = (accountId: string) => void;

export class AccountService {
  private readonly rotatedHooks: SigningSecretRotatedHook[] = [];

  constructor(
    private readonly store: FoundationStore,
    private readonly tokens: ApiKeyTokens,
    private readonly workspaces: WorkspaceService,
    private readonly apiKeys: ApiKeyService,
    private readonly sealer: ServiceSealer,
  ) {}

  hasAnyAccount(): Promise<boolean> {
    return this.store.accounts.hasAny();
  }

  /**
   * The caller's account. Its spec (billing contact), the signing secret and the
   * global key are shown to admin principals only: GET /account is scope-free,
   * so any valid key may call it, and a narrow key must not learn them.
   */
  async get(principal: Principal): Promise<Account> {
    const record = await this.find(principal.accountId);
    const account: Account = { metadata: toAccountResourceMetadata(record), spec: {}, info: {} };
    if (principal.admin) {
      account.spec = {
        ...(record.billingEmail ? { billingEmail: record.billingEmail } : {}),
        ...(record.description ? { description: record.description } : {}),
        ...(record.domain ? { domain: record.domain } : {}),
      };
      account.info.webhookEventsHmacSecret = await this.sealer.open(signingSecretAad(record.id), record.webhookSigningSecret);
      account.info.globalApiKey = await this.apiKeys.getGlobal(principal);
    }
    return account;
  }

  /**
   * The caller's own profile (GET /v1/profile, scope-free) with its scopes,
   * its workspaces and the API key it used; never a token or a secret.
   * @throws NotFoundError when the profile is gone (a key deleted mid-request)
   */
  async callerProfile(principal: Principal): Promise<CallerProfile> {
    const [profile, key] = await Promise.all([
      this.store.profiles.findById(principal.profileId),
      principal.apiKeyId ? this.store.apiKeys.findById(principal.apiKeyId) : null,
    ]);
    if (!profile) throw NotFoundError.resource('profile', principal.profileId);
    return toCallerProfile(profile, principal, key);
  }

  /** Registers what to do after a rotation (a node's copy of the secrets must not outlive it). */
  onSigningSecretRotated(hook: SigningSecretRotatedHook): void {
    this.rotatedHooks.push(hook);
  }

  /** A new signing secret; the previous one keeps signing alongside for 24 h. */
  async rotateWebhookSigningKey(principal: Principal): Promise<{ webhookEventsHmacSecret: string }> {
    const record = await this.find(principal.accountId);
    const secret = newWebhookSigningSecret();
    const now = new Date();
    await this.store.accounts.update(record.id, {
      webhookSigningSecret: await this.sealer.seal(signingSecretAad(record.id), secret),
      previousWebhookSigningSecret: record.webhookSigningSecret,
      webhookSigningSecretRotatedAt: now,
      updatedAt: now,
    });
    for (const hook of this.rotatedHooks) hook(record.id);
    return { webhookEventsHmacSecret: secret };
  }

  /** Creates an account, its first workspace, its admin USER profile and the global key. */
  async bootstrap(input: BootstrapInput): Promise<BootstrapResult> {
    if (!input.accountName.trim()) throw InvalidArgumentError.forField('account', 'must not be empty');
    if (!EMAIL.test(input.email)) throw InvalidArgumentError.forField('email', `"${input.email}" is not an email address`);
    const accountId = newId('account');
    // Sealed before the transaction: loading the service key uses the pool, and
    // the embedded database (PGlite) serialises a transaction against every
    // other connection, so doing it inside would wait on itself.
    const webhookSigningSecret = await this.sealer.seal(signingSecretAad(accountId), newWebhookSigningSecret());
    const { result, workspace } = await this.store.transaction(async (store) => {
      const now = new Date();
      const profileId = newId('profile');
      await store.accounts.insert({
        id: accountId,
        name: input.accountName,
        accountId,
        externalId: null,
        labels: {},
        profileId,
        createdAt: now,
        updatedAt: now,
        billingEmail: input.email,
        description: null,
        domain: null,
        webhookSigningSecret,
        previousWebhookSigningSecret: null,
        webhookSigningSecretRotatedAt: null,
      });
      await store.profiles.insert({
        id: profileId,
        accountId,
        name: input.email,
        externalId: null,
        labels: {},
        profileId: null,
        createdAt: now,
        updatedAt: now,
        type: ProfileType.USER,
        email: input.email,
        displayName: null,
        admin: true,
        oidcSubject: null,
      });
      const workspace = await this.workspaces.insert(store, accountId, profileId, { metadata: { name: input.workspaceName ?? 'default' } });
      await store.members.insert({ id: newId('workspaceMember'), workspaceId: workspace.id, profileId, addedAt: now, removedAt: null });
      const key = await insertKey(store, {
        accountId,
        workspaceId: null,
        creatorProfileId: profileId,
        metadata: { name: 'global' },
        description: 'Global account key (system-managed)',
        permissions: [FULL_ACCESS],
        system: true,
      });
      return { result: { accountId, workspaceId: workspace.id, profileId, keyId: key.id, tokenVersion: key.tokenVersion }, workspace };
    });
    await this.workspaces.runCreatedHooks(workspace);
    const token = await this.tokens.issue({ apiKeyId: result.keyId, tokenVersion: result.tokenVersion });
    return { accountId: result.accountId, workspaceId: result.workspaceId, profileId: result.profileId, globalApiKey: { id: result.keyId, token } };
  }

  /**
   * The secrets that sign the account's webhooks (for webhook delivery): the
   * previous one only within 24 h of a rotation.
   */
  async webhookSigningSecrets(accountId: string, now = new Date()): Promise<WebhookSigningSecrets> {
    const record = await this.find(accountId);
    const aad = signingSecretAad(record.id);
    const secrets: WebhookSigningSecrets = { current: await this.sealer.open(aad, record.webhookSigningSecret) };
    const rotatedAt = record.webhookSigningSecretRotatedAt;
    if (record.previousWebhookSigningSecret && rotatedAt && now.getTime() - rotatedAt.getTime() < PREVIOUS_SECRET_VALIDITY_MS) {
      secrets.previous = await this.sealer.open(aad, record.previousWebhookSigningSecret);
      secrets.rotatedAt = rotatedAt;
    }
    return secrets;
  }

  private async find(id: string): Promise<AccountRecord> {
    const record = await this.store.accounts.findById(id);
    if (!record) throw NotFoundError.resource('account', id);
    return record;
  }
}
