// Workspace membership rows: a profile's access to a workspace; removal keeps
// the row (removed_at) so the profile and its history stay.
import { EntitySchema } from 'typeorm';
import type { WorkspaceMemberRecord } from '../../src/accounts/records';

export const WorkspaceMemberEntity = new EntitySchema<WorkspaceMemberRecord>({
  name: 'WorkspaceMember',
  tableName: 'workspace_members',
  columns: {
    id: { type: 'text', primary: true },
    workspaceId: { type: 'text', name: 'workspace_id' },
    profileId: { type: 'text', name: 'profile_id' },
    addedAt: { type: 'timestamptz', name: 'added_at' },
    removedAt: { type: 'timestamptz', name: 'removed_at', nullable: true },
  },
});
