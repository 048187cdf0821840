// Memory entry rows (spec 2.12). `content` is left out of list queries, which
// select the summary columns only.
import { EntitySchema } from 'typeorm';
import type { MemoryEntryRecord } from '../../src/memory/records';
import { metadataColumns } from './columns';

export const MemoryEntryEntity = new EntitySchema<MemoryEntryRecord>({
  name: 'MemoryEntry',
  tableName: 'memory_entries',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    memoryLayerId: { type: 'text', name: 'memory_layer_id' },
    key: { type: 'text' },
    title: { type: 'text', nullable: true },
    description: { type: 'text', nullable: true },
    content: { type: 'text', default: '' },
  },
});
