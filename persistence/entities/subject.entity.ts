// Subject rows: one per (workspace, tenant or none, externalId), upserted by assertion.
import { EntitySchema } from 'typeorm';
import type { SubjectRecord } from '../../src/tenants/records';
import { metadataColumns } from './columns';

export const SubjectEntity = new EntitySchema<SubjectRecord>({
  name: 'Subject',
  tableName: 'subjects',
  columns: {
    ...metadataColumns,
    externalId: { type: 'text', name: 'external_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    tenantId: { type: 'text', name: 'tenant_id', nullable: true },
    email: { type: 'text', nullable: true },
  },
});
