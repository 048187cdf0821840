// Chooses the upload object storage from configuration: S3-compatible storage
// when AGENTRT_S3_BUCKET is set, else the data folder.
import path from 'node:path';
import type { Config } from '../../src/config';
import type { ObjectStorage } from '../../src/ports/object-storage';
import type { UploadUrlSigner } from '../../src/uploads/upload-url-signer';
import { LocalObjectStorage } from './local-object-storage';
import { S3ObjectStorage } from './s3-object-storage';

export { LocalObjectStorage } from './local-object-storage';
export { S3ObjectStorage } from './s3-object-storage';

export function createObjectStorage(config: Pick<Config, 's3' | 'dataDir' | 'publicUrl'>, signer: UploadUrlSigner): ObjectStorage {
  if (config.s3) return new S3ObjectStorage(config.s3);
  return new LocalObjectStorage({ root: path.join(config.dataDir, 'objects'), publicUrl: config.publicUrl, signer });
}
