// API key rows. The token itself is never stored: it is a JWT carrying the key
// id and `token_version`, which rotation increments.
import { EntitySchema } from 'typeorm';
import type { ApiKeyRecord } from '../../src/accounts/records';
import { metadataColumns } from './columns';

export const ApiKeyEntity = new EntitySchema<ApiKeyRecord>({
  name: 'ApiKey',
  tableName: 'api_keys',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id', nullable: true },
    principalProfileId: { type: 'text', name: 'principal_profile_id' },
    description: { type: 'text', nullable: true },
    permissions: { type: 'jsonb', default: [] },
    system: { type: 'boolean', default: false },
    state: { type: 'text' },
    tokenVersion: { type: 'integer', name: 'token_version', default: 1 },
  },
});
