// Tenant rows: one per (workspace, externalId), upserted by assertion.
import { EntitySchema } from 'typeorm';
import type { TenantRecord } from '../../src/tenants/records';
import { metadataColumns } from './columns';

export const TenantEntity = new EntitySchema<TenantRecord>({
  name: 'Tenant',
  tableName: 'tenants',
  columns: {
    ...metadataColumns,
    externalId: { type: 'text', name: 'external_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
  },
});
