// AI provider keys (spec 2.9, 4.5, api-decisions.md): `spec.apiKey` is
// encrypted at rest and write-only, and may be omitted by a key with a
// baseUrl (a model server of the user's own); promotional keys are
// provisioned by the service and refuse update and delete; a key that
// workspace models are served through cannot be deleted. The runtime gets the
// decrypted key through resolveProviderCredentials and resolveKeyCredentials,
// and only there.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FieldRef } from '../crypto/envelope';
import type { WorkspaceKeyring } from '../crypto/workspace-keyring';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import { newId } from '../ids';
import { checkOutboundUrl, type UrlPolicyOptions } from '../network/url-policy';
import { OPENROUTER_PROVIDER } from '../models/catalog';
import type { ListFilter } from '../ports/foundation-store';
import type { ModelCountRow, ModelsStore } from '../ports/models-store';
import type { SecretsStore } from '../ports/secrets-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { AiProviderKey, CreateAiProviderKeyBody, UpdateAiProviderKeyBody } from '../schemas/ai-provider-keys.schema';
import type { CreateMetadata } from '../schemas/common.schema';
import { toAiProviderKey, type ModelCounts } from './mappers';
import { AiProvider, type AiProviderKeyRecord } from './records';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.apiKey', 'spec.provider', 'spec.openrouter', 'spec.openrouter.baseUrl'] as const;

/** Where OpenRouter requests go when a key sets no `spec.openrouter.baseUrl`. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';

/** The model `spec.provider` each key provider serves. */
const MODEL_PROVIDER: Record<AiProvider, string> = {
  [AiProvider.UNSPECIFIED]: OPENROUTER_PROVIDER,
  [AiProvider.OPENROUTER]: OPENROUTER_PROVIDER,
};

/** The model `spec.provider` of the models a key of this provider serves (`openrouter`). */
export function modelProviderOf(provider: AiProvider): string {
  return MODEL_PROVIDER[provider];
}

/** Workspace models named when a key that serves them is refused deletion. */
const MODELS_NAMED = 3;

/** What the runtime needs to call a provider. Holds the plaintext key: never log it. */
export interface ProviderCredentials {
  keyId: string;
  provider: AiProvider;
  /** Absent for a key with a baseUrl and no apiKey: calls then carry no Authorization header. */
  apiKey?: string;
  baseUrl: string;
  promotional: boolean;
}

/** Input of a promotional key (provisioned by the service, never by a client). */
export interface PromotionalKeyInput {
  metadata: CreateMetadata;
  apiKey: string;
  provider?: AiProvider;
  baseUrl?: string;
}

/** What insert() takes: a client's key may omit apiKey when it sets a baseUrl. */
type KeyInput = Omit<PromotionalKeyInput, 'apiKey'> & { apiKey?: string };

/** @throws InvalidArgumentError naming `spec.apiKey` for an empty one: most often a client's way of saying "none", so the message says how */
function refuseEmptyApiKey(apiKey: string | undefined): void {
  if (apiKey === '') throw InvalidArgumentError.forField('spec.apiKey', 'must not be empty; omit spec.apiKey for a server that needs no key');
}

/** @throws InvalidArgumentError naming `spec.apiKey` for a key with neither an apiKey nor a baseUrl */
function requireApiKeyOrBaseUrl(hasApiKey: boolean, baseUrl: string | null): void {
  if (!hasApiKey && baseUrl === null) {
    throw InvalidArgumentError.forField('spec.apiKey', 'is required unless spec.openrouter.baseUrl names a server of your own (one that needs no key)');
  }
}

/** The models a key serves, by status: its provider's catalog models, and the workspace models that name it. */
function countsFor(key: AiProviderKeyRecord, rows: readonly ModelCountRow[]): ModelCounts {
  const provider = MODEL_PROVIDER[key.provider];
  const served = rows.filter((row) => (row.aiProviderKeyId === null ? row.provider === provider : row.aiProviderKeyId === key.id));
  const count = (status: string) => served.filter((row) => row.status === status).reduce((sum, row) => sum + row.count, 0);
  return { enabled: count('MODEL_STATUS_ENABLED'), disabled: count('MODEL_STATUS_DISABLED') };
}

