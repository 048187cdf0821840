import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import { InvalidArgumentError, NotFoundError } from '../../src/errors';
import type { ErasureRuntimePort } from '../../src/ports/erasure-runtime';
import type { ErasureJob, ErasureTarget } from '../../src/tenants/erasure.behavior';
import { TenantService } from '../../src/tenants/tenant.service';
import { createTenantStore } from '../../persistence/repositories/tenant.store';

describe('TenantService upserts', () => {
  let api: TestApi;
  let workspace: WorkspaceRef;
  let otherWorkspace: WorkspaceRef;
  let sut: TenantService;
  let erased: ErasureTarget[];

  before(async () => {
    api = await startTestApi();
    const account = await api.bootstrap();
    workspace = (await api.services.store.workspaces.findById(account.workspaceId))!;
    const other = await api.bootstrap();
    otherWorkspace = (await api.services.store.workspaces.findById(other.workspaceId))!;
    // Records the jobs handed over; running them is the erasure actor's part (test/api/objective-erasure.test.ts).
    const jobs = new Map<string, ErasureJob>();
    const erasures: ErasureRuntimePort = {
      async start(id, target) {
        erased.push(target);
        const job: ErasureJob = {
          id, target, status: 'ERASURE_STATUS_RUNNING', createdAt: new Date().toISOString(), attempts: 1, failedRuns: 0, lastError: null, nextAttemptAt: null,
          progress: { batchesCompleted: 0, objectivesErased: 0, step: 'ERASURE_STEP_OBJECTIVES' }, cursor: null, batch: null, objectiveCount: null, completedAt: null,
        };
        jobs.set(id, job);
        return job;
      },
      get: async (id) => jobs.get(id) ?? null,
      pendingObjectiveEvents: async () => 0,
      purgeObjectiveEvents: async () => undefined,
      eraseOnWebhookEndpoint: async () => undefined,
    };
    sut = new TenantService(createTenantStore(api.dataSource), erasures);
  });
  beforeEach(() => (erased = []));
  after(async () => api.close());

  const unique = (name: string) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

  describe('upsertTenant', () => {
    it('creates a tenant whose name defaults to the externalId', async () => {
      const externalId = unique('acme');
      const record = await sut.upsertTenant(workspace, { externalId }, { profileId: 'prof_creator' });
      assert.match(record.id, /^tenant_/);
      assert.equal(record.name, externalId);
      assert.equal(record.workspaceId, workspace.id);
      assert.equal(record.accountId, workspace.accountId);
      assert.equal(record.profileId, 'prof_creator');
      assert.deepEqual(record.labels, {});
    });

    it('returns the same tenant for the same externalId and updates only the fields given', async () => {
      const externalId = unique('globex');
      const first = await sut.upsertTenant(workspace, { externalId, name: 'Globex', labels: { tier: 'gold' } });
      const renamed = await sut.upsertTenant(workspace, { externalId, name: 'Globex Corp' });
      assert.equal(renamed.id, first.id);
      assert.equal(renamed.name, 'Globex Corp');
      assert.deepEqual(renamed.labels, { tier: 'gold' });
      assert.ok(renamed.updatedAt.getTime() >= first.updatedAt.getTime());
      const relabelled = await sut.upsertTenant(workspace, { externalId, labels: { tier: 'silver' } });
      assert.equal(relabelled.name, 'Globex Corp');
      assert.deepEqual(relabelled.labels, { tier: 'silver' });
      assert.equal(relabelled.createdAt.getTime(), first.createdAt.getTime());
    });

    it('leaves updatedAt alone when the assertion changes nothing', async () => {
      const externalId = unique('stable');
      const first = await sut.upsertTenant(workspace, { externalId, name: 'Stable', labels: { a: 'b' } });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const again = await sut.upsertTenant(workspace, { externalId, name: 'Stable', labels: { a: 'b' } });
      assert.equal(again.updatedAt.getTime(), first.updatedAt.getTime());
    });

    it('keeps tenants of different workspaces apart', async () => {
      const externalId = unique('shared');
      const mine = await sut.upsertTenant(workspace, { externalId });
      const theirs = await sut.upsertTenant(otherWorkspace, { externalId });
      assert.notEqual(mine.id, theirs.id);
    });

    it('converges concurrent assertions of one externalId on one tenant', async () => {
      const externalId = unique('race');
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => sut.upsertTenant(workspace, { externalId, name: `n${index % 2}` })));
      assert.equal(new Set(results.map((record) => record.id)).size, 1);
      const rows: unknown[] = await api.dataSource.query('SELECT id FROM tenants WHERE workspace_id = $1 AND external_id = $2', [workspace.id, externalId]);
      assert.equal(rows.length, 1);
    });

    it('rejects an empty externalId, a long name and bad labels with INVALID_ARGUMENT naming the field', async () => {
      await assert.rejects(sut.upsertTenant(workspace, { externalId: '' }), (error: InvalidArgumentError) =>
        error instanceof InvalidArgumentError && error.message === 'tenant.externalId: must be a non-empty string');
      await assert.rejects(sut.upsertTenant(workspace, { externalId: 'x', name: 'n'.repeat(257) }), (error: InvalidArgumentError) =>
        error.code === 'INVALID_ARGUMENT' && error.message === 'tenant.name: must be at most 256 characters');
      await assert.rejects(sut.upsertTenant(workspace, { externalId: 'x', labels: { 'bad key!': 'v' } }), (error: InvalidArgumentError) =>
        error.code === 'INVALID_ARGUMENT' && error.fieldViolations[0].field === 'tenant.labels.bad key!');
    });

    it('rejects NUL characters, which Postgres text cannot hold', async () => {
      await assert.rejects(sut.upsertTenant(workspace, { externalId: 'a\u0000b' }), { code: 'INVALID_ARGUMENT', message: 'tenant.externalId: must not contain NUL characters' });
      await assert.rejects(sut.upsertSubject(workspace, undefined, { externalId: 'a', email: 'a\u0000@b' }), { message: 'subject.email: must not contain NUL characters' });
    });

    it('names the caller\'s field prefix in errors', async () => {
      await assert.rejects(sut.upsertTenant(workspace, { externalId: '' }, { field: 'widgetSession.tenant' }), {
        message: 'widgetSession.tenant.externalId: must be a non-empty string',
      });
    });

    it('joins the caller\'s transaction when given its store', async () => {
      const externalId = unique('rolled-back');
      const store = createTenantStore(api.dataSource);
      await assert.rejects(
        store.transaction(async (tx) => {
          await sut.upsertTenant(workspace, { externalId }, { store: tx });
          throw new Error('roll back');
        }),
        { message: 'roll back' },
      );
      const rows: unknown[] = await api.dataSource.query('SELECT id FROM tenants WHERE external_id = $1', [externalId]);
      assert.equal(rows.length, 0);
    });
  });

  describe('upsertSubject', () => {
    it('creates and updates a subject within its tenant', async () => {
      const tenant = await sut.upsertTenant(workspace, { externalId: unique('t') });
      const first = await sut.upsertSubject(workspace, tenant.id, { externalId: 'alice', email: 'alice@example.com' });
      assert.match(first.id, /^subject_/);
      assert.equal(first.tenantId, tenant.id);
      assert.equal(first.name, 'alice');
      assert.equal(first.email, 'alice@example.com');
      const second = await sut.upsertSubject(workspace, tenant.id, { externalId: 'alice', name: 'Alice' });
      assert.equal(second.id, first.id);
      assert.equal(second.name, 'Alice');
      assert.equal(second.email, 'alice@example.com');
    });

    it('distinguishes one externalId in two tenants and without a tenant', async () => {
      const one = await sut.upsertTenant(workspace, { externalId: unique('one') });
      const two = await sut.upsertTenant(workspace, { externalId: unique('two') });
      const externalId = unique('bob');
      const ids = new Set([
        (await sut.upsertSubject(workspace, one.id, { externalId })).id,
        (await sut.upsertSubject(workspace, two.id, { externalId })).id,
        (await sut.upsertSubject(workspace, undefined, { externalId })).id,
        (await sut.upsertSubject(workspace, undefined, { externalId })).id,
      ]);
      assert.equal(ids.size, 3);
    });

    it('converges concurrent assertions, with and without a tenant', async () => {
      const tenant = await sut.upsertTenant(workspace, { externalId: unique('crowd') });
      const externalId = unique('carol');
      const withTenant = await Promise.all(Array.from({ length: 15 }, () => sut.upsertSubject(workspace, tenant.id, { externalId })));
      const withoutTenant = await Promise.all(Array.from({ length: 15 }, () => sut.upsertSubject(workspace, undefined, { externalId })));
      assert.equal(new Set(withTenant.map((record) => record.id)).size, 1);
      assert.equal(new Set(withoutTenant.map((record) => record.id)).size, 1);
    });

    it('returns NOT_FOUND for a tenant of another workspace', async () => {
      const foreign = await sut.upsertTenant(otherWorkspace, { externalId: unique('foreign') });
      await assert.rejects(sut.upsertSubject(workspace, foreign.id, { externalId: 'x' }), (error: NotFoundError) =>
        error instanceof NotFoundError && error.message === `tenant ${foreign.id} not found`);
    });

    it('rejects a malformed email with INVALID_ARGUMENT naming subject.email', async () => {
      await assert.rejects(sut.upsertSubject(workspace, undefined, { externalId: 'x', email: 'not-an-email' }), {
        code: 'INVALID_ARGUMENT',
        message: 'subject.email: is not an email address',
      });
    });
  });

  describe('assert', () => {
    it('upserts the tenant, then the subject within it', async () => {
      const externalId = unique('both');
      const first = await sut.assert(workspace, { tenant: { externalId, name: 'Both' }, subject: { externalId: 'dana', email: 'dana@example.com' } });
      assert.equal(first.subject!.tenantId, first.tenant!.id);
      const again = await sut.assert(workspace, { tenant: { externalId }, subject: { externalId: 'dana' } });
      assert.deepEqual([again.tenant!.id, again.subject!.id], [first.tenant!.id, first.subject!.id]);
      assert.equal(again.tenant!.name, 'Both');
    });

    it('places a subject without a tenant in the workspace, and asserts nothing when given nothing', async () => {
      const only = await sut.assert(workspace, { subject: { externalId: unique('solo') } });
      assert.equal(only.tenant, null);
      assert.equal(only.subject!.tenantId, null);
      assert.deepEqual(await sut.assert(workspace, {}), { tenant: null, subject: null });
    });
  });

  describe('erasure', () => {
    it('hands the erasure of the tenant and all its subjects to a job before deleting, and answers the job', async () => {
      const tenant = await sut.upsertTenant(workspace, { externalId: unique('erase') });
      const a = await sut.upsertSubject(workspace, tenant.id, { externalId: 'a' });
      const b = await sut.upsertSubject(workspace, tenant.id, { externalId: 'b' });
      const erasure = await sut.deleteTenant(workspace, tenant.id);
      assert.match(erasure.metadata.id, /^erasure_/);
      assert.equal(erasure.spec.tenantId, tenant.id);
      assert.equal(erasure.info.status, 'ERASURE_STATUS_RUNNING');
      assert.deepEqual(await sut.getErasure(workspace, erasure.metadata.id), erasure);
      await assert.rejects(sut.getErasure(otherWorkspace, erasure.metadata.id), NotFoundError, 'another workspace does not see it');
      assert.equal(erased.length, 1);
      assert.equal(erased[0].workspaceId, workspace.id);
      assert.equal(erased[0].tenantId, tenant.id);
      assert.deepEqual([...erased[0].subjectIds].sort(), [a.id, b.id].sort());
      const rows: unknown[] = await api.dataSource.query('SELECT id FROM subjects WHERE tenant_id = $1', [tenant.id]);
      assert.equal(rows.length, 0);
    });

    it('erases the objectives of a deleted subject', async () => {
      const subject = await sut.upsertSubject(workspace, undefined, { externalId: unique('s') });
      await sut.deleteSubject(workspace, subject.id);
      assert.deepEqual(erased, [{ accountId: workspace.accountId, workspaceId: workspace.id, subjectIds: [subject.id] }]);
    });
  });
});
