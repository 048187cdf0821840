// Memory entries (spec 2.12, api-decisions.md "Memory"): keyed bodies inside a
// layer. Keys follow the rules of memory-key.ts and are unique per layer; the
// body comes from exactly one source, inline `content` or a COMPLETE upload,
// which is consumed in the same transaction as the entry write.
import { newId } from '../ids';
import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { MemoryStore } from '../ports/memory-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { CreateMemoryEntryBody, MemoryEntry, MemoryEntryDetail, UpdateMemoryEntryBody } from '../schemas/memory.schema';
import type { UploadRecord } from '../uploads/records';
import type { UploadService } from '../uploads/upload.service';
import { toMemoryEntry, toMemoryEntryDetail } from './mappers';
import type { MemoryLayerService, ProfileLookup } from './memory-layer.service';
import { validateMemoryKey } from './memory-key';
import type { MemoryEntryRecord, MemoryLayerRecord } from './records';

/** Entry content limit (api-decisions.md): 1 MiB of UTF-8. */
export const MEMORY_CONTENT_MAX_BYTES = 1024 * 1024;

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.key', 'spec.title', 'spec.description', 'spec.content', 'spec.uploadId'] as const;

/** The new body of an entry and, when it came from an upload, that upload. */
interface BodySource {
  content: string;
  upload?: UploadRecord;
}

function checkContentSize(content: string): string {
  const size = Buffer.byteLength(content, 'utf8');
  if (size > MEMORY_CONTENT_MAX_BYTES) {
    throw InvalidArgumentError.forField('spec.content', `must be at most ${MEMORY_CONTENT_MAX_BYTES} bytes of UTF-8 (got ${size})`);
  }
  return content;
}

export class MemoryEntryService {
  constructor(
    private readonly store: MemoryStore,
    private readonly layers: MemoryLayerService,
    private readonly uploads: UploadService,
    private readonly profiles: ProfileLookup,
  ) {}

  /** Summaries (no body) of a layer's entries; `keyPrefix` matches the start of the key, case-sensitively. */
  async list(
    workspace: WorkspaceRef,
    layerId: string,
    page: PageRequest,
    filter: { keyPrefix?: string; labels?: Record<string, string> },
    includeInfo: boolean,
  ): Promise<Page<MemoryEntry>> {
    const layer = await this.layers.find(workspace, layerId);
    const result = toPage(await this.store.entries.list(layer.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toMemoryEntry(row)) };
    const creators = await this.profiles.findByIds(result.items.map((row) => row.profileId));
    return { ...result, items: result.items.map((row) => toMemoryEntry(row, { createdBy: creators.get(row.profileId ?? ''), memoryLayer: layer })) };
  }

  async get(workspace: WorkspaceRef, layerId: string, id: string): Promise<MemoryEntryDetail> {
    const layer = await this.layers.find(workspace, layerId);
    return this.detail(await this.find(layer, id), layer);
  }

  /**
   * Creates an entry from exactly one of `content` and `uploadId`; `metadata.name` defaults to the key.
   * @throws PermissionDeniedError in a system-managed layer
   * @throws InvalidArgumentError for a key breaking a rule of spec 2.12, both or neither source, content over 1 MiB
   * @throws AlreadyExistsError when the layer already holds the key
   * @throws FailedPreconditionError when the upload is not COMPLETE or was consumed
   */
  async create(principal: Principal, workspace: WorkspaceRef, layerId: string, body: CreateMemoryEntryBody): Promise<MemoryEntryDetail> {
    const layer = await this.layers.findMutable(workspace, layerId);
    const { spec } = body;
    validateMemoryKey(spec.key);
    const metadata = newMetadataFields({ name: body.metadata?.name ?? spec.key, externalId: body.metadata?.externalId, labels: body.metadata?.labels });
    if ((spec.content === undefined) === (spec.uploadId === undefined)) {
      throw InvalidArgumentError.forField('spec', `set exactly one of content or uploadId (${spec.content === undefined ? 'neither is' : 'both are'} set)`);
    }
    await this.checkKeyFree(layer, spec.key);
    const source = await this.source(workspace, spec.content, spec.uploadId);
    const now = new Date();
    const record: MemoryEntryRecord = {
      id: newId('memoryEntry'),
      accountId: layer.accountId,
      workspaceId: layer.workspaceId,
      memoryLayerId: layer.id,
      ...metadata,
      profileId: principal.profileId,
      key: spec.key,
      title: spec.title ?? null,
      description: spec.description ?? null,
      content: source.content,
      createdAt: now,
      updatedAt: now,
    };
    await this.store.transaction(async (store) => {
      await store.entries.insert(record);
      await this.consume(store, source, record.id, now);
    });
    await this.discard(source);
    return this.detail(record, layer);
  }

