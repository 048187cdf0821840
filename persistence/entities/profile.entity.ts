// Profile rows: USER, API_KEY and SYSTEM principals of an account.
import { EntitySchema } from 'typeorm';
import type { ProfileRecord } from '../../src/accounts/records';
import { metadataColumns } from './columns';

export const ProfileEntity = new EntitySchema<ProfileRecord>({
  name: 'Profile',
  tableName: 'profiles',
  columns: {
    ...metadataColumns,
    type: { type: 'text' },
    email: { type: 'text', nullable: true },
    displayName: { type: 'text', name: 'display_name', nullable: true },
    admin: { type: 'boolean', default: false },
    oidcSubject: { type: 'text', name: 'oidc_subject', nullable: true },
  },
});
