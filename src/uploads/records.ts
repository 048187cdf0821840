// Stored upload records (api-decisions.md "Tenants, subjects, uploads").
import type { MetadataRecord } from '../accounts/records';

export const UploadStatus = {
  UNSPECIFIED: 'UPLOAD_STATUS_UNSPECIFIED',
  PENDING: 'UPLOAD_STATUS_PENDING',
  COMPLETE: 'UPLOAD_STATUS_COMPLETE',
  CONSUMED: 'UPLOAD_STATUS_CONSUMED',
} as const;
export type UploadStatus = (typeof UploadStatus)[keyof typeof UploadStatus];

export interface UploadRecord extends MetadataRecord {
  workspaceId: string;
  filename: string;
  contentType: string;
  /** The size the client declared; `complete` checks the stored object against it. */
  sizeBytes: number;
  status: UploadStatus;
  /** Where the bytes live in object storage. */
  storageKey: string;
  /** When the upload URL stops working. */
  expiresAt: Date;
  completedAt: Date | null;
  /** SHA-256 (hex) of the bytes, taken at completion; consumption checks it. */
  contentSha256: string | null;
  consumedAt: Date | null;
  /** The id of the resource that consumed the upload (a memory entry). */
  consumedBy: string | null;
}
