// API keys (spec 2.7, 4.3, api-decisions.md): workspace keys and the account's
// global key; create, update, enable/disable, rotate (bumps the token version,
// so every earlier token fails), delete (never the system key).
import { CredentialChanges } from '../auth/credential-changes';
import { newId } from '../ids';
import { NotFoundError, PermissionDeniedError } from '../errors';
import type { Principal } from '../auth/principal';
import { assertCanGrant, assertCanManageKeyHolding, normalizeScopes } from '../auth/scopes';
import type { ApiKeyTokens } from '../auth/tokens';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { ApiKey, CreateApiKeyBody, UpdateApiKeyBody } from '../schemas/account.schema';
import type { CreateMetadata } from '../schemas/common.schema';
import { toApiKey } from './mappers';
import { ApiKeyState, ProfileType, type ApiKeyRecord } from './records';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.description', 'spec.permissions'] as const;
const GLOBAL_KEY_PREVIEW = 10;

export class ApiKeyService {
  constructor(
    private readonly store: FoundationStore,
    private readonly tokens: ApiKeyTokens,
    /** Told after every change of a key's state, scopes or token version (the authenticator forgets what it kept). */
    private readonly changes: CredentialChanges = new CredentialChanges(),
  ) {}

  /** Creates a workspace key and returns it with its token (shown only now). */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateApiKeyBody): Promise<ApiKey> {
    const permissions = normalizeScopes(body.spec?.permissions ?? []);
    assertCanGrant(principal.scopes, permissions);
    const record = await this.store.transaction((store) =>
      insertKey(store, {
        accountId: workspace.accountId,
        workspaceId: workspace.id,
        creatorProfileId: principal.profileId,
        metadata: body.metadata,
        description: body.spec?.description ?? null,
        permissions,
        system: false,
      }),
    );
    const token = await this.tokens.issue({ apiKeyId: record.id, tokenVersion: record.tokenVersion });
    return toApiKey(record, { token, createdBy: await this.store.profiles.findById(principal.profileId) });
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter & { query?: string }, includeInfo: boolean): Promise<Page<ApiKey>> {
    const rows = await this.store.apiKeys.list(workspace.id, page, filter);
    const result = toPage(rows, page, (row) => row);
    const creators = includeInfo ? await this.store.profiles.findByIds(result.items.map((row) => row.profileId)) : new Map();
    return { ...result, items: result.items.map((row) => toApiKey(row, { createdBy: creators.get(row.profileId ?? '') })) };
  }

  /** The key with its creator, read in one round trip (find refuses the system key, so no preview is needed). */
  async get(workspace: WorkspaceRef, id: string): Promise<ApiKey> {
    const found = await this.store.apiKeys.findWithCreator(id);
    return toApiKey(visibleKey(workspace, id, found?.record ?? null), { createdBy: found?.createdBy ?? null });
  }

  async update(principal: Principal, workspace: WorkspaceRef, id: string, body: UpdateApiKeyBody, ifMatch?: string): Promise<ApiKey> {
    const record = await this.find(workspace, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<ApiKeyRecord> = metadataChanges(body.metadata, paths);
    if (touches(paths, 'spec.description')) changes.description = body.spec?.description ?? null;
    if (touches(paths, 'spec.permissions')) {
      changes.permissions = normalizeScopes(body.spec?.permissions ?? []);
      assertCanGrant(principal.scopes, changes.permissions);
    }
    const updated = await this.store.apiKeys.update(record.id, { ...changes, updatedAt: new Date() });
    this.changes.changed();
    return this.withInfo(updated ?? record);
  }

  /**
   * Deletes a workspace key; the system key cannot be deleted.
   * @throws PermissionDeniedError when the key holds a permission the caller lacks
   */
  async delete(principal: Principal, workspace: WorkspaceRef, id: string): Promise<void> {
    const record = await this.find(workspace, id);
    assertCanManageKeyHolding(principal.scopes, record.permissions);
    await this.store.apiKeys.delete(record.id);
    this.changes.changed();
  }

  /** @throws PermissionDeniedError when the key holds a permission the caller lacks */
  async setState(principal: Principal, workspace: WorkspaceRef, id: string, state: ApiKeyState): Promise<ApiKey> {
    const record = await this.find(workspace, id);
    assertCanManageKeyHolding(principal.scopes, record.permissions);
    const updated = await this.store.apiKeys.update(record.id, { state, updatedAt: new Date() });
    this.changes.changed();
    return this.withInfo(updated ?? record);
  }

  /**
   * A new token; every earlier token of the key stops working at once. The
   * caller gets the token, so it must hold every permission of the key.
   */
  async rotate(principal: Principal, workspace: WorkspaceRef, id: string): Promise<ApiKey> {
    const record = await this.find(workspace, id);
    assertCanGrant(principal.scopes, record.permissions);
    return this.rotateRecord(record);
  }

  async getGlobal(principal: Principal): Promise<ApiKey> {
    return this.withInfo(await this.global(principal));
  }

  async rotateGlobal(principal: Principal): Promise<ApiKey> {
    return this.rotateRecord(await this.global(principal));
  }

  async setGlobalState(principal: Principal, state: ApiKeyState): Promise<ApiKey> {
    const record = await this.global(principal);
    const updated = await this.store.apiKeys.update(record.id, { state, updatedAt: new Date() });
    this.changes.changed();
    return this.withInfo(updated ?? record);
  }

  private async rotateRecord(record: ApiKeyRecord): Promise<ApiKey> {
    const updated = await this.store.apiKeys.update(record.id, { tokenVersion: record.tokenVersion + 1, updatedAt: new Date() });
    this.changes.changed();
    const current = updated ?? record;
    const token = await this.tokens.issue({ apiKeyId: current.id, tokenVersion: current.tokenVersion });
    return { ...(await this.withInfo(current)), spec: { ...toApiKey(current, { token }).spec } };
  }

  /** The key `id` of the workspace (see visibleKey). */
  private async find(workspace: WorkspaceRef, id: string): Promise<ApiKeyRecord> {
    return visibleKey(workspace, id, await this.store.apiKeys.findById(id));
  }

  private async global(principal: Principal): Promise<ApiKeyRecord> {
    const record = await this.store.apiKeys.findGlobal(principal.accountId);
    if (!record) throw new NotFoundError('the account has no global API key');
    return record;
  }

  private async withInfo(record: ApiKeyRecord): Promise<ApiKey> {
    const createdBy = record.profileId ? await this.store.profiles.findById(record.profileId) : null;
    if (!record.system) return toApiKey(record, { createdBy });
    const preview = await this.store.workspaces.list(record.accountId, { limit: GLOBAL_KEY_PREVIEW - 1, sortOrder: 'asc' }, { includeArchived: false });
    return toApiKey(record, {
      createdBy,
      workspacesPreview: preview.map((workspace) => ({ id: workspace.id, name: workspace.name })),
      workspacesTotal: await this.store.workspaces.countNotArchived(record.accountId),
    });
  }

}

