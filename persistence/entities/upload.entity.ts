// Upload rows: the declared file and its lifecycle (PENDING → COMPLETE →
// CONSUMED). The bytes live in object storage under `storage_key`.
import { EntitySchema } from 'typeorm';
import type { UploadRecord } from '../../src/uploads/records';
import { metadataColumns } from './columns';

export const UploadEntity = new EntitySchema<UploadRecord>({
  name: 'Upload',
  tableName: 'uploads',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    filename: { type: 'text' },
    contentType: { type: 'text', name: 'content_type' },
    sizeBytes: { type: 'bigint', name: 'size_bytes', transformer: { to: (value: number) => value, from: (value: string | number) => Number(value) } },
    status: { type: 'text' },
    storageKey: { type: 'text', name: 'storage_key' },
    expiresAt: { type: 'timestamptz', name: 'expires_at' },
    completedAt: { type: 'timestamptz', name: 'completed_at', nullable: true },
    contentSha256: { type: 'text', name: 'content_sha256', nullable: true },
    consumedAt: { type: 'timestamptz', name: 'consumed_at', nullable: true },
    consumedBy: { type: 'text', name: 'consumed_by', nullable: true },
  },
});
