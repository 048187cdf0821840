// Record → wire mapping of uploads.
import { toResourceMetadata } from '../resource/metadata';
import type { Upload } from '../schemas/uploads.schema';
import type { UploadRecord } from './records';

/** The Upload resource; `uploadUrl` only when one is given (PENDING, not expired). */
export function toUpload(record: UploadRecord, uploadUrl?: string): Upload {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: { filename: record.filename, contentType: record.contentType, sizeBytes: record.sizeBytes },
    info: {
      status: record.status,
      ...(uploadUrl ? { uploadUrl } : {}),
      uploadMethod: 'PUT',
      expiresAt: record.expiresAt.toISOString(),
    },
  };
}
