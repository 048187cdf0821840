// Tenants and subjects (api-decisions.md "Tenants, subjects, uploads"): upserted
// by externalId when objectives or widget sessions assert them, read and erased
// through the API. Erasure removes the records at once and hands the content
// of their objectives to a durable erasure job (src/tenants/erasure.behavior.ts,
// through the ErasureRuntimePort), which the caller can follow.
import { InvalidArgumentError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { ErasureRuntimePort } from '../ports/erasure-runtime';
import type { TenantListFilter, TenantStore } from '../ports/tenant-store';
import { validateLabels } from '../resource/labels';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { EXTERNAL_ID_MAX, NAME_MAX } from '../schemas/common.schema';
import { EMAIL_MAX, type Subject, type SubjectAssertion, type Tenant, type TenantAssertion } from '../schemas/tenants.schema';
import type { Erasure } from '../schemas/tenants.schema';
import type { ErasureTarget } from './erasure.behavior';
import { toErasure, toSubject, toTenant } from './mappers';
import type { SubjectRecord, TenantRecord } from './records';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Options of an upsert. */
export interface UpsertOptions {
  /** The asserting principal's profile, recorded as creator of a new row. */
  profileId?: string | null;
  /** A store bound to the caller's transaction (default: the service's own). */
  store?: TenantStore;
  /** Field prefix of error messages (default `tenant` / `subject`). */
  field?: string;
}

function checkText(field: string, value: string | undefined, max: number, required: boolean): void {
  if (value === undefined) {
    if (required) throw InvalidArgumentError.forField(field, 'is required');
    return;
  }
  if (typeof value !== 'string' || value.length === 0) throw InvalidArgumentError.forField(field, 'must be a non-empty string');
  if (value.length > max) throw InvalidArgumentError.forField(field, `must be at most ${max} characters`);
  if (value.includes('\u0000')) throw InvalidArgumentError.forField(field, 'must not contain NUL characters');
}

/** List filters are stored-text comparisons: Postgres text cannot hold NUL. */
function checkFilter(filter: TenantListFilter): TenantListFilter {
  for (const field of ['prefix', 'externalId'] as const) {
    if (filter[field]?.includes('\u0000')) throw InvalidArgumentError.forField(field, 'must not contain NUL characters');
  }
  return filter;
}

function checkAssertion(field: string, assertion: { externalId: string; name?: string; labels?: Record<string, string> }): void {
  checkText(`${field}.externalId`, assertion.externalId, EXTERNAL_ID_MAX, true);
  checkText(`${field}.name`, assertion.name, NAME_MAX, false);
  validateLabels(assertion.labels, `${field}.labels`);
}

export class TenantService {
  constructor(
    private readonly store: TenantStore,
    private readonly erasures: ErasureRuntimePort,
  ) {}

  /**
   * Creates the workspace's tenant with this externalId, or updates the name
   * and labels given (labels replace the stored map; absent fields stay).
   * Concurrency-safe: concurrent assertions of one externalId return one tenant.
   * @throws InvalidArgumentError naming `tenant.<field>`
   */
  async upsertTenant(workspace: WorkspaceRef, assertion: TenantAssertion, options: UpsertOptions = {}): Promise<TenantRecord> {
    checkAssertion(options.field ?? 'tenant', assertion);
    const now = new Date();
    return (options.store ?? this.store).tenants.upsert(
      {
        id: newId('tenant'),
        accountId: workspace.accountId,
        workspaceId: workspace.id,
        name: assertion.name ?? assertion.externalId,
        externalId: assertion.externalId,
        labels: assertion.labels ?? {},
        profileId: options.profileId ?? null,
        createdAt: now,
        updatedAt: now,
      },
      { name: assertion.name !== undefined, labels: assertion.labels !== undefined },
    );
  }

  /**
   * Creates the subject with this externalId in the tenant (or directly in the
   * workspace when `tenantId` is undefined), or updates the fields given.
   * @throws InvalidArgumentError naming `subject.<field>`
   * @throws NotFoundError when `tenantId` is not a tenant of the workspace
   */
  async upsertSubject(workspace: WorkspaceRef, tenantId: string | undefined, assertion: SubjectAssertion, options: UpsertOptions = {}): Promise<SubjectRecord> {
    const field = options.field ?? 'subject';
    checkAssertion(field, assertion);
    checkText(`${field}.email`, assertion.email, EMAIL_MAX, false);
    if (assertion.email !== undefined && !EMAIL.test(assertion.email)) throw InvalidArgumentError.forField(`${field}.email`, 'is not an email address');
    const store = options.store ?? this.store;
    if (tenantId !== undefined) await this.findTenant(workspace, tenantId, store);
    const now = new Date();
    return store.subjects.upsert(
      {
        id: newId('subject'),
        accountId: workspace.accountId,
        workspaceId: workspace.id,
        tenantId: tenantId ?? null,
        name: assertion.name ?? assertion.externalId,
        externalId: assertion.externalId,
        email: assertion.email ?? null,
        labels: assertion.labels ?? {},
        profileId: options.profileId ?? null,
        createdAt: now,
        updatedAt: now,
      },
      { name: assertion.name !== undefined, labels: assertion.labels !== undefined, email: assertion.email !== undefined },
    );
  }

  /**
   * The assertion of an objective or widget-session body: upserts `tenant`,
   * then `subject` within it (or within the workspace when no tenant is asserted).
   * @throws InvalidArgumentError naming `tenant.<field>` or `subject.<field>`
   */
  async assert(
    workspace: WorkspaceRef,
    assertion: { tenant?: TenantAssertion; subject?: SubjectAssertion },
    options: Omit<UpsertOptions, 'field'> = {},
  ): Promise<{ tenant: TenantRecord | null; subject: SubjectRecord | null }> {
    const tenant = assertion.tenant ? await this.upsertTenant(workspace, assertion.tenant, options) : null;
    const subject = assertion.subject ? await this.upsertSubject(workspace, tenant?.id, assertion.subject, options) : null;
    return { tenant, subject };
  }

  async listTenants(workspace: WorkspaceRef, page: PageRequest, filter: TenantListFilter, includeInfo: boolean): Promise<Page<Tenant>> {
    const result = toPage(await this.store.tenants.list(workspace.id, page, checkFilter(filter)), page, (row) => row);
    const counts = includeInfo ? await this.store.subjects.countByTenant(result.items.map((row) => row.id)) : undefined;
    return { ...result, items: result.items.map((row) => toTenant(row, counts && { subjectCount: counts.get(row.id) ?? 0 })) };
  }

  async getTenant(workspace: WorkspaceRef, id: string): Promise<Tenant> {
    const record = await this.findTenant(workspace, id);
    const counts = await this.store.subjects.countByTenant([record.id]);
    return toTenant(record, { subjectCount: counts.get(record.id) ?? 0 });
  }

  /**
   * Erases the tenant: stores the erasure job of its objectives' content (and
   * its subjects'), then deletes the record and its subjects. The job runs on.
   * @throws UnavailableError from the port when this node runs no actor runtime (nothing deleted)
   */
  async deleteTenant(workspace: WorkspaceRef, id: string): Promise<Erasure> {
    const record = await this.findTenant(workspace, id);
    const subjectIds = await this.store.subjects.idsByTenant(record.id);
    return this.erase({ accountId: workspace.accountId, workspaceId: workspace.id, tenantId: record.id, subjectIds: [...subjectIds] }, () => this.store.tenants.delete(record.id));
  }

  async listSubjects(workspace: WorkspaceRef, tenantId: string, page: PageRequest, filter: TenantListFilter): Promise<Page<Subject>> {
    const tenant = await this.findTenant(workspace, tenantId);
    return toPage(await this.store.subjects.listByTenant(tenant.id, page, checkFilter(filter)), page, toSubject);
  }

  async getSubject(workspace: WorkspaceRef, id: string): Promise<Subject> {
    return toSubject(await this.findSubject(workspace, id));
  }

  /** Erases the subject: stores the erasure job of its objectives' content, then deletes the record. */
  async deleteSubject(workspace: WorkspaceRef, id: string): Promise<Erasure> {
    const record = await this.findSubject(workspace, id);
    return this.erase({ accountId: workspace.accountId, workspaceId: workspace.id, subjectIds: [record.id] }, () => this.store.subjects.delete(record.id));
  }

  /**
   * An erasure job of the workspace, as its actor holds it.
   * @throws NotFoundError for an id that is not an erasure of the workspace
   */
  async getErasure(workspace: WorkspaceRef, id: string): Promise<Erasure> {
    const job = await this.erasures.get(id);
    if (!job || job.target.workspaceId !== workspace.id || job.target.accountId !== workspace.accountId) throw NotFoundError.resource('erasure', id);
    return toErasure(job);
  }

  /**
   * The job first: once it is stored, the content goes whatever happens to
   * this request. A request that dies before deleting the record leaves it
   * for a retried DELETE (a second job erases nothing twice).
   */
  private async erase(target: ErasureTarget, deleteRecord: () => Promise<void>): Promise<Erasure> {
    const job = await this.erasures.start(newId('erasure'), target);
    await deleteRecord();
    return toErasure(job);
  }

  private async findTenant(workspace: WorkspaceRef, id: string, store = this.store): Promise<TenantRecord> {
    const record = await store.tenants.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('tenant', id);
    return record;
  }

  private async findSubject(workspace: WorkspaceRef, id: string): Promise<SubjectRecord> {
    const record = await this.store.subjects.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('subject', id);
    return record;
  }
}
