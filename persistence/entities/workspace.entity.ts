// Workspace rows: the isolation unit inside an account.
import { EntitySchema } from 'typeorm';
import type { WorkspaceRecord } from '../../src/accounts/records';
import { metadataColumns } from './columns';

export const WorkspaceEntity = new EntitySchema<WorkspaceRecord>({
  name: 'Workspace',
  tableName: 'workspaces',
  columns: {
    ...metadataColumns,
    description: { type: 'text', nullable: true },
    status: { type: 'text' },
  },
});
