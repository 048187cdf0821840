// Memory layer assignment rows: a layer's position in a variation's stack.
import { EntitySchema } from 'typeorm';
import type { MemoryLayerAssignmentRecord } from '../../src/agents/records';

export const VariationMemoryLayerEntity = new EntitySchema<MemoryLayerAssignmentRecord>({
  name: 'VariationMemoryLayer',
  tableName: 'variation_memory_layers',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    variationId: { type: 'text', name: 'variation_id' },
    memoryLayerId: { type: 'text', name: 'memory_layer_id' },
    position: { type: 'integer' },
    profileId: { type: 'text', name: 'profile_id', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
  },
});
