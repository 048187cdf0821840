// Feedback rows: one rating of a variation, optionally tied to an objective.
import { EntitySchema } from 'typeorm';
import type { FeedbackRecord } from '../../src/agents/records';

export const FeedbackEntity = new EntitySchema<FeedbackRecord>({
  name: 'Feedback',
  tableName: 'feedback',
  columns: {
    id: { type: 'text', primary: true },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    agentId: { type: 'text', name: 'agent_id' },
    variationId: { type: 'text', name: 'variation_id' },
    objectiveId: { type: 'text', name: 'objective_id', nullable: true },
    rating: { type: 'text' },
    comment: { type: 'text', nullable: true },
    profileId: { type: 'text', name: 'profile_id', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});
