// Memory layer rows (spec 2.11). `last_used_at` is written by the runtime;
// `episodic_key` names the episodic layer of (workspace, key), unique per workspace.
import { EntitySchema } from 'typeorm';
import type { MemoryLayerRecord } from '../../src/memory/records';
import { metadataColumns } from './columns';

export const MemoryLayerEntity = new EntitySchema<MemoryLayerRecord>({
  name: 'MemoryLayer',
  tableName: 'memory_layers',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    bundleKey: { type: 'text', name: 'bundle_key', nullable: true },
    type: { type: 'text' },
    description: { type: 'text', nullable: true },
    expiresAt: { type: 'timestamptz', name: 'expires_at', nullable: true },
    systemManaged: { type: 'boolean', name: 'system_managed', default: false },
    lastUsedAt: { type: 'timestamptz', name: 'last_used_at', nullable: true },
    episodicKey: { type: 'text', name: 'episodic_key', nullable: true },
  },
});
