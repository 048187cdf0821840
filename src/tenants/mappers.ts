// Record → wire mappings of tenants and subjects.
import { toResourceMetadata } from '../resource/metadata';
import type { Subject, Tenant } from '../schemas/tenants.schema';
import type { SubjectRecord, TenantRecord } from './records';

export function toTenant(record: TenantRecord, info?: { subjectCount: number }): Tenant {
  return { metadata: toResourceMetadata(record, record.workspaceId), spec: {}, ...(info ? { info } : {}) };
}

export function toSubject(record: SubjectRecord): Subject {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      ...(record.tenantId !== null ? { tenantId: record.tenantId } : {}),
      ...(record.email !== null ? { email: record.email } : {}),
    },
  };
}
