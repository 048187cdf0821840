// Object storage in an S3-compatible service (AGENTRT_S3_*). Clients PUT bytes
// straight to a presigned URL; the signed Content-Length and Content-Type make
// the store refuse a body of another size or type.
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { NotFoundError } from '../../src/errors';
import type { S3Config } from '../../src/config';
import type { ObjectStorage, PresignPutRequest } from '../../src/ports/object-storage';

function isMissing(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata?.httpStatusCode === 404;
}

export class S3ObjectStorage implements ObjectStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      // A presigned PUT must not carry a checksum of the (absent) body: the
      // client's bytes would then never match it.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
    });
  }

  async presignPut(request: PresignPutRequest): Promise<string> {
    const expiresIn = Math.max(1, Math.floor((request.expiresAt.getTime() - Date.now()) / 1000));
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: request.key, ContentType: request.contentType, ContentLength: request.sizeBytes });
    return getSignedUrl(this.client, command, { expiresIn, signableHeaders: new Set(['content-type', 'content-length']) });
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }));
  }

  async size(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async read(key: string): Promise<Buffer> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await object.Body!.transformToByteArray());
    } catch (error) {
      if (isMissing(error)) throw new NotFoundError(`object ${key} not found`, { cause: error });
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}