function apiKeyRef(workspaceId: string, keyId: string): FieldRef {
  return { workspaceId, resource: 'ai_provider_key', resourceId: keyId, field: 'spec.apiKey' };
}

function normalizeProvider(provider: AiProvider | undefined): AiProvider {
  return provider === undefined || provider === AiProvider.UNSPECIFIED ? AiProvider.OPENROUTER : provider;
}

/**
 * Checks `spec.openrouter.baseUrl` with the outbound URL policy: an absolute
 * http(s) URL without credentials, not a private address unless allowed.
 * The message never repeats the URL (it could hold a credential).
 * @throws InvalidArgumentError naming the field
 */
export function validateBaseUrl(raw: string, policy: UrlPolicyOptions): string {
  checkOutboundUrl('spec.openrouter.baseUrl', raw, policy, 'put the key in spec.apiKey');
  return raw;
}

export class AiProviderKeyService {
  constructor(
    private readonly store: SecretsStore,
    private readonly models: ModelsStore,
    private readonly keyring: WorkspaceKeyring,
    private readonly urlPolicy: UrlPolicyOptions,
  ) {}

  async create(principal: Principal, workspace: WorkspaceRef, body: CreateAiProviderKeyBody): Promise<AiProviderKey> {
    const record = await this.insert(workspace, principal.profileId, {
      metadata: body.metadata,
      apiKey: body.spec.apiKey,
      provider: body.spec.provider,
      baseUrl: body.spec.openrouter?.baseUrl,
    }, false);
    return this.withInfo(record);
  }

  /** Provisions a promotional key (service-side only; clients can neither update nor delete it). */
  async createPromotional(workspace: Pick<WorkspaceRef, 'id' | 'accountId'>, input: PromotionalKeyInput): Promise<AiProviderKey> {
    return this.withInfo(await this.insert(workspace, null, input, true));
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<AiProviderKey>> {
    const result = toPage(await this.store.providerKeys.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toAiProviderKey(row)) };
    const rows = await this.models.countModels(workspace.id);
    return { ...result, items: result.items.map((row) => toAiProviderKey(row, countsFor(row, rows))) };
  }

  async get(workspace: WorkspaceRef, id: string): Promise<AiProviderKey> {
    return this.withInfo(await this.find(workspace, id));
  }

