// Variation assignment rows: one tool, tool set or sub-agent per row.
import { EntitySchema } from 'typeorm';
import type { AssignmentRecord } from '../../src/agents/records';

export const VariationAssignmentEntity = new EntitySchema<AssignmentRecord>({
  name: 'VariationAssignment',
  tableName: 'variation_assignments',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    variationId: { type: 'text', name: 'variation_id' },
    agentId: { type: 'text', name: 'agent_id', nullable: true },
    toolId: { type: 'text', name: 'tool_id', nullable: true },
    toolSetId: { type: 'text', name: 'tool_set_id', nullable: true },
    requiresApproval: { type: 'boolean', name: 'requires_approval', nullable: true },
    profileId: { type: 'text', name: 'profile_id', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});
