// Uploads (api-decisions.md "Tenants, subjects, uploads"): create a PENDING
// upload with a signed PUT URL valid 15 minutes, receive the bytes on the
// service's own URL (local storage), `complete` after checking the stored size,
// and consumption by exactly one memory entry (spec section 7 rule 7).
import { createHash } from 'node:crypto';
import { newId } from '../ids';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { ObjectStorage } from '../ports/object-storage';
import type { UploadStore } from '../ports/upload-store';
import type { CreateUploadBody, Upload } from '../schemas/uploads.schema';
import { toUpload } from './mappers';
import { UploadStatus, type UploadRecord } from './records';
import type { SignedUploadParameters, UploadUrlSigner } from './upload-url-signer';

/** How long an upload URL works. */
export const UPLOAD_URL_TTL_MS = 15 * 60 * 1000;

export interface UploadServiceOptions {
  /** Largest `sizeBytes` accepted. */
  maxBytes: number;
}

/** Reads the request body, refusing more than `limit` bytes. */
export type BodyReader = (limit: number) => Promise<Buffer>;


function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class UploadService {
  constructor(
    private readonly store: UploadStore,
    private readonly storage: ObjectStorage,
    private readonly signer: UploadUrlSigner,
    private readonly options: UploadServiceOptions,
  ) {}

  /**
   * Creates a PENDING upload and its PUT URL.
   * @throws InvalidArgumentError naming `sizeBytes` above the configured maximum
   */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateUploadBody): Promise<Upload> {
    if (body.sizeBytes > this.options.maxBytes) {
      throw InvalidArgumentError.forField('sizeBytes', `must be at most ${this.options.maxBytes} bytes`);
    }
    const now = new Date();
    const id = newId('upload');
    const record = await this.store.insert({
      id,
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      name: body.filename,
      externalId: null,
      labels: {},
      profileId: principal.profileId,
      createdAt: now,
      updatedAt: now,
      filename: body.filename,
      contentType: body.contentType,
      sizeBytes: body.sizeBytes,
      status: UploadStatus.PENDING,
      storageKey: `uploads/${workspace.id}/${id}`,
      expiresAt: new Date(now.getTime() + UPLOAD_URL_TTL_MS),
      completedAt: null,
      contentSha256: null,
      consumedAt: null,
      consumedBy: null,
    });
    return this.present(record, now);
  }

  /**
   * The upload; its PUT URL only for callers who may write uploads (`withUrl`),
   * since the URL itself is a write credential.
   */
  async get(workspace: WorkspaceRef, id: string, withUrl: boolean): Promise<Upload> {
    const record = await this.find(workspace, id);
    return withUrl ? this.present(record, new Date()) : toUpload(record);
  }

  /**
   * Checks the stored object against the declared size and makes the upload
   * COMPLETE. Completing a COMPLETE upload again returns it unchanged.
   * @throws FailedPreconditionError when nothing was uploaded, the size differs, or the upload was consumed
   */
  async complete(workspace: WorkspaceRef, id: string): Promise<Upload> {
    const record = await this.find(workspace, id);
    if (record.status === UploadStatus.CONSUMED) throw new FailedPreconditionError(`upload ${id} was already consumed`);
    if (record.status === UploadStatus.COMPLETE) return this.present(record, new Date());
    const stored = await this.storage.size(record.storageKey);
    if (stored === null) throw new FailedPreconditionError(`upload ${id} has no content yet: PUT the bytes to its uploadUrl first`);
    const bytes = await this.storage.read(record.storageKey);
    if (bytes.length !== record.sizeBytes) throw new FailedPreconditionError(`upload ${id} holds ${bytes.length} bytes but sizeBytes is ${record.sizeBytes}`);
    const now = new Date();
    const updated = await this.store.update(record.id, { status: UploadStatus.COMPLETE, completedAt: now, updatedAt: now, contentSha256: sha256(bytes) });
    return this.present(updated ?? record, now);
  }

  /**
   * Receives the bytes of a PUT to the service's own signed URL.
   * @throws PermissionDeniedError for a missing, altered or expired signature
   * @throws FailedPreconditionError when the upload is no longer PENDING or storage is not local
   */
  async receive(id: string, parameters: Partial<SignedUploadParameters>, readBody: BodyReader): Promise<void> {
    this.signer.verify(id, parameters, new Date());
    if (this.storage.kind !== 'local') {
      throw new FailedPreconditionError('uploads go to S3-compatible storage on this service: PUT to the uploadUrl it returned');
    }
    const record = await this.store.findById(id);
    if (!record) throw NotFoundError.resource('upload', id);
    if (record.status !== UploadStatus.PENDING) throw new FailedPreconditionError(`upload ${id} is ${record.status}; its content can no longer change`);
    const bytes = await readBody(record.sizeBytes);
    await this.storage.put(record.storageKey, bytes, record.contentType);
  }

  /**
   * The bytes of a COMPLETE upload of the workspace, checked for use as a source
   * (spec section 7 rule 7). The caller marks it consumed with UploadStore.consume.
   * @throws NotFoundError naming `field` for an unknown upload or one of another workspace
   * @throws FailedPreconditionError when the upload is not COMPLETE
   */
  async readForConsumption(workspace: WorkspaceRef, id: string, field: string): Promise<{ record: UploadRecord; bytes: Buffer }> {
    const record = await this.store.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw new NotFoundError(`${field}: upload ${id} not found`);
    if (record.status === UploadStatus.CONSUMED) throw new FailedPreconditionError(`${field}: upload ${id} was already consumed`);
    if (record.status !== UploadStatus.COMPLETE) {
      throw new FailedPreconditionError(`${field}: upload ${id} is ${record.status}; only a COMPLETE upload can be used`);
    }
    const bytes = await this.storage.read(record.storageKey);
    // A signed URL stays valid until it expires, so bytes can be replaced after
    // completion; only the bytes that were checked are ever used.
    if (record.contentSha256 !== null && sha256(bytes) !== record.contentSha256) {
      throw new FailedPreconditionError(`${field}: upload ${id} changed after it was completed; upload it again`);
    }
    return { record, bytes };
  }

  /** Removes the bytes of a consumed upload (they now live in the resource that consumed it). */
  async discardContent(record: UploadRecord): Promise<void> {
    await this.storage.delete(record.storageKey);
  }

  private async find(workspace: WorkspaceRef, id: string): Promise<UploadRecord> {
    const record = await this.store.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('upload', id);
    return record;
  }

  private async present(record: UploadRecord, now: Date): Promise<Upload> {
    const open = record.status === UploadStatus.PENDING && record.expiresAt.getTime() > now.getTime();
    const url = open
      ? await this.storage.presignPut({
          uploadId: record.id,
          key: record.storageKey,
          contentType: record.contentType,
          sizeBytes: record.sizeBytes,
          expiresAt: record.expiresAt,
        })
      : undefined;
    return toUpload(record, url);
  }
}