  /**
   * Applies the masked fields; the body changes only when `spec.content` or `spec.uploadId` is named.
   * @throws InvalidArgumentError for both sources at once, a bad key, or an oversized body
   * @throws AbortedError when If-Match does not match `metadata.updatedAt`
   */
  async update(workspace: WorkspaceRef, layerId: string, id: string, body: UpdateMemoryEntryBody, ifMatch?: string): Promise<MemoryEntryDetail> {
    const layer = await this.layers.findMutable(workspace, layerId);
    const record = await this.find(layer, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<MemoryEntryRecord> = metadataChanges(body.metadata, paths);
    const spec = body.spec ?? {};
    if (touches(paths, 'spec.key')) changes.key = await this.newKey(layer, record, spec.key);
    if (touches(paths, 'spec.title')) changes.title = spec.title ?? null;
    if (touches(paths, 'spec.description')) changes.description = spec.description ?? null;
    const source = await this.updateSource(workspace, paths, spec);
    if (source) changes.content = source.content;
    const now = new Date();
    const updated = await this.store.transaction(async (store) => {
      const row = await store.entries.update(record.id, { ...changes, updatedAt: now });
      if (source) await this.consume(store, source, record.id, now);
      return row;
    });
    if (source) await this.discard(source);
    return this.detail(updated ?? record, layer);
  }

  /** @throws PermissionDeniedError in a system-managed layer */
  async delete(workspace: WorkspaceRef, layerId: string, id: string): Promise<void> {
    const layer = await this.layers.findMutable(workspace, layerId);
    const record = await this.find(layer, id);
    await this.store.entries.delete(record.id);
  }

  private async find(layer: MemoryLayerRecord, id: string): Promise<MemoryEntryRecord> {
    const record = await this.store.entries.findById(id);
    if (!record || record.memoryLayerId !== layer.id) throw NotFoundError.resource('memory entry', id);
    return record;
  }

  private async newKey(layer: MemoryLayerRecord, record: MemoryEntryRecord, key: string | undefined): Promise<string> {
    if (key === undefined) throw InvalidArgumentError.forField('spec.key', 'is named in updateMask but not set; a key cannot be removed');
    validateMemoryKey(key);
    if (key !== record.key) await this.checkKeyFree(layer, key);
    return key;
  }

  /** ALREADY_EXISTS with the key in the message; the unique index uq_memory_entries_key catches races. */
  private async checkKeyFree(layer: MemoryLayerRecord, key: string): Promise<void> {
    const existing = await this.store.entries.findByKey([layer.id], key);
    if (existing.length) throw new AlreadyExistsError(`memory layer ${layer.id} already has an entry with key "${key}"`);
  }

  private async updateSource(workspace: WorkspaceRef, paths: string[], spec: NonNullable<UpdateMemoryEntryBody['spec']>): Promise<BodySource | undefined> {
    const content = touches(paths, 'spec.content');
    const upload = touches(paths, 'spec.uploadId');
    if (content && upload) throw InvalidArgumentError.forField('spec', 'set exactly one of content or uploadId to replace the body (both are named)');
    if (upload && spec.uploadId === undefined) throw InvalidArgumentError.forField('spec.uploadId', 'is named in updateMask but not set');
    if (content) return this.source(workspace, spec.content ?? '', undefined);
    if (upload) return this.source(workspace, undefined, spec.uploadId);
    return undefined;
  }

  private async source(workspace: WorkspaceRef, content: string | undefined, uploadId: string | undefined): Promise<BodySource> {
    if (content !== undefined) return { content: checkContentSize(content) };
    const { record, bytes } = await this.uploads.readForConsumption(workspace, uploadId ?? '', 'spec.uploadId');
    if (bytes.length > MEMORY_CONTENT_MAX_BYTES) {
      throw InvalidArgumentError.forField('spec.uploadId', `upload ${record.id} holds ${bytes.length} bytes; entry content is at most ${MEMORY_CONTENT_MAX_BYTES} bytes`);
    }
    try {
      return { content: new TextDecoder('utf-8', { fatal: true }).decode(bytes), upload: record };
    } catch (error) {
      throw new InvalidArgumentError(`spec.uploadId: upload ${record.id} is not valid UTF-8 text`, [{ field: 'spec.uploadId', description: 'is not valid UTF-8 text' }], { cause: error });
    }
  }

  private async consume(store: MemoryStore, source: BodySource, entryId: string, at: Date): Promise<void> {
    if (!source.upload) return;
    if (!(await store.uploads.consume(source.upload.id, entryId, at))) {
      throw new FailedPreconditionError(`spec.uploadId: upload ${source.upload.id} was already consumed`);
    }
  }

  /** The bytes now live in the entry; a failure to remove them leaves only an orphaned object. */
  private async discard(source: BodySource): Promise<void> {
    if (source.upload) await this.uploads.discardContent(source.upload).catch(() => undefined);
  }

  private async detail(record: MemoryEntryRecord, layer: MemoryLayerRecord): Promise<MemoryEntryDetail> {
    const createdBy = record.profileId ? await this.profiles.findById(record.profileId) : null;
    return toMemoryEntryDetail(record, { createdBy, memoryLayer: layer });
  }

}
