// Record → wire mappings of tenants and subjects.
import { toResourceMetadata } from '../resource/metadata';
import type { Erasure, Subject, Tenant } from '../schemas/tenants.schema';
import type { ErasureJob } from './erasure.behavior';
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

export function toErasure(job: ErasureJob): Erasure {
  return {
    metadata: { id: job.id, accountId: job.target.accountId, workspaceId: job.target.workspaceId, createdAt: job.createdAt },
    spec: { ...(job.target.tenantId !== undefined ? { tenantId: job.target.tenantId } : {}), subjectIds: job.target.subjectIds },
    info: {
      status: job.status,
      attempts: job.attempts,
      progress: {
        batchesCompleted: job.progress.batchesCompleted,
        objectivesErased: job.progress.objectivesErased,
        ...(job.status === 'ERASURE_STATUS_RUNNING' ? { step: job.progress.step } : {}),
      },
      ...(job.lastError !== null ? { lastError: job.lastError } : {}),
      ...(job.nextAttemptAt !== null ? { nextAttemptAt: job.nextAttemptAt } : {}),
      ...(job.objectiveCount !== null ? { objectiveCount: job.objectiveCount } : {}),
      ...(job.completedAt !== null ? { completedAt: job.completedAt } : {}),
    },
  };
}
