import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import type { BootstrapResult } from '../../src/accounts/account.service';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import type { TenantRecord } from '../../src/tenants/records';

const MISSING_TENANT = 'tenant_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const MISSING_SUBJECT = 'subject_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('tenants and subjects API', () => {
  let api: TestApi;
  let account: BootstrapResult;
  let workspace: WorkspaceRef;
  let token: string;
  let otherWorkspaceId: string;
  let readOnlyToken: string;
  let unrelatedToken: string;

  async function createKey(permissions: string[]): Promise<string> {
    const response = await api.request('POST', `/v1/workspaces/${account.workspaceId}/api_keys`, {
      token, body: { metadata: { name: `key-${permissions.join('-')}` }, spec: { permissions } },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.spec.token;
  }

  async function tenant(externalId: string, extra: { name?: string; labels?: Record<string, string> } = {}, ws = workspace): Promise<TenantRecord> {
    return api.services.tenants.upsertTenant(ws, { externalId, ...extra });
  }

  before(async () => {
    // Erasures are jobs of the actor runtime.
    api = await startTestApi({ runtime: true });
    account = await api.bootstrap();
    token = account.globalApiKey.token;
    workspace = (await api.services.store.workspaces.findById(account.workspaceId))!;
    const other = await api.request('POST', '/v1/account/workspaces', { token, body: { metadata: { name: 'other' } } });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    otherWorkspaceId = other.body.metadata.id;
    readOnlyToken = await createKey(['workspaces:read']);
    unrelatedToken = await createKey(['agents:manage']);
  });
  after(async () => api.close());

  describe('GET /v1/workspaces/{workspaceId}/tenants', () => {
    it('lists the workspace\'s tenants in creation order with their metadata', async () => {
      const first = await tenant(`list-a-${Date.now()}`, { name: 'Acme', labels: { tier: 'gold' } });
      const second = await tenant(`list-b-${Date.now()}`);
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants?limit=1000`, { token: readOnlyToken });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const ids = response.body.items.map((item: { metadata: { id: string } }) => item.metadata.id);
      assert.ok(ids.indexOf(first.id) >= 0 && ids.indexOf(first.id) < ids.indexOf(second.id));
      const acme = response.body.items.find((item: { metadata: { id: string } }) => item.metadata.id === first.id);
      assert.equal(acme.metadata.name, 'Acme');
      assert.equal(acme.metadata.externalId, first.externalId);
      assert.deepEqual(acme.metadata.labels, { tier: 'gold' });
      assert.equal(acme.metadata.workspaceId, account.workspaceId);
      assert.equal(acme.info, undefined);
    });

    it('filters by externalId, labels and prefix, and reports subjectCount with includeInfo', async () => {
      const record = await tenant(`filter-${Date.now()}`, { labels: { region: 'eu' } });
      await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'u1' });
      const base = `/v1/workspaces/${account.workspaceId}/tenants`;
      const byExternalId = await api.request('GET', `${base}?externalId=${record.externalId}&includeInfo=true`, { token });
      assert.deepEqual(byExternalId.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [record.id]);
      assert.deepEqual(byExternalId.body.items[0].info, { subjectCount: 1 });
      const byLabel = await api.request('GET', `${base}?labels=region=eu`, { token });
      assert.deepEqual(byLabel.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [record.id]);
      const byPrefix = await api.request('GET', `${base}?prefix=${record.id}`, { token });
      assert.deepEqual(byPrefix.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [record.id]);
    });

    it('pages with a cursor', async () => {
      const fresh = (await api.request('POST', '/v1/account/workspaces', { token, body: { metadata: { name: 'paging' } } })).body.metadata.id;
      const ref = (await api.services.store.workspaces.findById(fresh))!;
      const made = [await tenant('p1', {}, ref), await tenant('p2', {}, ref), await tenant('p3', {}, ref)];
      const first = await api.request('GET', `/v1/workspaces/${fresh}/tenants?limit=2`, { token });
      assert.equal(first.body.items.length, 2);
      assert.ok(first.body.pagination.nextCursor);
      const second = await api.request('GET', `/v1/workspaces/${fresh}/tenants?limit=2&cursor=${first.body.pagination.nextCursor}`, { token });
      assert.deepEqual(second.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [made[2].id]);
      assert.equal(second.body.pagination.nextCursor, '');
    });

    it('does not list another workspace\'s tenants', async () => {
      const ref = (await api.services.store.workspaces.findById(otherWorkspaceId))!;
      const foreign = await tenant(`foreign-${Date.now()}`, {}, ref);
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants?limit=1000`, { token });
      assert.ok(!response.body.items.some((item: { metadata: { id: string } }) => item.metadata.id === foreign.id));
    });

    it('requires authentication', async () => {
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants`);
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 16);
    });

    it('returns PERMISSION_DENIED without the workspaces:read scope', async () => {
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants`, { token: unrelatedToken });
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 7);
      assert.equal(response.body.message, 'this credential lacks the workspaces:read scope');
    });

    it('returns INVALID_ARGUMENT for a malformed workspace id and an unknown query parameter', async () => {
      const malformed = await api.request('GET', '/v1/workspaces/nope/tenants', { token });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.code, 3);
      assert.match(malformed.body.message, /^workspaceId: has an invalid format/);
      const nul = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants?externalId=a%00b`, { token });
      assert.equal(nul.status, 400);
      assert.equal(nul.body.message, 'externalId: must not contain NUL characters');
      const nulPrefix = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants?prefix=a%00`, { token });
      assert.equal(nulPrefix.body.message, 'prefix: must not contain NUL characters');
      const unknown = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants?color=red`, { token });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.message, 'color: is not a known field');
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/tenants/{id}', () => {
    it('returns the tenant with its subject count', async () => {
      const record = await tenant(`get-${Date.now()}`, { name: 'Globex' });
      await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'a' });
      await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'b' });
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token: readOnlyToken });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.name, 'Globex');
      assert.deepEqual(response.body.spec, {});
      assert.deepEqual(response.body.info, { subjectCount: 2 });
    });

    it('returns NOT_FOUND for a tenant in another workspace', async () => {
      const record = await tenant(`cross-${Date.now()}`);
      const response = await api.request('GET', `/v1/workspaces/${otherWorkspaceId}/tenants/${record.id}`, { token });
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 5);
      assert.equal(response.body.message, `tenant ${record.id} not found`);
    });

    it('returns NOT_FOUND for a tenant of another account', async () => {
      const stranger = await api.bootstrap();
      const record = await tenant(`stranger-${Date.now()}`);
      const response = await api.request('GET', `/v1/workspaces/${stranger.workspaceId}/tenants/${record.id}`, { token: stranger.globalApiKey.token });
      assert.equal(response.status, 404);
      assert.equal(response.body.message, `tenant ${record.id} not found`);
    });

    it('returns INVALID_ARGUMENT for a malformed id', async () => {
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/subject_x`, { token });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 3);
      assert.match(response.body.message, /^id: has an invalid format/);
    });

    it('requires authentication and the workspaces:read scope', async () => {
      const path = `/v1/workspaces/${account.workspaceId}/tenants/${MISSING_TENANT}`;
      assert.equal((await api.request('GET', path)).status, 401);
      const denied = await api.request('GET', path, { token: unrelatedToken });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.message, 'this credential lacks the workspaces:read scope');
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/tenants/{id}', () => {
    it('erases the tenant and its subjects', async () => {
      const record = await tenant(`erase-${Date.now()}`);
      const subject = await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'gone' });
      const response = await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.match(response.body.metadata.id, /^erasure_/, 'the answer is the erasure job');
      assert.equal(response.body.spec.tenantId, record.id);
      assert.deepEqual(response.body.spec.subjectIds, [subject.id]);
      assert.equal(response.body.metadata.workspaceId, account.workspaceId);
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token })).status, 404);
      const gone = await api.request('GET', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`, { token });
      assert.equal(gone.status, 404);
      assert.equal(gone.body.message, `subject ${subject.id} not found`);
    });

    it('lets the externalId be asserted again afterwards as a new tenant', async () => {
      const record = await tenant(`again-${Date.now()}`);
      await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token });
      const again = await tenant(record.externalId);
      assert.notEqual(again.id, record.id);
    });

    it('returns PERMISSION_DENIED with only workspaces:read', async () => {
      const record = await tenant(`keep-${Date.now()}`);
      const response = await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token: readOnlyToken });
      assert.equal(response.status, 403);
      assert.equal(response.body.message, 'this credential lacks the workspaces:manage scope');
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token })).status, 200);
    });

    it('returns NOT_FOUND for a tenant in another workspace and leaves it', async () => {
      const record = await tenant(`cross-delete-${Date.now()}`);
      const response = await api.request('DELETE', `/v1/workspaces/${otherWorkspaceId}/tenants/${record.id}`, { token });
      assert.equal(response.status, 404);
      assert.equal(response.body.message, `tenant ${record.id} not found`);
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token })).status, 200);
    });

    it('returns NOT_FOUND for an unknown id, INVALID_ARGUMENT for a malformed one, 401 without a token', async () => {
      const base = `/v1/workspaces/${account.workspaceId}/tenants`;
      assert.equal((await api.request('DELETE', `${base}/${MISSING_TENANT}`, { token })).status, 404);
      assert.equal((await api.request('DELETE', `${base}/tenant_1`, { token })).status, 400);
      assert.equal((await api.request('DELETE', `${base}/${MISSING_TENANT}`)).status, 401);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/tenants/{tenantId}/subjects', () => {
    it('lists the tenant\'s subjects only', async () => {
      const record = await tenant(`subjects-${Date.now()}`);
      const otherTenant = await tenant(`subjects-other-${Date.now()}`);
      const alice = await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'alice', email: 'alice@example.com', labels: { role: 'admin' } });
      await api.services.tenants.upsertSubject(workspace, otherTenant.id, { externalId: 'alice' });
      await api.services.tenants.upsertSubject(workspace, undefined, { externalId: 'alice' });
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}/subjects`, { token: readOnlyToken });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.items.length, 1);
      assert.equal(response.body.items[0].metadata.id, alice.id);
      assert.deepEqual(response.body.items[0].spec, { tenantId: record.id, email: 'alice@example.com' });
      assert.deepEqual(response.body.items[0].metadata.labels, { role: 'admin' });
      const filtered = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}/subjects?labels=role=viewer`, { token });
      assert.deepEqual(filtered.body.items, []);
    });

    it('returns NOT_FOUND for a tenant in another workspace', async () => {
      const record = await tenant(`subjects-cross-${Date.now()}`);
      const response = await api.request('GET', `/v1/workspaces/${otherWorkspaceId}/tenants/${record.id}/subjects`, { token });
      assert.equal(response.status, 404);
      assert.equal(response.body.message, `tenant ${record.id} not found`);
    });

    it('checks authentication, scope and the tenant id format', async () => {
      const path = `/v1/workspaces/${account.workspaceId}/tenants/${MISSING_TENANT}/subjects`;
      assert.equal((await api.request('GET', path)).status, 401);
      assert.equal((await api.request('GET', path, { token: unrelatedToken })).status, 403);
      const malformed = await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/x/subjects`, { token });
      assert.equal(malformed.status, 400);
      assert.match(malformed.body.message, /^tenantId: has an invalid format/);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/subjects/{id}', () => {
    it('returns a subject without a tenant', async () => {
      const subject = await api.services.tenants.upsertSubject(workspace, undefined, { externalId: `solo-${Date.now()}`, name: 'Solo' });
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`, { token: readOnlyToken });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.name, 'Solo');
      assert.deepEqual(response.body.spec, {});
    });

    it('returns NOT_FOUND for a subject in another workspace', async () => {
      const subject = await api.services.tenants.upsertSubject(workspace, undefined, { externalId: `cross-${Date.now()}` });
      const response = await api.request('GET', `/v1/workspaces/${otherWorkspaceId}/subjects/${subject.id}`, { token });
      assert.equal(response.status, 404);
      assert.equal(response.body.message, `subject ${subject.id} not found`);
    });

    it('checks authentication, scope and the id format', async () => {
      const path = `/v1/workspaces/${account.workspaceId}/subjects/${MISSING_SUBJECT}`;
      assert.equal((await api.request('GET', path)).status, 401);
      assert.equal((await api.request('GET', path, { token: unrelatedToken })).status, 403);
      assert.equal((await api.request('GET', path, { token })).status, 404);
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/subjects/${MISSING_TENANT}`, { token })).status, 400);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/subjects/{id}', () => {
    it('erases the subject and leaves its tenant', async () => {
      const record = await tenant(`subject-erase-${Date.now()}`);
      const subject = await api.services.tenants.upsertSubject(workspace, record.id, { externalId: 'bye' });
      const response = await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`, { token });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.spec, { subjectIds: [subject.id] });
      const job = await api.request('GET', `/v1/workspaces/${account.workspaceId}/erasures/${response.body.metadata.id}`, { token: readOnlyToken });
      assert.equal(job.status, 200, 'followed with workspaces:read');
      assert.equal((await api.request('GET', `/v1/workspaces/${otherWorkspaceId}/erasures/${response.body.metadata.id}`, { token })).status, 404, 'not from another workspace');
      const unknown = await api.request('GET', `/v1/workspaces/${account.workspaceId}/erasures/erasure_01ARZ3NDEKTSV4RRFFQ69G5FAV`, { token });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.message, 'erasure erasure_01ARZ3NDEKTSV4RRFFQ69G5FAV not found');
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/erasures/subject_1`, { token })).status, 400, 'a malformed id');
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`, { token })).status, 404);
      assert.equal((await api.request('GET', `/v1/workspaces/${account.workspaceId}/tenants/${record.id}`, { token })).body.info.subjectCount, 0);
    });

    it('returns NOT_FOUND in another workspace and PERMISSION_DENIED without workspaces:manage', async () => {
      const subject = await api.services.tenants.upsertSubject(workspace, undefined, { externalId: `keep-${Date.now()}` });
      const cross = await api.request('DELETE', `/v1/workspaces/${otherWorkspaceId}/subjects/${subject.id}`, { token });
      assert.equal(cross.status, 404);
      const denied = await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`, { token: readOnlyToken });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.message, 'this credential lacks the workspaces:manage scope');
      assert.equal((await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/subjects/${subject.id}`)).status, 401);
      assert.equal((await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/subjects/nope`, { token })).status, 400);
    });
  });
});
