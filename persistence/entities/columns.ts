// Column definitions shared by entity schemas: the metadata every resource row
// carries (spec 2.2), written once.
import type { EntitySchemaColumnOptions } from 'typeorm';

import type { MetadataRecord } from '../../src/accounts/records';

export const metadataColumns = {
  id: { type: 'text', primary: true },
  accountId: { type: 'text', name: 'account_id' },
  name: { type: 'text' },
  externalId: { type: 'text', name: 'external_id', nullable: true },
  labels: { type: 'jsonb', default: {} },
  profileId: { type: 'text', name: 'profile_id', nullable: true },
  createdAt: { type: 'timestamptz', name: 'created_at' },
  updatedAt: { type: 'timestamptz', name: 'updated_at' },
} satisfies Record<keyof MetadataRecord, EntitySchemaColumnOptions>;
