// Object storage for uploads: where the bytes of an upload live and how a
// client is allowed to PUT them. Implementations: the data folder with URLs
// signed by the service (persistence/storage/local-object-storage.ts) and
// S3-compatible storage with presigned URLs (persistence/storage/s3-object-storage.ts).

export interface PresignPutRequest {
  uploadId: string;
  /** The object key the bytes are stored under. */
  key: string;
  contentType: string;
  sizeBytes: number;
  /** When the URL stops working. */
  expiresAt: Date;
}

export interface ObjectStorage {
  /** `local` (bytes arrive through the service's signed URL) or `s3`. */
  readonly kind: 'local' | 's3';
  /** A URL the client PUTs exactly `sizeBytes` bytes to until `expiresAt`. */
  presignPut(request: PresignPutRequest): Promise<string>;
  /** Stores bytes under `key` (used by the service's own signed URL). */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** Size of the stored object, or null when there is none. */
  size(key: string): Promise<number | null>;
  /** The object's bytes. @throws NotFoundError when there is no object under `key` */
  read(key: string): Promise<Buffer>;
  /** Removes the object; absent objects are ignored. */
  delete(key: string): Promise<void>;
}
