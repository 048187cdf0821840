// Workspace secret rows. `value_ciphertext` holds a sealed record (src/crypto),
// never plaintext.
import { EntitySchema } from 'typeorm';
import type { WorkspaceSecretRecord } from '../../src/secrets/records';
import { metadataColumns } from './columns';

export const WorkspaceSecretEntity = new EntitySchema<WorkspaceSecretRecord>({
  name: 'WorkspaceSecret',
  tableName: 'workspace_secrets',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    valueCiphertext: { type: 'text', name: 'value_ciphertext', nullable: true },
    lastUsedAt: { type: 'timestamptz', name: 'last_used_at', nullable: true },
  },
});
