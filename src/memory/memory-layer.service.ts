// Memory layers (spec 2.11, 4.7, api-decisions.md "Memory"): create, list with
// a type filter, get with entry count, masked update and delete. Layers the
// runtime manages (systemManaged) are readable but immutable to clients.
import { newId } from '../ids';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import type { MemoryStore } from '../ports/memory-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { CreateMemoryLayerBody, MemoryLayer, UpdateMemoryLayerBody } from '../schemas/memory.schema';
import { toMemoryLayer } from './mappers';
import { MemoryLayerType, type MemoryLayerRecord } from './records';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.type', 'spec.description'] as const;

export type ProfileLookup = Pick<FoundationStore['profiles'], 'findById' | 'findByIds'>;

/** What the runtime states when it creates a layer it manages. */
export interface SystemManagedLayer {
  name: string;
  type: MemoryLayerType;
  description?: string;
  /** When the layer becomes eligible for cleanup (episodic layers with a TTL). */
  expiresAt?: Date;
}

export class MemoryLayerService {
  constructor(
    private readonly store: MemoryStore,
    private readonly profiles: ProfileLookup,
  ) {}

  /** @throws InvalidArgumentError naming `spec.type` for MEMORY_LAYER_TYPE_UNSPECIFIED */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateMemoryLayerBody): Promise<MemoryLayer> {
    if (body.spec.type === MemoryLayerType.UNSPECIFIED) {
      throw InvalidArgumentError.forField('spec.type', 'must be MEMORY_LAYER_TYPE_EPISODIC or MEMORY_LAYER_TYPE_SKILLS');
    }
    const record = await this.insert(workspace, principal.profileId, {
      ...newMetadataFields(body.metadata),
      type: body.spec.type,
      description: body.spec.description ?? null,
      expiresAt: null,
      systemManaged: false,
    });
    return this.withInfo(record);
  }

  /**
   * Creates a layer the runtime manages (for example the episodic layer of an
   * objective's episodic key). Clients can read it but never change it.
   */
  async createSystemManaged(workspace: WorkspaceRef, layer: SystemManagedLayer): Promise<MemoryLayer> {
    const record = await this.insert(workspace, null, {
      name: layer.name,
      externalId: null,
      labels: {},
      type: layer.type,
      description: layer.description ?? null,
      expiresAt: layer.expiresAt ?? null,
      systemManaged: true,
    });
    return this.withInfo(record);
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter & { type?: MemoryLayerType }, includeInfo: boolean): Promise<Page<MemoryLayer>> {
    const result = toPage(await this.store.layers.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toMemoryLayer(row)) };
    const counts = await this.store.layers.countEntries(result.items.map((row) => row.id));
    const creators = await this.profiles.findByIds(result.items.map((row) => row.profileId));
    return {
      ...result,
      items: result.items.map((row) => toMemoryLayer(row, { createdBy: creators.get(row.profileId ?? ''), entryCount: counts.get(row.id) ?? 0 })),
    };
  }

  async get(workspace: WorkspaceRef, id: string): Promise<MemoryLayer> {
    return this.withInfo(await this.find(workspace, id));
  }

  /** @throws PermissionDeniedError for a system-managed layer */
  async update(workspace: WorkspaceRef, id: string, body: UpdateMemoryLayerBody, ifMatch?: string): Promise<MemoryLayer> {
    const record = await this.findMutable(workspace, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    if (touches(paths, 'spec.type') && body.spec?.type !== record.type) {
      throw InvalidArgumentError.forField('spec.type', `cannot be changed after creation (the layer is ${record.type})`);
    }
    const changes: Partial<MemoryLayerRecord> = metadataChanges(body.metadata, paths);
    if (touches(paths, 'spec.description')) changes.description = body.spec?.description ?? null;
    const updated = await this.store.layers.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record);
  }

  /**
   * Deletes a layer and its entries.
   * @throws PermissionDeniedError for a system-managed layer
   * @throws FailedPreconditionError while the layer is assigned to a variation, unless `force`
   */
  async delete(workspace: WorkspaceRef, id: string, force: boolean): Promise<void> {
    const record = await this.findMutable(workspace, id);
    const assignments = await this.store.layers.countAssignments(record.id);
    if (assignments > 0 && !force) {
      throw new FailedPreconditionError(`memory layer ${id} is assigned to ${assignments} variation(s); remove the assignments or delete with force=true`);
    }
    await this.store.layers.delete(record.id);
  }

  /** Records that an objective resolved keys against these layers (info.lastUsedAt). */
  async markUsed(layerIds: readonly string[], at: Date = new Date()): Promise<void> {
    if (layerIds.length) await this.store.layers.markUsed(layerIds, at);
  }

  /** A layer of the workspace. @throws NotFoundError otherwise */
  async find(workspace: WorkspaceRef, id: string): Promise<MemoryLayerRecord> {
    const record = await this.store.layers.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('memory layer', id);
    return record;
  }

  /** A layer of the workspace that clients may change. @throws PermissionDeniedError for a system-managed one */
  async findMutable(workspace: WorkspaceRef, id: string): Promise<MemoryLayerRecord> {
    const record = await this.find(workspace, id);
    if (record.systemManaged) throw new PermissionDeniedError(`memory layer ${id} is system-managed and cannot be changed by clients`);
    return record;
  }

  private async insert(
    workspace: WorkspaceRef,
    profileId: string | null,
    fields: Pick<MemoryLayerRecord, 'name' | 'externalId' | 'labels' | 'type' | 'description' | 'expiresAt' | 'systemManaged'>,
  ): Promise<MemoryLayerRecord> {
    const now = new Date();
    return this.store.layers.insert({
      id: newId('memoryLayer'),
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      bundleKey: null,
      profileId,
      lastUsedAt: null,
      episodicKey: null,
      createdAt: now,
      updatedAt: now,
      ...fields,
    });
  }

  private async withInfo(record: MemoryLayerRecord): Promise<MemoryLayer> {
    const [counts, createdBy] = await Promise.all([
      this.store.layers.countEntries([record.id]),
      record.profileId ? this.profiles.findById(record.profileId) : null,
    ]);
    return toMemoryLayer(record, { createdBy, entryCount: counts.get(record.id) ?? 0 });
  }

}
