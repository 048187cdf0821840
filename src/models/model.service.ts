// Models (spec 2.10, 4.6, api-decisions.md "Models" and "Extensions"): each
// workspace holds its own copy of the catalog, seeded ENABLED when the
// workspace is created and completed by the start-up reconcile; clients only
// enable and disable those. Workspace models are the workspace's own: served
// through one of its AI provider keys under an upstream model id, created,
// changed and deleted by clients (never while a variation names them).
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import { newId, newIds } from '../ids';
import type { ListFilter } from '../ports/foundation-store';
import type { ModelsStore, VariationUsingModel } from '../ports/models-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields, toResourceMetadata } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { CreateModelBody, Model, UpdateModelBody } from '../schemas/models.schema';
import { modelProviderOf } from '../secrets/ai-provider-key.service';
import type { AiProviderKeyRecord } from '../secrets/records';
import { MODEL_CATALOG, modelFamily, type CatalogModel } from './catalog';
import { ModelSource, ModelStatus, type ModelRecord } from './records';
import { caseNote, checkPrice, checkWorkspaceModelName, isWorkspaceModel } from './workspace-model-spec';

const SPEC_PATHS = ['aiProviderKeyId', 'upstreamModel', 'maxInputTokens', 'maxOutputTokens', 'inputPricePerMillionTokens', 'outputPricePerMillionTokens'] as const;
const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, ...SPEC_PATHS.map((key) => `spec.${key}`)];
/** Variations named in a refusal: enough to find them, not a whole list. */
const USERS_NAMED = 3;

/** The provider keys a workspace model may name; SecretsStore's `providerKeys` is one. */
export interface ProviderKeyLookup {
  findById(id: string): Promise<Pick<AiProviderKeyRecord, 'id' | 'workspaceId' | 'provider'> | null>;
}

/** Rows a workspace gets for catalog models (ids ascending in catalog order). */
export function catalogRows(workspace: { id: string; accountId: string }, models: readonly CatalogModel[], now: Date): ModelRecord[] {
  const ids = newIds('model', models.length);
  return models.map((model, index) => ({
    id: ids[index],
    accountId: workspace.accountId,
    workspaceId: workspace.id,
    name: model.id,
    externalId: null,
    labels: {},
    profileId: null,
    family: modelFamily(model.id),
    provider: model.provider,
    inputPricePerMillionTokens: model.inputPricePerMillionTokens,
    outputPricePerMillionTokens: model.outputPricePerMillionTokens,
    maxInputTokens: model.maxInputTokens,
    maxOutputTokens: model.maxOutputTokens,
    status: ModelStatus.ENABLED,
    aiProviderKeyId: null,
    upstreamModel: null,
    createdAt: now,
    updatedAt: now,
  }));
}

export function toModel(record: ModelRecord): Model {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      family: record.family,
      provider: record.provider,
      inputPricePerMillionTokens: record.inputPricePerMillionTokens,
      outputPricePerMillionTokens: record.outputPricePerMillionTokens,
      maxInputTokens: record.maxInputTokens,
      maxOutputTokens: record.maxOutputTokens,
      status: record.status,
      source: isWorkspaceModel(record) ? ModelSource.WORKSPACE : ModelSource.CATALOG,
      ...(isWorkspaceModel(record) ? { aiProviderKeyId: record.aiProviderKeyId, upstreamModel: record.upstreamModel ?? '' } : {}),
    },
  };
}

/** `variation "v1" (agvar_…) of agent agent_…`, for each of the first few users. */
function describeUsers(users: readonly VariationUsingModel[]): string {
  const named = users.slice(0, USERS_NAMED).map((user) => `variation "${user.name}" (${user.id}) of agent ${user.agentId}`);
  return users.length > USERS_NAMED ? `${named.join(', ')} and others` : named.join(', ');
}

export class ModelService {
  constructor(
    private readonly store: ModelsStore,
    private readonly providerKeys: ProviderKeyLookup,
    private readonly catalog: readonly CatalogModel[] = MODEL_CATALOG,
  ) {}

