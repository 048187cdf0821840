import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { MemoryLayerType } from '../../src/memory/records';
import { newId } from '../../src/ids';

const MISSING_LAYER = 'memlayer_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('memory layers', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());
  beforeEach(async () => (ws = await workspaceFixture(api)));

  async function createLayer(token: string, body: Record<string, unknown> = {}) {
    const response = await api.request('POST', '/v1/memory_layers', {
      token,
      body: { metadata: { name: 'facts' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS', description: 'how-tos' }, ...body },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  function systemLayer(workspaceId = ws.workspaceId) {
    return api.services.memoryLayers.createSystemManaged(
      { id: workspaceId, accountId: ws.account.accountId, name: 'default', status: 'STATUS_ENABLED' },
      { name: 'episodic-obj-1', type: MemoryLayerType.EPISODIC, expiresAt: new Date('2030-01-01T00:00:00.000Z') },
    );
  }

  describe('POST /v1/memory_layers', () => {
    it('creates a layer with metadata, spec and info', async () => {
      const layer = await createLayer(ws.token, { metadata: { name: 'facts', externalId: 'ext-1', labels: { team: 'a' } } });
      assert.match(layer.metadata.id, /^memlayer_[0-9A-Z]{26}$/);
      assert.equal(layer.metadata.workspaceId, ws.workspaceId);
      assert.equal(layer.metadata.accountId, ws.account.accountId);
      assert.equal(layer.metadata.name, 'facts');
      assert.equal(layer.metadata.externalId, 'ext-1');
      assert.deepEqual(layer.metadata.labels, { team: 'a' });
      assert.deepEqual(layer.spec, { type: 'MEMORY_LAYER_TYPE_SKILLS', description: 'how-tos', systemManaged: false });
      assert.equal(layer.info.entryCount, 0);
      assert.equal(layer.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
      assert.equal(layer.info.lastUsedAt, undefined);
    });

    it('ignores the read-only systemManaged and expiresAt: a client cannot make a system-managed layer', async () => {
      const spec = { type: 'MEMORY_LAYER_TYPE_EPISODIC', systemManaged: true, expiresAt: '2030-01-01T00:00:00Z' };
      const response = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'x' }, spec } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.systemManaged, false);
      assert.equal(response.body.spec.expiresAt, undefined);
    });

    it('returns INVALID_ARGUMENT without spec.type', async () => {
      const response = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'x' }, spec: {} } });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 3);
      assert.equal(response.body.message, 'spec.type: is required');
    });

    it('returns INVALID_ARGUMENT for MEMORY_LAYER_TYPE_UNSPECIFIED', async () => {
      const response = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'x' }, spec: { type: 'MEMORY_LAYER_TYPE_UNSPECIFIED' } } });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 3);
      assert.equal(response.body.message, 'spec.type: must be MEMORY_LAYER_TYPE_EPISODIC or MEMORY_LAYER_TYPE_SKILLS');
    });

    it('returns INVALID_ARGUMENT for an unknown field', async () => {
      const response = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'x' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS', color: 'red' } } });
      assert.equal(response.status, 400);
      assert.equal(response.body.message, 'spec.color: is not a known field');
    });

    it('requires authentication', async () => {
      const response = await api.request('POST', '/v1/memory_layers', { body: { metadata: { name: 'x' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 16);
    });

    it('returns PERMISSION_DENIED for a key with only memory:read', async () => {
      const token = await ws.keyWith(['memory:read']);
      const response = await api.request('POST', '/v1/memory_layers', { token, body: { metadata: { name: 'x' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 7);
      assert.equal(response.body.message, 'this credential lacks the memory:manage scope');
    });

    it('accepts a key with memory:manage', async () => {
      await createLayer(await ws.keyWith(['memory:manage']));
    });

    it('uses X-Workspace-Id for the global key', async () => {
      const response = await api.request('POST', '/v1/memory_layers', {
        token: ws.account.globalApiKey.token,
        headers: { 'x-workspace-id': ws.workspaceId },
        body: { metadata: { name: 'g' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.metadata.workspaceId, ws.workspaceId);
    });
  });

  describe('GET /v1/memory_layers', () => {
    it('lists the workspace layers without info unless includeInfo=true', async () => {
      const a = await createLayer(ws.token);
      const b = await createLayer(ws.token, { metadata: { name: 'episodes' }, spec: { type: 'MEMORY_LAYER_TYPE_EPISODIC' } });
      const plain = await api.request('GET', '/v1/memory_layers', { token: ws.token });
      assert.equal(plain.status, 200);
      assert.deepEqual(plain.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [a.metadata.id, b.metadata.id]);
      assert.equal(plain.body.items[0].info, undefined);
      assert.equal(plain.body.pagination.nextCursor, '');
      const withInfo = await api.request('GET', '/v1/memory_layers?includeInfo=true', { token: ws.token });
      assert.equal(withInfo.body.items[0].info.entryCount, 0);
      assert.equal(withInfo.body.items[0].info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('filters by type, name prefix and labels, and pages', async () => {
      const skills = await createLayer(ws.token, { metadata: { name: 'skills-1', labels: { tier: 'gold' } } });
      const episodic = await createLayer(ws.token, { metadata: { name: 'episodes' }, spec: { type: 'MEMORY_LAYER_TYPE_EPISODIC' } });
      const ids = (response: { body: { items: Array<{ metadata: { id: string } }> } }) => response.body.items.map((item) => item.metadata.id);
      assert.deepEqual(ids(await api.request('GET', '/v1/memory_layers?type=MEMORY_LAYER_TYPE_EPISODIC', { token: ws.token })), [episodic.metadata.id]);
      assert.deepEqual(ids(await api.request('GET', '/v1/memory_layers?prefix=skills', { token: ws.token })), [skills.metadata.id]);
      assert.deepEqual(ids(await api.request('GET', '/v1/memory_layers?labels=tier=gold', { token: ws.token })), [skills.metadata.id]);
      const first = await api.request('GET', '/v1/memory_layers?limit=1&sortOrder=desc', { token: ws.token });
      assert.deepEqual(ids(first), [episodic.metadata.id]);
      const second = await api.request('GET', `/v1/memory_layers?limit=1&sortOrder=desc&cursor=${first.body.pagination.nextCursor}`, { token: ws.token });
      assert.deepEqual(ids(second), [skills.metadata.id]);
    });

    it('returns INVALID_ARGUMENT for an unknown type', async () => {
      const response = await api.request('GET', '/v1/memory_layers?type=MEMORY_LAYER_TYPE_NOPE', { token: ws.token });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 3);
      assert.match(response.body.message, /^type: /);
    });

    it('does not list layers of another workspace', async () => {
      await createLayer(ws.token);
      const other = await ws.otherWorkspace();
      const response = await api.request('GET', '/v1/memory_layers', { token: other.token });
      assert.deepEqual(response.body.items, []);
    });

    it('requires authentication and memory:read', async () => {
      assert.equal((await api.request('GET', '/v1/memory_layers')).status, 401);
      const response = await api.request('GET', '/v1/memory_layers', { token: await ws.keyWith(['agents:read']) });
      assert.equal(response.status, 403);
      assert.equal(response.body.message, 'this credential lacks the memory:read scope');
      assert.equal((await api.request('GET', '/v1/memory_layers', { token: await ws.keyWith(['memory:read']) })).status, 200);
    });
  });

  describe('GET /v1/memory_layers/{id}', () => {
    it('returns the layer with entryCount and lastUsedAt', async () => {
      const layer = await createLayer(ws.token);
      for (const key of ['a', 'b']) {
        const created = await api.request('POST', `/v1/memory_layers/${layer.metadata.id}/entries`, { token: ws.token, body: { spec: { key, content: key } } });
        assert.equal(created.status, 200, JSON.stringify(created.body));
      }
      const used = new Date('2026-01-02T03:04:05.000Z');
      await api.services.memoryLayers.markUsed([layer.metadata.id], used);
      const response = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: await ws.keyWith(['memory:read']) });
      assert.equal(response.status, 200);
      assert.equal(response.body.info.entryCount, 2);
      assert.equal(response.body.info.lastUsedAt, used.toISOString());
    });

    it('returns NOT_FOUND for a layer of another workspace', async () => {
      const layer = await createLayer(ws.token);
      const other = await ws.otherWorkspace();
      const response = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: other.token });
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 5);
      assert.equal(response.body.message, `memory layer ${layer.metadata.id} not found`);
    });

    it('returns NOT_FOUND for a layer of another account', async () => {
      const layer = await createLayer(ws.token);
      const stranger = await workspaceFixture(api);
      const response = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: stranger.token });
      assert.equal(response.status, 404);
    });

    it('returns INVALID_ARGUMENT for a malformed id', async () => {
      const response = await api.request('GET', '/v1/memory_layers/agent_123', { token: ws.token });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 3);
      assert.match(response.body.message, /^id: has an invalid format/);
    });

    it('requires authentication and memory:read', async () => {
      assert.equal((await api.request('GET', `/v1/memory_layers/${MISSING_LAYER}`)).status, 401);
      const response = await api.request('GET', `/v1/memory_layers/${MISSING_LAYER}`, { token: await ws.keyWith(['workspaces:read']) });
      assert.equal(response.status, 403);
    });

    it('shows a system-managed layer with expiresAt', async () => {
      const layer = await systemLayer();
      const response = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.spec, { type: 'MEMORY_LAYER_TYPE_EPISODIC', expiresAt: '2030-01-01T00:00:00.000Z', systemManaged: true });
      assert.equal(response.body.metadata.profileId, '');
    });
  });

  describe('PATCH /v1/memory_layers/{id}', () => {
    it('merges the fields present without a mask', async () => {
      const layer = await createLayer(ws.token, { metadata: { name: 'facts', labels: { a: '1' } } });
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token, body: { spec: { description: 'new' } } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.description, 'new');
      assert.equal(response.body.metadata.name, 'facts');
      assert.deepEqual(response.body.metadata.labels, { a: '1' });
      assert.ok(response.body.metadata.updatedAt > layer.metadata.updatedAt);
    });

    it('applies only the masked fields, clearing a named absent one', async () => {
      const layer = await createLayer(ws.token);
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, {
        token: ws.token,
        body: { metadata: { name: 'renamed' }, spec: { description: 'ignored' }, updateMask: 'metadata.name' },
      });
      assert.equal(response.body.metadata.name, 'renamed');
      assert.equal(response.body.spec.description, 'how-tos');
      const cleared = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token, body: { updateMask: 'spec.description' } });
      assert.equal(cleared.body.spec.description, undefined);
    });

    it('returns INVALID_ARGUMENT for an unknown mask path', async () => {
      const layer = await createLayer(ws.token);
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token, body: { updateMask: 'spec.systemManaged' } });
      assert.equal(response.status, 400);
      assert.match(response.body.message, /^updateMask: "spec.systemManaged" is not an updatable field/);
    });

    it('returns INVALID_ARGUMENT for a change of spec.type', async () => {
      const layer = await createLayer(ws.token);
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token, body: { spec: { type: 'MEMORY_LAYER_TYPE_EPISODIC' } } });
      assert.equal(response.status, 400);
      assert.equal(response.body.message, 'spec.type: cannot be changed after creation (the layer is MEMORY_LAYER_TYPE_SKILLS)');
    });

    it('returns ABORTED when If-Match does not match updatedAt', async () => {
      const layer = await createLayer(ws.token);
      const stale = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, {
        token: ws.token,
        headers: { 'if-match': '2020-01-01T00:00:00.000Z' },
        body: { spec: { description: 'x' } },
      });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.code, 10);
      const fresh = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, {
        token: ws.token,
        headers: { 'if-match': layer.metadata.updatedAt },
        body: { spec: { description: 'x' } },
      });
      assert.equal(fresh.status, 200);
    });

    it('returns PERMISSION_DENIED for a system-managed layer', async () => {
      const layer = await systemLayer();
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token, body: { spec: { description: 'x' } } });
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 7);
      assert.equal(response.body.message, `memory layer ${layer.metadata.id} is system-managed and cannot be changed by clients`);
    });

    it('returns NOT_FOUND for a layer of another workspace', async () => {
      const layer = await createLayer(ws.token);
      const other = await ws.otherWorkspace();
      const response = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: other.token, body: { spec: { description: 'x' } } });
      assert.equal(response.status, 404);
    });

    it('requires authentication, memory:manage and a well-formed id', async () => {
      const layer = await createLayer(ws.token);
      assert.equal((await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { body: {} })).status, 401);
      const readOnly = await api.request('PATCH', `/v1/memory_layers/${layer.metadata.id}`, { token: await ws.keyWith(['memory:read']), body: {} });
      assert.equal(readOnly.status, 403);
      assert.equal((await api.request('PATCH', '/v1/memory_layers/memlayer_bad', { token: ws.token, body: {} })).status, 400);
    });
  });

  describe('DELETE /v1/memory_layers/{id}', () => {
    it('deletes the layer and its entries', async () => {
      const layer = await createLayer(ws.token);
      const entry = await api.request('POST', `/v1/memory_layers/${layer.metadata.id}/entries`, { token: ws.token, body: { spec: { key: 'k', content: 'c' } } });
      assert.equal(entry.status, 200);
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      assert.equal((await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token })).status, 404);
      const rows = await api.dataSource.query('SELECT count(*)::int AS n FROM memory_entries WHERE memory_layer_id = $1', [layer.metadata.id]);
      assert.equal(rows[0].n, 0);
    });

    /** Assigns the layer to a (made-up) variation, as the agents area would. */
    async function assign(layerId: string) {
      await api.dataSource.transaction(async (tx) => {
        // The variation row is not the subject here: skip the foreign keys for this insert only.
        await tx.query('SET LOCAL session_replication_role = replica');
        await tx.query(
          `INSERT INTO variation_memory_layers (id, account_id, workspace_id, variation_id, memory_layer_id, position)
           VALUES ($1, $2, $3, $4, $5, 0)`,
          [newId('memoryLayerAssignment'), ws.account.accountId, ws.workspaceId, newId('agentVariation'), layerId],
        );
      });
    }

    it('returns FAILED_PRECONDITION for a layer assigned to a variation', async () => {
      const layer = await createLayer(ws.token);
      await assign(layer.metadata.id);
      await assign(layer.metadata.id);
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 9);
      assert.equal(response.body.message, `memory layer ${layer.metadata.id} is assigned to 2 variation(s); remove the assignments or delete with force=true`);
      assert.equal((await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token })).status, 200);
    });

    it('deletes an assigned layer and its assignments with force=true', async () => {
      const layer = await createLayer(ws.token);
      await assign(layer.metadata.id);
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}?force=true`, { token: ws.token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const rows = await api.dataSource.query('SELECT count(*)::int AS n FROM variation_memory_layers WHERE memory_layer_id = $1', [layer.metadata.id]);
      assert.equal(rows[0].n, 0);
    });

    it('accepts force=true for an unassigned layer', async () => {
      const layer = await createLayer(ws.token);
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}?force=true`, { token: ws.token });
      assert.equal(response.status, 200);
    });

    it('returns PERMISSION_DENIED for a system-managed layer, even with force', async () => {
      const layer = await systemLayer();
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}?force=true`, { token: ws.token });
      assert.equal(response.status, 403);
      assert.equal(response.body.message, `memory layer ${layer.metadata.id} is system-managed and cannot be changed by clients`);
    });

    it('returns NOT_FOUND for a layer of another workspace and leaves it alone', async () => {
      const layer = await createLayer(ws.token);
      const other = await ws.otherWorkspace();
      const response = await api.request('DELETE', `/v1/memory_layers/${layer.metadata.id}`, { token: other.token });
      assert.equal(response.status, 404);
      assert.equal((await api.request('GET', `/v1/memory_layers/${layer.metadata.id}`, { token: ws.token })).status, 200);
    });

    it('requires authentication, memory:manage and a well-formed id', async () => {
      assert.equal((await api.request('DELETE', `/v1/memory_layers/${MISSING_LAYER}`)).status, 401);
      const readOnly = await api.request('DELETE', `/v1/memory_layers/${MISSING_LAYER}`, { token: await ws.keyWith(['memory:read']) });
      assert.equal(readOnly.status, 403);
      assert.equal((await api.request('DELETE', '/v1/memory_layers/nope', { token: ws.token })).status, 400);
      assert.equal((await api.request('DELETE', `/v1/memory_layers/${MISSING_LAYER}`, { token: ws.token })).status, 404);
    });
  });
});
