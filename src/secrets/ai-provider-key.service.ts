// AI provider keys (spec 2.9, 4.5, api-decisions.md): `spec.apiKey` is
// encrypted at rest and write-only; promotional keys are provisioned by the
// service and refuse update and delete. The runtime gets the decrypted key
// through resolveProviderCredentials, and only there.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FieldRef } from '../crypto/envelope';
import type { WorkspaceKeyring } from '../crypto/workspace-keyring';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import { newId } from '../ids';
import { checkOutboundUrl, type UrlPolicyOptions } from '../network/url-policy';
import { OPENROUTER_PROVIDER } from '../models/catalog';
import type { ListFilter } from '../ports/foundation-store';
import type { ModelsStore } from '../ports/models-store';
import type { SecretsStore } from '../ports/secrets-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { AiProviderKey, CreateAiProviderKeyBody, UpdateAiProviderKeyBody } from '../schemas/ai-provider-keys.schema';
import type { CreateMetadata } from '../schemas/common.schema';
import { toAiProviderKey } from './mappers';
import { AiProvider, type AiProviderKeyRecord } from './records';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.apiKey', 'spec.provider', 'spec.openrouter', 'spec.openrouter.baseUrl'] as const;

/** Where OpenRouter requests go when a key sets no `spec.openrouter.baseUrl`. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';

/** The model `spec.provider` each key provider serves. */
const MODEL_PROVIDER: Record<AiProvider, string> = {
  [AiProvider.UNSPECIFIED]: OPENROUTER_PROVIDER,
  [AiProvider.OPENROUTER]: OPENROUTER_PROVIDER,
};

/** What the runtime needs to call a provider. Holds the plaintext key: never log it. */
export interface ProviderCredentials {
  keyId: string;
  provider: AiProvider;
  apiKey: string;
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
    const providers = [...new Set(result.items.map((row) => MODEL_PROVIDER[row.provider]))];
    const counts = new Map(await Promise.all(providers.map(async (provider) => [provider, await this.models.countByProvider(workspace.id, provider)] as const)));
    return { ...result, items: result.items.map((row) => toAiProviderKey(row, counts.get(MODEL_PROVIDER[row.provider]))) };
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
    if (touches(paths, 'spec.apiKey')) {
      if (!body.spec?.apiKey) throw InvalidArgumentError.forField('spec.apiKey', 'is required when the update names it');
      changes.apiKeyCiphertext = await this.keyring.encrypt(apiKeyRef(workspace.id, record.id), body.spec.apiKey);
    }
    if (touches(paths, 'spec.provider')) changes.provider = normalizeProvider(body.spec?.provider);
    if (touches(paths, 'spec.openrouter.baseUrl')) {
      const baseUrl = body.spec?.openrouter?.baseUrl;
      changes.openrouterBaseUrl = baseUrl !== undefined ? validateBaseUrl(baseUrl, this.urlPolicy) : null;
    }
    const updated = await this.store.providerKeys.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record);
  }

  /** @throws PermissionDeniedError for a promotional key */
  async delete(workspace: WorkspaceRef, id: string): Promise<void> {
    const record = await this.find(workspace, id);
    if (record.promotional) throw new PermissionDeniedError(`AI provider key ${id} is promotional: it is provisioned by the service and cannot be deleted`);
    await this.store.providerKeys.delete(record.id);
  }

  /**
   * The decrypted key and base URL the runtime uses for `provider` in a
   * workspace: the workspace's own key before a promotional one, the newest first.
   * @throws FailedPreconditionError when the workspace has no key for the provider
   */
  async resolveProviderCredentials(workspaceId: string, provider: AiProvider = AiProvider.OPENROUTER): Promise<ProviderCredentials> {
    const wanted = normalizeProvider(provider);
    const [key] = await this.store.providerKeys.listForProvider(workspaceId, wanted);
    if (!key) throw new FailedPreconditionError(`workspace ${workspaceId} has no ${wanted} provider key; add one with POST /v1/workspaces/${workspaceId}/ai_provider_keys`);
    return {
      keyId: key.id,
      provider: key.provider,
      apiKey: await this.keyring.decrypt(apiKeyRef(workspaceId, key.id), key.apiKeyCiphertext),
      baseUrl: key.openrouterBaseUrl ?? OPENROUTER_BASE_URL,
      promotional: key.promotional,
    };
  }

  private async insert(
    workspace: Pick<WorkspaceRef, 'id' | 'accountId'>,
    creatorProfileId: string | null,
    input: PromotionalKeyInput,
    promotional: boolean,
  ): Promise<AiProviderKeyRecord> {
    const id = newId('aiProviderKey');
    const metadata = newMetadataFields(input.metadata);
    const baseUrl = input.baseUrl !== undefined ? validateBaseUrl(input.baseUrl, this.urlPolicy) : null;
    const now = new Date();
    return this.store.providerKeys.insert({
      id,
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      ...metadata,
      profileId: creatorProfileId,
      provider: normalizeProvider(input.provider),
      apiKeyCiphertext: await this.keyring.encrypt(apiKeyRef(workspace.id, id), input.apiKey),
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
    return toAiProviderKey(record, await this.models.countByProvider(record.workspaceId, MODEL_PROVIDER[record.provider]));
  }
}