  /** `status` and `source` UNSPECIFIED (or absent) list every status and source. */
  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter & { status?: ModelStatus; source?: ModelSource }): Promise<Page<Model>> {
    const status = filter.status === ModelStatus.UNSPECIFIED ? undefined : filter.status;
    const source = filter.source === ModelSource.UNSPECIFIED ? undefined : filter.source;
    return toPage(await this.store.list(workspace.id, page, { ...filter, status, source }), page, toModel);
  }

  async get(workspace: WorkspaceRef, id: string): Promise<Model> {
    return toModel(await this.find(workspace, id));
  }

  /**
   * Adds a workspace model, ENABLED, served through one of the workspace's provider keys.
   * @throws InvalidArgumentError naming the field (malformed name or price, a key of no such id)
   * @throws AlreadyExistsError when a model of the workspace or of the catalog has the name
   */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateModelBody): Promise<Model> {
    const { spec } = body;
    await this.checkNewName(workspace, body.metadata.name);
    const key = await this.requireProviderKey(workspace, spec.aiProviderKeyId);
    return toModel(await this.store.insert({
      ...newResourceFields(newId('model'), principal, workspace, body.metadata),
      family: modelFamily(body.metadata.name),
      provider: modelProviderOf(key.provider),
      inputPricePerMillionTokens: checkPrice('spec.inputPricePerMillionTokens', spec.inputPricePerMillionTokens),
      outputPricePerMillionTokens: checkPrice('spec.outputPricePerMillionTokens', spec.outputPricePerMillionTokens),
      maxInputTokens: spec.maxInputTokens,
      maxOutputTokens: spec.maxOutputTokens ?? spec.maxInputTokens,
      status: ModelStatus.ENABLED,
      aiProviderKeyId: key.id,
      upstreamModel: spec.upstreamModel,
    }));
  }

  /**
   * Applies the masked fields of a workspace model. A rename is refused while a
   * variation names the model (it would lose its model).
   * @throws PermissionDeniedError for a catalog model
   * @throws FailedPreconditionError for a rename of a model a variation uses
   * @throws AbortedError when If-Match does not match `updatedAt`
   */
  async update(workspace: WorkspaceRef, id: string, body: UpdateModelBody, ifMatch?: string): Promise<Model> {
    const record = await this.findWorkspaceModel(workspace, id, 'changed');
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<ModelRecord> = metadataChanges(body.metadata, paths);
    if (changes.name !== undefined && changes.name !== record.name) {
      await this.checkNewName(workspace, changes.name, record.id);
      await this.refuseWhileUsed(record, 'renamed');
      changes.family = modelFamily(changes.name);
    }
    Object.assign(changes, await this.specChanges(workspace, body.spec ?? {}, paths));
    return toModel((await this.store.update(record.id, { ...changes, updatedAt: new Date() })) ?? record);
  }

  /**
   * Deletes a workspace model no variation names.
   * @throws PermissionDeniedError for a catalog model
   * @throws FailedPreconditionError naming the variations that use it
   */
  async delete(workspace: WorkspaceRef, id: string): Promise<void> {
    const record = await this.findWorkspaceModel(workspace, id, 'deleted');
    await this.refuseWhileUsed(record, 'deleted');
    await this.store.delete(record.id);
  }

  /**
   * Enables or disables a model of the workspace (catalog or workspace model).
   * @throws InvalidArgumentError for MODEL_STATUS_UNSPECIFIED
   */
  async setStatus(workspace: WorkspaceRef, id: string, status: ModelStatus): Promise<Model> {
    if (status !== ModelStatus.ENABLED && status !== ModelStatus.DISABLED) {
      throw InvalidArgumentError.forField('status', 'must be MODEL_STATUS_ENABLED or MODEL_STATUS_DISABLED');
    }
    const record = await this.find(workspace, id);
    if (record.status === status) return toModel(record);
    return toModel((await this.store.update(record.id, { status, updatedAt: new Date() })) ?? record);
  }

  /** The workspace's model with the full id `modelId` (e.g. `openai/gpt-4o-mini`), or null. */
  async findModel(workspaceId: string, modelId: string): Promise<ModelRecord | null> {
    return this.store.findByName(workspaceId, modelId);
  }

  /**
   * The workspace's model named by a reference such as `modelConfig.modelId`.
   * @throws InvalidArgumentError naming `field` when the workspace has no such model
   */
  async requireModel(workspaceId: string, modelId: string, field = 'modelConfig.modelId'): Promise<ModelRecord> {
    const model = await this.findModel(workspaceId, modelId);
    if (!model) throw InvalidArgumentError.forField(field, `"${modelId}" is not a model of this workspace (see GET /v1/models)`);
    return model;
  }

  /**
   * Like requireModel, and the model must be ENABLED (objective creation).
   * @throws FailedPreconditionError when the model is disabled
   */
  async requireEnabledModel(workspaceId: string, modelId: string, field = 'modelConfig.modelId'): Promise<ModelRecord> {
    const model = await this.requireModel(workspaceId, modelId, field);
    if (model.status !== ModelStatus.ENABLED) throw new FailedPreconditionError(`model ${modelId} is disabled in this workspace; enable it with PUT /v1/models/${model.id}/status`);
    return model;
  }

  /** Seeds a new workspace with the whole catalog, ENABLED (idempotent). */
  async seedWorkspace(workspace: { id: string; accountId: string }): Promise<number> {
    return this.store.insertMissing(catalogRows(workspace, this.catalog, new Date()));
  }

  /**
   * Gives every workspace the catalog models it lacks (new in this release),
   * ENABLED; existing rows and their status are left alone, and so is a
   * workspace model that already has a new catalog model's name. Idempotent
   * and safe to run on several nodes at once. Call it once at start-up.
   * @returns how many rows were inserted
   */
  async reconcileCatalog(): Promise<number> {
    const byId = new Map(this.catalog.map((model) => [model.id, model]));
    let inserted = 0;
    for (const gap of await this.store.findGaps([...byId.keys()])) {
      const missing = gap.missing.map((id) => byId.get(id)).filter((model): model is CatalogModel => model !== undefined);
      inserted += await this.store.insertMissing(catalogRows({ id: gap.workspaceId, accountId: gap.accountId }, missing, new Date()));
    }
    return inserted;
  }

  private async find(workspace: WorkspaceRef, id: string): Promise<ModelRecord> {
    const record = await this.store.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('model', id);
    return record;
  }

  /**
   * Checks a name a workspace model is created or renamed with (`self`: the model renamed, which may change its case).
   * @throws InvalidArgumentError naming `metadata.name` for a malformed name
   * @throws AlreadyExistsError naming the catalog model or the workspace's model that has it, in any case
   */
  private async checkNewName(workspace: WorkspaceRef, name: string, self?: string): Promise<void> {
    checkWorkspaceModelName(name, this.catalog);
    const taken = await this.store.findByNameIgnoringCase(workspace.id, name);
    if (taken && taken.id !== self) {
      throw new AlreadyExistsError(`metadata.name: the workspace already has a model named ${taken.name} (${taken.id})${caseNote(name, taken.name)}`);
    }
  }

  /** @throws PermissionDeniedError for a catalog model, which ships with the service */
  private async findWorkspaceModel(workspace: WorkspaceRef, id: string, what: 'changed' | 'deleted'): Promise<ModelRecord> {
    const record = await this.find(workspace, id);
    if (!isWorkspaceModel(record)) {
      throw new PermissionDeniedError(`model ${record.name} is a catalog model: it ships with the service and cannot be ${what} (PUT /v1/models/${record.id}/status enables or disables it)`);
    }
    return record;
  }

  /** @throws InvalidArgumentError naming `spec.aiProviderKeyId` when the workspace has no such key */
  private async requireProviderKey(workspace: WorkspaceRef, keyId: string): Promise<Pick<AiProviderKeyRecord, 'id' | 'provider'>> {
    const key = await this.providerKeys.findById(keyId);
    if (!key || key.workspaceId !== workspace.id) {
      throw InvalidArgumentError.forField('spec.aiProviderKeyId', `${keyId} is not an AI provider key of this workspace (see GET /v1/workspaces/${workspace.id}/ai_provider_keys)`);
    }
    return key;
  }

  /** @throws FailedPreconditionError naming the variations whose modelConfig.modelId is the model's name */
  private async refuseWhileUsed(record: ModelRecord, what: 'renamed' | 'deleted'): Promise<void> {
    const users = await this.store.variationsUsing(record.workspaceId, record.name, USERS_NAMED + 1);
    if (!users.length) return;
    throw new FailedPreconditionError(
      `model ${record.name} cannot be ${what} while ${describeUsers(users)} use${users.length === 1 ? 's' : ''} it; point their spec.modelConfig.modelId at another model first`,
    );
  }

  /** The spec fields a PATCH changes; a named field needs a value (each is required on create). */
  private async specChanges(workspace: WorkspaceRef, spec: NonNullable<UpdateModelBody['spec']>, paths: readonly string[]): Promise<Partial<ModelRecord>> {
    const named = SPEC_PATHS.filter((key) => touches(paths, `spec.${key}`));
    for (const key of named) {
      if (spec[key] === undefined) throw InvalidArgumentError.forField(`spec.${key}`, 'is required when the update names it');
    }
    const changes: Partial<ModelRecord> = {};
    const has = (key: (typeof SPEC_PATHS)[number]) => named.includes(key);
    if (has('aiProviderKeyId')) {
      const key = await this.requireProviderKey(workspace, spec.aiProviderKeyId!);
      changes.aiProviderKeyId = key.id;
      changes.provider = modelProviderOf(key.provider);
    }
    if (has('upstreamModel')) changes.upstreamModel = spec.upstreamModel;
    if (has('maxInputTokens')) changes.maxInputTokens = spec.maxInputTokens;
    if (has('maxOutputTokens')) changes.maxOutputTokens = spec.maxOutputTokens;
    if (has('inputPricePerMillionTokens')) changes.inputPricePerMillionTokens = checkPrice('spec.inputPricePerMillionTokens', spec.inputPricePerMillionTokens!);
    if (has('outputPricePerMillionTokens')) changes.outputPricePerMillionTokens = checkPrice('spec.outputPricePerMillionTokens', spec.outputPricePerMillionTokens!);
    return changes;
  }
}
