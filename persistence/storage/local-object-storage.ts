// Object storage in the data folder (the default). Clients PUT bytes to the
// service's own URL, `PUT /v1/uploads/{id}/content?expires=&signature=`, signed
// with UploadUrlSigner; files are written atomically (temp file, then rename).
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../../src/errors';
import type { ObjectStorage, PresignPutRequest } from '../../src/ports/object-storage';
import type { UploadUrlSigner } from '../../src/uploads/upload-url-signer';

export interface LocalObjectStorageOptions {
  /** Folder the objects live in (created on first write). */
  root: string;
  /** Public base URL of the service, e.g. `https://agentrt.example.com`. */
  publicUrl: string;
  signer: UploadUrlSigner;
}

export class LocalObjectStorage implements ObjectStorage {
  readonly kind = 'local' as const;

  constructor(private readonly options: LocalObjectStorageOptions) {}

  async presignPut(request: PresignPutRequest): Promise<string> {
    const { expires, signature } = this.options.signer.sign(request.uploadId, request.expiresAt);
    const query = new URLSearchParams({ expires, signature });
    return `${this.options.publicUrl}/v1/uploads/${encodeURIComponent(request.uploadId)}/content?${query}`;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.fileOf(key);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, bytes, { mode: 0o600 });
    await rename(temporary, file);
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.fileOf(key))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async read(key: string): Promise<Buffer> {
    try {
      return await readFile(this.fileOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`object ${key} not found`, { cause: error });
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.fileOf(key), { force: true });
  }

  /** The file of a key; keys are service-made, and anything escaping the root is refused. */
  private fileOf(key: string): string {
    const root = path.resolve(this.options.root);
    const file = path.resolve(root, key);
    if (!file.startsWith(`${root}${path.sep}`)) throw new Error(`object key ${JSON.stringify(key)} escapes the storage folder`);
    return file;
  }
}
