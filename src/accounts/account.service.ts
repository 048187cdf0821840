// The account (spec 4.1): read it, rotate its webhook signing secret, and
// bootstrap a new account with its first workspace, admin user and global key.
import { randomBytes } from 'node:crypto';
import { newId } from '../ids';
import { InvalidArgumentError, NotFoundError } from '../errors';
import type { Principal } from '../auth/principal';
import { FULL_ACCESS } from '../auth/scopes';
import type { ApiKeyTokens } from '../auth/tokens';
import type { FoundationStore } from '../ports/foundation-store';
import { toAccountResourceMetadata } from '../resource/metadata';
import type { Account } from '../schemas/account.schema';
import type { ApiKeyService } from './api-key.service';
import { insertKey } from './api-key.service';
import { ProfileType, type AccountRecord } from './records';
import type { WorkspaceService } from './workspace.service';

/** `wh_` + base64 of 32 random bytes; works as `whsec_<same>` in Standard Webhooks libraries. */
export function newWebhookSigningSecret(): string {
  return `wh_${randomBytes(32).toString('base64')}`;
}

// Deliberately loose: one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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

export class AccountService {
  constructor(
    private readonly store: FoundationStore,
    private readonly tokens: ApiKeyTokens,
    private readonly workspaces: WorkspaceService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  hasAnyAccount(): Promise<boolean> {
    return this.store.accounts.hasAny();
  }

  /**
   * The caller's account. The signing secret and the global key are shown to
   * admin principals only: GET /account is scope-free, so any valid key may
   * call it, and a narrow key must not learn the account's secrets.
   */
  async get(principal: Principal): Promise<Account> {
    const record = await this.find(principal.accountId);
    const account: Account = {
      metadata: toAccountResourceMetadata(record),
      spec: {
        ...(record.billingEmail ? { billingEmail: record.billingEmail } : {}),
        ...(record.description ? { description: record.description } : {}),
        ...(record.domain ? { domain: record.domain } : {}),
      },
      info: {},
    };
    if (principal.admin) {
      account.info.webhookEventsHmacSecret = record.webhookSigningSecret;
      account.info.globalApiKey = await this.apiKeys.getGlobal(principal);
    }
    return account;
  }

  /** A new signing secret; the previous one keeps signing alongside for 24 h. */
  async rotateWebhookSigningKey(principal: Principal): Promise<{ webhookEventsHmacSecret: string }> {
    const record = await this.find(principal.accountId);
    const secret = newWebhookSigningSecret();
    const now = new Date();
    await this.store.accounts.update(record.id, {
      webhookSigningSecret: secret,
      previousWebhookSigningSecret: record.webhookSigningSecret,
      webhookSigningSecretRotatedAt: now,
      updatedAt: now,
    });
    return { webhookEventsHmacSecret: secret };
  }

  /** Creates an account, its first workspace, its admin USER profile and the global key. */
  async bootstrap(input: BootstrapInput): Promise<BootstrapResult> {
    if (!input.accountName.trim()) throw InvalidArgumentError.forField('account', 'must not be empty');
    if (!EMAIL.test(input.email)) throw InvalidArgumentError.forField('email', `"${input.email}" is not an email address`);
    const { result, workspace } = await this.store.transaction(async (store) => {
      const now = new Date();
      const accountId = newId('account');
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
        webhookSigningSecret: newWebhookSigningSecret(),
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

  private async find(id: string): Promise<AccountRecord> {
    const record = await this.store.accounts.findById(id);
    if (!record) throw NotFoundError.resource('account', id);
    return record;
  }
}