  /**
   * Applies the masked fields; a new `spec.apiKey` is encrypted, `spec.openrouter`
   * replaces the settings (naming it without `baseUrl` restores the default address).
   * @throws PermissionDeniedError for a promotional key
   */
  async update(workspace: WorkspaceRef, id: string, body: UpdateAiProviderKeyBody, ifMatch?: string): Promise<AiProviderKey> {
    const record = await this.find(workspace, id);
    if (record.promotional) throw new PermissionDeniedError(`AI provider key ${id} is promotional: it is provisioned by the service and cannot be modified`);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<AiProviderKeyRecord> = metadataChanges(body.metadata, paths);
    if (touches(paths, 'spec.provider')) changes.provider = normalizeProvider(body.spec?.provider);
    if (touches(paths, 'spec.openrouter.baseUrl')) {
      const baseUrl = body.spec?.openrouter?.baseUrl;
      changes.openrouterBaseUrl = baseUrl !== undefined ? validateBaseUrl(baseUrl, this.urlPolicy) : null;
    }
    // A mask naming spec.apiKey with no value removes the key (allowed with a baseUrl only).
    const apiKey = touches(paths, 'spec.apiKey') ? body.spec?.apiKey : undefined;
    refuseEmptyApiKey(apiKey);
    const hasApiKey = touches(paths, 'spec.apiKey') ? apiKey !== undefined : record.apiKeyCiphertext !== null;
    requireApiKeyOrBaseUrl(hasApiKey, changes.openrouterBaseUrl !== undefined ? changes.openrouterBaseUrl : record.openrouterBaseUrl);
    if (touches(paths, 'spec.apiKey')) changes.apiKeyCiphertext = apiKey !== undefined ? await this.keyring.encrypt(apiKeyRef(workspace.id, record.id), apiKey) : null;
    const updated = await this.store.providerKeys.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record);
  }

  /**
   * @throws PermissionDeniedError for a promotional key
   * @throws FailedPreconditionError naming the workspace models served through the key
   */
  async delete(workspace: WorkspaceRef, id: string): Promise<void> {
    const record = await this.find(workspace, id);
    if (record.promotional) throw new PermissionDeniedError(`AI provider key ${id} is promotional: it is provisioned by the service and cannot be deleted`);
    const served = await this.models.listByProviderKey(record.id, MODELS_NAMED + 1);
    if (served.length) {
      const names = served.slice(0, MODELS_NAMED).map((model) => model.name).join(', ') + (served.length > MODELS_NAMED ? ' and others' : '');
      const them = served.length === 1 ? 'it' : 'them';
      throw new FailedPreconditionError(`AI provider key ${id} serves the workspace model${served.length === 1 ? '' : 's'} ${names}; delete ${them} or move ${them} to another key (spec.aiProviderKeyId) first`);
    }
    await this.store.providerKeys.delete(record.id);
  }

  /**
   * The decrypted key and base URL the runtime uses for the catalog models of
   * `provider` in a workspace: the workspace's own key before a promotional
   * one, the newest first; keys that workspace models are served through
   * (a local server's, typically) only when there is no other.
   * @throws FailedPreconditionError when the workspace has no key for the provider
   */
  async resolveProviderCredentials(workspaceId: string, provider: AiProvider = AiProvider.OPENROUTER): Promise<ProviderCredentials> {
    const wanted = normalizeProvider(provider);
    const keys = await this.store.providerKeys.listForProvider(workspaceId, wanted);
    if (!keys.length) throw new FailedPreconditionError(`workspace ${workspaceId} has no ${wanted} provider key; add one with POST /v1/workspaces/${workspaceId}/ai_provider_keys`);
    if (keys.length === 1) return this.credentialsOf(keys[0]);
    const bound = new Set(await this.models.providerKeysInUse(workspaceId));
    return this.credentialsOf(keys.find((key) => !bound.has(key.id)) ?? keys[0]);
  }

  /**
   * The decrypted key and base URL of one key of the workspace (the key a workspace model names).
   * @throws FailedPreconditionError when the workspace has no such key
   */
  async resolveKeyCredentials(workspaceId: string, keyId: string): Promise<ProviderCredentials> {
    const key = await this.store.providerKeys.findById(keyId);
    if (!key || key.workspaceId !== workspaceId) throw new FailedPreconditionError(`AI provider key ${keyId} is no longer in workspace ${workspaceId}`);
    return this.credentialsOf(key);
  }

  private async credentialsOf(key: AiProviderKeyRecord): Promise<ProviderCredentials> {
    return {
      keyId: key.id,
      provider: key.provider,
      ...(key.apiKeyCiphertext !== null ? { apiKey: await this.keyring.decrypt(apiKeyRef(key.workspaceId, key.id), key.apiKeyCiphertext) } : {}),
      baseUrl: key.openrouterBaseUrl ?? OPENROUTER_BASE_URL,
      promotional: key.promotional,
    };
  }

  private async insert(
    workspace: Pick<WorkspaceRef, 'id' | 'accountId'>,
    creatorProfileId: string | null,
    input: KeyInput,
    promotional: boolean,
  ): Promise<AiProviderKeyRecord> {
    const id = newId('aiProviderKey');
    const metadata = newMetadataFields(input.metadata);
    const baseUrl = input.baseUrl !== undefined ? validateBaseUrl(input.baseUrl, this.urlPolicy) : null;
    refuseEmptyApiKey(input.apiKey);
    requireApiKeyOrBaseUrl(input.apiKey !== undefined, baseUrl);
    const now = new Date();
    return this.store.providerKeys.insert({
      id,
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      ...metadata,
      profileId: creatorProfileId,
      provider: normalizeProvider(input.provider),
      apiKeyCiphertext: input.apiKey !== undefined ? await this.keyring.encrypt(apiKeyRef(workspace.id, id), input.apiKey) : null,
      openrouterBaseUrl: baseUrl,
      promotional,
      createdAt: now,
      updatedAt: now,
    });
  }

  private async find(workspace: WorkspaceRef, id: string): Promise<AiProviderKeyRecord> {
    const record = await this.store.providerKeys.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('AI provider key', id);
    return record;
  }

  private async withInfo(record: AiProviderKeyRecord): Promise<AiProviderKey> {
    return toAiProviderKey(record, countsFor(record, await this.models.countModels(record.workspaceId)));
  }
}
