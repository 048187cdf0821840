// TenantStore over TypeORM. Upserts are one INSERT ... ON CONFLICT each, on the
// named unique indexes of the TenantsSearchBundles migration, so concurrent
// assertions of one externalId never create two rows nor fail.
import type { DataSource, EntityManager } from 'typeorm';
import type { TenantStore } from '../../src/ports/tenant-store';
import { SubjectEntity } from '../entities/subject.entity';
import { TenantEntity } from '../entities/tenant.entity';
import { translateDriverError } from './driver-errors';
import { fetchPage } from './list-query';
import { runTransaction } from '../transaction-runner';

// Only the fields the assertion gave are written, and updated_at moves only
// when one of them changed value.
const TENANT_UPSERT = `
  INSERT INTO tenants AS t (id, account_id, workspace_id, name, external_id, labels, profile_id, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $8)
  ON CONFLICT ON CONSTRAINT uq_tenants_external_id DO UPDATE SET
    name = CASE WHEN $9::boolean THEN EXCLUDED.name ELSE t.name END,
    labels = CASE WHEN $10::boolean THEN EXCLUDED.labels ELSE t.labels END,
    updated_at = CASE
      WHEN ($9::boolean AND EXCLUDED.name IS DISTINCT FROM t.name) OR ($10::boolean AND EXCLUDED.labels IS DISTINCT FROM t.labels)
      THEN EXCLUDED.updated_at ELSE t.updated_at END
  RETURNING id`;

function subjectUpsert(withTenant: boolean): string {
  const target = withTenant
    ? '(workspace_id, tenant_id, external_id) WHERE tenant_id IS NOT NULL'
    : '(workspace_id, external_id) WHERE tenant_id IS NULL';
  return `
  INSERT INTO subjects AS s (id, account_id, workspace_id, tenant_id, name, external_id, email, labels, profile_id, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $10)
  ON CONFLICT ${target} DO UPDATE SET
    name = CASE WHEN $11::boolean THEN EXCLUDED.name ELSE s.name END,
    labels = CASE WHEN $12::boolean THEN EXCLUDED.labels ELSE s.labels END,
    email = CASE WHEN $13::boolean THEN EXCLUDED.email ELSE s.email END,
    updated_at = CASE
      WHEN ($11::boolean AND EXCLUDED.name IS DISTINCT FROM s.name) OR ($12::boolean AND EXCLUDED.labels IS DISTINCT FROM s.labels)
        OR ($13::boolean AND EXCLUDED.email IS DISTINCT FROM s.email)
      THEN EXCLUDED.updated_at ELSE s.updated_at END
  RETURNING id`;
}

async function upsertReturningId(manager: EntityManager, sql: string, parameters: unknown[]): Promise<string> {
  try {
    const rows: Array<{ id: string }> = await manager.query(sql, parameters);
    return rows[0].id;
  } catch (error) {
    throw translateDriverError(error);
  }
}

/** A TenantStore bound to `manager` (a transaction or the pool). */
export function tenantStoreFor(manager: EntityManager, dataSource: DataSource): TenantStore {
  const tenants = manager.getRepository(TenantEntity);
  const subjects = manager.getRepository(SubjectEntity);
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(tenantStoreFor(tx, dataSource)), { joining: manager }),
    tenants: {
      async upsert(record, given) {
        const id = await upsertReturningId(manager, TENANT_UPSERT, [
          record.id, record.accountId, record.workspaceId, record.name, record.externalId,
          JSON.stringify(record.labels), record.profileId, record.createdAt, given.name, given.labels,
        ]);
        return (await tenants.findOneBy({ id }))!;
      },
      findById: (id) => tenants.findOneBy({ id }),
      list(workspaceId, page, filter) {
        const query = tenants.createQueryBuilder('t').where('t.workspace_id = :workspaceId', { workspaceId });
        if (filter.externalId !== undefined) query.andWhere('t.external_id = :externalId', { externalId: filter.externalId });
        return fetchPage(query, 't', page, filter);
      },
      async delete(id) {
        await tenants.delete({ id });
      },
    },
    subjects: {
      async upsert(record, given) {
        const id = await upsertReturningId(manager, subjectUpsert(record.tenantId !== null), [
          record.id, record.accountId, record.workspaceId, record.tenantId, record.name, record.externalId, record.email,
          JSON.stringify(record.labels), record.profileId, record.createdAt, given.name, given.labels, given.email ?? false,
        ]);
        return (await subjects.findOneBy({ id }))!;
      },
      findById: (id) => subjects.findOneBy({ id }),
      listByTenant(tenantId, page, filter) {
        const query = subjects.createQueryBuilder('s').where('s.tenant_id = :tenantId', { tenantId });
        if (filter.externalId !== undefined) query.andWhere('s.external_id = :externalId', { externalId: filter.externalId });
        return fetchPage(query, 's', page, filter);
      },
      async idsByTenant(tenantId) {
        const rows = await subjects.createQueryBuilder('s').select('s.id', 'id').where('s.tenant_id = :tenantId', { tenantId }).getRawMany<{ id: string }>();
        return rows.map((row) => row.id);
      },
      async countByTenant(tenantIds) {
        if (!tenantIds.length) return new Map();
        const rows = await subjects
          .createQueryBuilder('s')
          .select('s.tenant_id', 'tenantId')
          .addSelect('count(*)::int', 'count')
          .where('s.tenant_id IN (:...tenantIds)', { tenantIds })
          .groupBy('s.tenant_id')
          .getRawMany<{ tenantId: string; count: number }>();
        return new Map(rows.map((row) => [row.tenantId, Number(row.count)]));
      },
      async delete(id) {
        await subjects.delete({ id });
      },
    },
  };
}

/** The tenant store on the data source's pool. */
export function createTenantStore(dataSource: DataSource): TenantStore {
  return tenantStoreFor(dataSource.manager, dataSource);
}
