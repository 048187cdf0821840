// Models (spec 2.10, 4.6, api-decisions.md "Models"): each workspace holds its
// own copy of the catalog, seeded ENABLED when the workspace is created and
// completed by the start-up reconcile; clients only enable and disable them.
import type { WorkspaceRef } from '../auth/workspace-access';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import { newIds } from '../ids';
import type { ListFilter } from '../ports/foundation-store';
import type { ModelsStore } from '../ports/models-store';
import { toResourceMetadata } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import type { Model } from '../schemas/models.schema';
import { MODEL_CATALOG, modelFamily, type CatalogModel } from './catalog';
import { ModelStatus, type ModelRecord } from './records';

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
    },
  };
}

export class ModelService {
  constructor(
    private readonly store: ModelsStore,
    private readonly catalog: readonly CatalogModel[] = MODEL_CATALOG,
  ) {}

  /** `status` UNSPECIFIED (or absent) lists every status. */
  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter & { status?: ModelStatus }): Promise<Page<Model>> {
    const status = filter.status === ModelStatus.UNSPECIFIED ? undefined : filter.status;
    return toPage(await this.store.list(workspace.id, page, { ...filter, status }), page, toModel);
  }

  async get(workspace: WorkspaceRef, id: string): Promise<Model> {
    return toModel(await this.find(workspace, id));
  }

  /**
   * Enables or disables a model of the workspace.
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
   * ENABLED; existing rows and their status are left alone. Idempotent and safe
   * to run on several nodes at once. Call it once at start-up.
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
}
