// Stored records of tenants and subjects (api-decisions.md "Tenants, subjects,
// uploads"): created only by assertion, identified by externalId.
import type { MetadataRecord } from '../accounts/records';

/** A tenant: one customer of the workspace's customer, keyed by its externalId. */
export interface TenantRecord extends MetadataRecord {
  workspaceId: string;
  externalId: string;
}

/** A subject: an end user, within a tenant or directly in the workspace. */
export interface SubjectRecord extends MetadataRecord {
  workspaceId: string;
  /** Null for a subject asserted without a tenant. */
  tenantId: string | null;
  externalId: string;
  email: string | null;
}

/** Which asserted fields were given, so an upsert leaves the others alone. */
export interface AssertedFields {
  name: boolean;
  labels: boolean;
  email?: boolean;
}