/**
 * A key of the workspace. The account's system key is addressable here too
 * (so its deletion can be refused explicitly), but only by an admin.
 * @throws NotFoundError for another workspace's or account's key; PermissionDeniedError for the system key
 */
function visibleKey(workspace: WorkspaceRef, id: string, record: ApiKeyRecord | null): ApiKeyRecord {
  if (!record || record.accountId !== workspace.accountId || (record.workspaceId !== workspace.id && !record.system)) {
    throw NotFoundError.resource('API key', id);
  }
  if (record.system) throw new PermissionDeniedError('the system API key is managed through /v1/account/global_api_key and cannot be deleted');
  return record;
}

export interface NewKey {
  accountId: string;
  workspaceId: string | null;
  creatorProfileId: string | null;
  metadata: CreateMetadata;
  description: string | null;
  permissions: string[];
  system: boolean;
}

/** Inserts a key and the API_KEY profile that represents it as a principal. */
export async function insertKey(store: FoundationStore, key: NewKey): Promise<ApiKeyRecord> {
  const now = new Date();
  const metadata = newMetadataFields(key.metadata);
  const principalProfile = await store.profiles.insert({
    id: newId('profile'),
    accountId: key.accountId,
    name: metadata.name,
    externalId: null,
    labels: {},
    profileId: key.creatorProfileId,
    createdAt: now,
    updatedAt: now,
    type: ProfileType.API_KEY,
    email: null,
    displayName: metadata.name,
    admin: false,
    oidcSubject: null,
  });
  return store.apiKeys.insert({
    id: newId('apiKey'),
    accountId: key.accountId,
    workspaceId: key.workspaceId,
    ...metadata,
    profileId: key.creatorProfileId,
    principalProfileId: principalProfile.id,
    description: key.description,
    permissions: key.permissions,
    system: key.system,
    state: ApiKeyState.ENABLED,
    tokenVersion: 1,
    createdAt: now,
    updatedAt: now,
  });
}
