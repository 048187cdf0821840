import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApi, type TestApi } from '../support/api';
import { completedUpload, createUpload } from '../support/uploads';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { MemoryLayerType } from '../../src/memory/records';
import { newId } from '../../src/ids';

const MIB = 1024 * 1024;
const MISSING_ENTRY = 'mement_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('memory entries', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let layerId: string;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentrt-entries-'));
  before(async () => (api = await startTestApi({ env: { AGENTRT_DATA_DIR: dataDir } })));
  after(async () => {
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    layerId = await createLayer(ws.token);
  });

  const entries = (layer = layerId) => `/v1/memory_layers/${layer}/entries`;

  async function createLayer(token: string): Promise<string> {
    const response = await api.request('POST', '/v1/memory_layers', { token, body: { metadata: { name: 'skills' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id;
  }

  async function createEntry(spec: Record<string, unknown>, extra: Record<string, unknown> = {}, layer = layerId, token = ws.token) {
    const response = await api.request('POST', entries(layer), { token, body: { spec, ...extra } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  /** A system-managed layer holding one entry written directly, as the runtime would. */
  async function systemLayerWithEntry() {
    const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: 'default', status: 'STATUS_ENABLED' as const };
    const layer = await api.services.memoryLayers.createSystemManaged(workspace, { name: 'episodic', type: MemoryLayerType.EPISODIC });
    const now = new Date();
    const entryId = newId('memoryEntry');
    await api.dataSource.query(
      `INSERT INTO memory_entries (id, account_id, workspace_id, memory_layer_id, name, key, content, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'note', 'note', 'remembered', $5, $5)`,
      [entryId, ws.account.accountId, ws.workspaceId, layer.metadata.id, now],
    );
    return { layerId: layer.metadata.id, entryId };
  }

  function expectError(response: { status: number; body: { code: number; message: string } }, status: number, code: number, message: string | RegExp) {
    assert.equal(response.status, status, JSON.stringify(response.body));
    assert.equal(response.body.code, code);
    if (typeof message === 'string') assert.equal(response.body.message, message);
    else assert.match(response.body.message, message);
  }

  describe('POST /v1/memory_layers/{memoryLayerId}/entries', () => {
    it('creates an entry and returns MemoryEntryDetail; metadata.name defaults to the key', async () => {
      const entry = await createEntry({ key: 'skills/pdf', content: '# PDF\nuse pdftotext', title: 'PDF', description: 'when a PDF arrives' });
      assert.match(entry.metadata.id, /^mement_[0-9A-Z]{26}$/);
      assert.equal(entry.metadata.name, 'skills/pdf');
      assert.equal(entry.metadata.workspaceId, ws.workspaceId);
      assert.equal(entry.content, '# PDF\nuse pdftotext');
      assert.deepEqual(entry.spec, { key: 'skills/pdf', title: 'PDF', description: 'when a PDF arrives' });
      assert.equal(entry.info.memoryLayer.id, layerId);
      assert.equal(entry.info.memoryLayer.name, 'skills');
      assert.equal(entry.info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
    });

    it('takes metadata.name, externalId and labels when given', async () => {
      const entry = await createEntry({ key: 'k', content: '' }, { metadata: { name: 'Nice name', externalId: 'x-1', labels: { kind: 'doc' } } });
      assert.equal(entry.metadata.name, 'Nice name');
      assert.equal(entry.metadata.externalId, 'x-1');
      assert.deepEqual(entry.metadata.labels, { kind: 'doc' });
      assert.equal(entry.content, '');
    });

    const badKeys: Array<[string, string]> = [
      ['a b', `spec.key: contains " "; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`],
      ['naïve', `spec.key: contains "ï"; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`],
      ['/lead', "spec.key: must not begin with '/'"],
      ['trail/', "spec.key: must not end with '/'"],
      ['a//b', "spec.key: must not contain '//'"],
      ['service/x', 'spec.key: must not begin with the reserved prefix "service/"'],
      ['system/x', 'spec.key: must not begin with the reserved prefix "system/"'],
      ['', 'spec.key: must not be empty'],
      ['k'.repeat(513), 'spec.key: must be at most 512 characters'],
    ];
    for (const [key, message] of badKeys) {
      it(`returns INVALID_ARGUMENT for the key ${JSON.stringify(key.slice(0, 20))}`, async () => {
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key, content: 'x' } } });
        expectError(response, 400, 3, message);
        assert.deepEqual(response.body.details[0].fieldViolations[0].field, 'spec.key');
      });
    }

    it('returns INVALID_ARGUMENT with both content and uploadId', async () => {
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', content: 'x', uploadId: 'upload_01ARZ3NDEKTSV4RRFFQ69G5FAV' } } });
      expectError(response, 400, 3, 'spec: set exactly one of content or uploadId (both are set)');
    });

    it('returns INVALID_ARGUMENT for a malformed uploadId', async () => {
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', uploadId: 'abc' } } });
      expectError(response, 400, 3, /^spec.uploadId: has an invalid format/);
    });

    it('returns INVALID_ARGUMENT with neither content nor uploadId', async () => {
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', title: 't' } } });
      expectError(response, 400, 3, 'spec: set exactly one of content or uploadId (neither is set)');
    });

    it('accepts exactly 1 MiB of content and refuses one byte more, naming spec.content', async () => {
      const entry = await createEntry({ key: 'big', content: 'a'.repeat(MIB) });
      assert.equal(entry.content.length, MIB);
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'bigger', content: 'a'.repeat(MIB + 1) } } });
      expectError(response, 400, 3, `spec.content: must be at most ${MIB} bytes of UTF-8 (got ${MIB + 1})`);
    });

    it('counts the content limit in UTF-8 bytes', async () => {
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'utf8', content: 'é'.repeat(MIB / 2 + 1) } } });
      expectError(response, 400, 3, `spec.content: must be at most ${MIB} bytes of UTF-8 (got ${MIB + 2})`);
    });

    it('returns ALREADY_EXISTS for a key already in the layer', async () => {
      await createEntry({ key: 'dup', content: '1' });
      const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'dup', content: '2' } } });
      expectError(response, 409, 6, `memory layer ${layerId} already has an entry with key "dup"`);
    });

    it('treats keys case-sensitively and allows the same key in another layer', async () => {
      await createEntry({ key: 'Dup', content: '1' });
      await createEntry({ key: 'dup', content: '2' });
      await createEntry({ key: 'DUP', content: '3' });
      await createEntry({ key: 'Dup', content: '4' }, {}, await createLayer(ws.token));
    });

    it('returns ALREADY_EXISTS from the unique index when two creates race', async () => {
      const results = await Promise.all([1, 2, 3].map((n) => api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'race', content: String(n) } } })));
      assert.deepEqual(results.map((result) => result.status).sort(), [200, 409, 409]);
      for (const result of results.filter((r) => r.status === 409)) assert.equal(result.body.code, 6);
    });

    it('returns PERMISSION_DENIED in a system-managed layer', async () => {
      const system = await systemLayerWithEntry();
      const response = await api.request('POST', entries(system.layerId), { token: ws.token, body: { spec: { key: 'k', content: 'x' } } });
      expectError(response, 403, 7, `memory layer ${system.layerId} is system-managed and cannot be changed by clients`);
    });

    it('returns NOT_FOUND for a layer of another workspace', async () => {
      const other = await ws.otherWorkspace();
      const response = await api.request('POST', entries(), { token: other.token, body: { spec: { key: 'k', content: 'x' } } });
      expectError(response, 404, 5, `memory layer ${layerId} not found`);
    });

    it('requires authentication, memory:manage and a well-formed layer id', async () => {
      expectError(await api.request('POST', entries(), { body: { spec: { key: 'k', content: 'x' } } }), 401, 16, /./);
      const readOnly = await api.request('POST', entries(), { token: await ws.keyWith(['memory:read']), body: { spec: { key: 'k', content: 'x' } } });
      expectError(readOnly, 403, 7, 'this credential lacks the memory:manage scope');
      await createEntry({ key: 'k', content: 'x' }, {}, layerId, await ws.keyWith(['memory:manage']));
      expectError(await api.request('POST', entries('memlayer_x'), { token: ws.token, body: { spec: { key: 'k', content: 'x' } } }), 400, 3, /^memoryLayerId: has an invalid format/);
    });

    describe('from an upload', () => {
      it('copies the bytes of a COMPLETE upload and marks it CONSUMED', async () => {
        const uploadId = await completedUpload(api, ws.token, Buffer.from('# from a file\nhéllo'));
        const entry = await createEntry({ key: 'file', uploadId });
        assert.equal(entry.content, '# from a file\nhéllo');
        const upload = await api.request('GET', `/v1/uploads/${uploadId}`, { token: ws.token });
        assert.equal(upload.body.info.status, 'UPLOAD_STATUS_CONSUMED');
        assert.equal(upload.body.info.uploadUrl, undefined);
      });

      it('returns FAILED_PRECONDITION for an upload already consumed', async () => {
        const uploadId = await completedUpload(api, ws.token, Buffer.from('once'));
        await createEntry({ key: 'first', uploadId });
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'second', uploadId } } });
        expectError(response, 400, 9, `spec.uploadId: upload ${uploadId} was already consumed`);
      });

      it('lets only one of two concurrent creates consume an upload', async () => {
        const uploadId = await completedUpload(api, ws.token, Buffer.from('contended'));
        const results = await Promise.all(['a', 'b'].map((key) => api.request('POST', entries(), { token: ws.token, body: { spec: { key, uploadId } } })));
        assert.deepEqual(results.map((result) => result.status).sort(), [200, 400]);
        const list = await api.request('GET', entries(), { token: ws.token });
        assert.equal(list.body.items.length, 1);
      });

      it('returns FAILED_PRECONDITION for a PENDING upload', async () => {
        const upload = await createUpload(api, ws.token, 4);
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', uploadId: upload.metadata.id } } });
        expectError(response, 400, 9, `spec.uploadId: upload ${upload.metadata.id} is UPLOAD_STATUS_PENDING; only a COMPLETE upload can be used`);
      });

      it('returns NOT_FOUND for an upload of another workspace', async () => {
        const other = await ws.otherWorkspace();
        const uploadId = await completedUpload(api, other.token, Buffer.from('theirs'));
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', uploadId } } });
        expectError(response, 404, 5, `spec.uploadId: upload ${uploadId} not found`);
      });

      it('returns INVALID_ARGUMENT for an upload over 1 MiB, naming spec.uploadId', async () => {
        const uploadId = await completedUpload(api, ws.token, Buffer.alloc(MIB + 1, 'a'));
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', uploadId } } });
        expectError(response, 400, 3, `spec.uploadId: upload ${uploadId} holds ${MIB + 1} bytes; entry content is at most ${MIB} bytes`);
        const upload = await api.request('GET', `/v1/uploads/${uploadId}`, { token: ws.token });
        assert.equal(upload.body.info.status, 'UPLOAD_STATUS_COMPLETE');
      });

      it('returns INVALID_ARGUMENT for an upload that is not UTF-8 text', async () => {
        const uploadId = await completedUpload(api, ws.token, Buffer.from([0xff, 0xfe, 0x00, 0xc3]));
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'k', uploadId } } });
        expectError(response, 400, 3, `spec.uploadId: upload ${uploadId} is not valid UTF-8 text`);
      });

      it('leaves the upload COMPLETE when the entry is refused', async () => {
        await createEntry({ key: 'taken', content: 'x' });
        const uploadId = await completedUpload(api, ws.token, Buffer.from('still usable'));
        const response = await api.request('POST', entries(), { token: ws.token, body: { spec: { key: 'taken', uploadId } } });
        assert.equal(response.status, 409);
        const entry = await createEntry({ key: 'free', uploadId });
        assert.equal(entry.content, 'still usable');
      });
    });
  });

  describe('GET /v1/memory_layers/{memoryLayerId}/entries', () => {
    it('lists entries without bodies; info only with includeInfo=true', async () => {
      const a = await createEntry({ key: 'a', content: 'body a', title: 'A' });
      await createEntry({ key: 'b', content: 'body b' });
      const response = await api.request('GET', entries(), { token: await ws.keyWith(['memory:read']) });
      assert.equal(response.status, 200);
      assert.equal(response.body.items.length, 2);
      assert.deepEqual(response.body.items[0], { metadata: a.metadata, spec: { key: 'a', title: 'A' } });
      assert.equal(response.body.items[1].content, undefined);
      const withInfo = await api.request('GET', `${entries()}?includeInfo=true`, { token: ws.token });
      assert.equal(withInfo.body.items[0].info.memoryLayer.id, layerId);
      assert.equal(withInfo.body.items[0].info.createdBy.spec.type, 'PROFILE_TYPE_API_KEY');
      assert.equal(withInfo.body.items[0].content, undefined);
    });

    it('filters by key prefix, case-sensitively and literally', async () => {
      for (const key of ['skills/pdf', 'skills/png', 'Skills/zip', 'skillsX', 'skill_s', 'skillAs']) await createEntry({ key, content: key });
      const keys = async (prefix: string) =>
        (await api.request('GET', `${entries()}?prefix=${encodeURIComponent(prefix)}`, { token: ws.token })).body.items.map((item: { spec: { key: string } }) => item.spec.key);
      assert.deepEqual(await keys('skills/'), ['skills/pdf', 'skills/png']);
      assert.deepEqual(await keys('Skills'), ['Skills/zip']);
      assert.deepEqual(await keys('skill_'), ['skill_s']);
      assert.deepEqual(await keys('nothing'), []);
    });

    it('pages with cursor and limit, and filters by labels', async () => {
      const first = await createEntry({ key: 'one', content: '1' }, { metadata: { labels: { pick: 'yes' } } });
      const second = await createEntry({ key: 'two', content: '2' });
      const page1 = await api.request('GET', `${entries()}?limit=1`, { token: ws.token });
      assert.deepEqual(page1.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [first.metadata.id]);
      const page2 = await api.request('GET', `${entries()}?limit=1&cursor=${page1.body.pagination.nextCursor}`, { token: ws.token });
      assert.deepEqual(page2.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [second.metadata.id]);
      assert.equal(page2.body.pagination.nextCursor, '');
      const labelled = await api.request('GET', `${entries()}?labels=pick=yes`, { token: ws.token });
      assert.deepEqual(labelled.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [first.metadata.id]);
    });

    it('returns NOT_FOUND for a layer of another workspace', async () => {
      await createEntry({ key: 'k', content: 'x' });
      const other = await ws.otherWorkspace();
      expectError(await api.request('GET', entries(), { token: other.token }), 404, 5, `memory layer ${layerId} not found`);
    });

    it('requires authentication, memory:read and a well-formed layer id', async () => {
      expectError(await api.request('GET', entries()), 401, 16, /./);
      expectError(await api.request('GET', entries(), { token: await ws.keyWith(['tools:manage']) }), 403, 7, 'this credential lacks the memory:read scope');
      expectError(await api.request('GET', entries('memlayer_1'), { token: ws.token }), 400, 3, /^memoryLayerId: /);
    });

    it('lists the entries of a system-managed layer', async () => {
      const system = await systemLayerWithEntry();
      const response = await api.request('GET', entries(system.layerId), { token: ws.token });
      assert.deepEqual(response.body.items.map((item: { spec: { key: string } }) => item.spec.key), ['note']);
    });
  });

  describe('GET /v1/memory_layers/{memoryLayerId}/entries/{id}', () => {
    it('returns the entry with its content', async () => {
      const created = await createEntry({ key: 'k', content: 'the body' });
      const response = await api.request('GET', `${entries()}/${created.metadata.id}`, { token: await ws.keyWith(['memory:read']) });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, created);
    });

    it('reads an entry of a system-managed layer', async () => {
      const system = await systemLayerWithEntry();
      const response = await api.request('GET', `${entries(system.layerId)}/${system.entryId}`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.equal(response.body.content, 'remembered');
      assert.equal(response.body.metadata.profileId, '');
    });

    it('returns NOT_FOUND for an entry of another layer of the workspace', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const otherLayer = await createLayer(ws.token);
      expectError(await api.request('GET', `${entries(otherLayer)}/${created.metadata.id}`, { token: ws.token }), 404, 5, `memory entry ${created.metadata.id} not found`);
    });

    it('returns NOT_FOUND for an entry of another workspace', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const other = await ws.otherWorkspace();
      expectError(await api.request('GET', `${entries()}/${created.metadata.id}`, { token: other.token }), 404, 5, `memory layer ${layerId} not found`);
    });

    it('requires authentication, memory:read and well-formed ids', async () => {
      expectError(await api.request('GET', `${entries()}/${MISSING_ENTRY}`), 401, 16, /./);
      expectError(await api.request('GET', `${entries()}/${MISSING_ENTRY}`, { token: await ws.keyWith(['agents:manage']) }), 403, 7, 'this credential lacks the memory:read scope');
      expectError(await api.request('GET', `${entries()}/memlayer_01ARZ3NDEKTSV4RRFFQ69G5FAV`, { token: ws.token }), 400, 3, /^id: has an invalid format/);
      expectError(await api.request('GET', `${entries()}/${MISSING_ENTRY}`, { token: ws.token }), 404, 5, `memory entry ${MISSING_ENTRY} not found`);
    });
  });

  describe('PATCH /v1/memory_layers/{memoryLayerId}/entries/{id}', () => {
    const patch = (id: string, body: unknown, headers: Record<string, string> = {}, token = ws.token) => api.request('PATCH', `${entries()}/${id}`, { token, body, headers });

    it('applies only the masked fields and keeps the body when no source is named', async () => {
      const created = await createEntry({ key: 'k', content: 'original', title: 'T', description: 'D' });
      const response = await patch(created.metadata.id, { spec: { title: 'New', description: 'ignored', content: 'ignored' }, updateMask: 'spec.title' });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec, { key: 'k', title: 'New', description: 'D' });
      assert.equal(response.body.content, 'original');
    });

    it('merges present fields without a mask, replacing the body when content is present', async () => {
      const created = await createEntry({ key: 'k', content: 'original' });
      const response = await patch(created.metadata.id, { metadata: { name: 'renamed' }, spec: { content: 'replaced', description: 'D' } });
      assert.equal(response.body.metadata.name, 'renamed');
      assert.equal(response.body.content, 'replaced');
      assert.deepEqual(response.body.spec, { key: 'k', description: 'D' });
    });

    it('ignores the read-only top-level content of a MemoryEntryDetail sent back, keeping the body', async () => {
      const created = await createEntry({ key: 'k', content: 'original', title: 'T' });
      const read = await api.request('GET', `${entries()}/${created.metadata.id}`, { token: ws.token });
      const response = await patch(created.metadata.id, { ...read.body, content: 'not applied', spec: { ...read.body.spec, title: 'T2' } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.content, 'original');
      assert.equal(response.body.spec.title, 'T2');
    });

    it('clears the body when spec.content is named but absent', async () => {
      const created = await createEntry({ key: 'k', content: 'original' });
      const response = await patch(created.metadata.id, { updateMask: 'spec.content' });
      assert.equal(response.body.content, '');
    });

    it('changes the key under the key rules and keeps it unique', async () => {
      const created = await createEntry({ key: 'old', content: 'x' });
      await createEntry({ key: 'taken', content: 'y' });
      const renamed = await patch(created.metadata.id, { spec: { key: 'new/name' } });
      assert.equal(renamed.body.spec.key, 'new/name');
      assert.equal(renamed.body.metadata.name, 'old');
      expectError(await patch(created.metadata.id, { spec: { key: 'system/x' } }), 400, 3, 'spec.key: must not begin with the reserved prefix "system/"');
      expectError(await patch(created.metadata.id, { spec: { key: 'taken' } }), 409, 6, `memory layer ${layerId} already has an entry with key "taken"`);
      expectError(await patch(created.metadata.id, { updateMask: 'spec.key' }), 400, 3, 'spec.key: is named in updateMask but not set; a key cannot be removed');
      assert.equal((await patch(created.metadata.id, { spec: { key: 'new/name' } })).status, 200);
    });

    it('returns INVALID_ARGUMENT when both sources are named', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await patch(created.metadata.id, { spec: { content: 'a', uploadId: 'upload_01ARZ3NDEKTSV4RRFFQ69G5FAV' } }), 400, 3, 'spec: set exactly one of content or uploadId to replace the body (both are named)');
      expectError(await patch(created.metadata.id, { spec: { content: 'a' }, updateMask: 'spec.content,spec.uploadId' }), 400, 3, 'spec: set exactly one of content or uploadId to replace the body (both are named)');
    });

    it('returns INVALID_ARGUMENT when spec.uploadId is named but not set', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await patch(created.metadata.id, { updateMask: 'spec.uploadId' }), 400, 3, 'spec.uploadId: is named in updateMask but not set');
    });

    it('replaces the body from a COMPLETE upload and consumes it', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const uploadId = await completedUpload(api, ws.token, Buffer.from('from upload'));
      const response = await patch(created.metadata.id, { spec: { uploadId } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.content, 'from upload');
      expectError(await patch(created.metadata.id, { spec: { uploadId } }), 400, 9, `spec.uploadId: upload ${uploadId} was already consumed`);
    });

    it('returns INVALID_ARGUMENT for content over 1 MiB', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await patch(created.metadata.id, { spec: { content: 'b'.repeat(MIB + 1) } }), 400, 3, `spec.content: must be at most ${MIB} bytes of UTF-8 (got ${MIB + 1})`);
    });

    it('returns INVALID_ARGUMENT for an unknown mask path', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await patch(created.metadata.id, { updateMask: 'spec.body' }), 400, 3, /^updateMask: "spec.body" is not an updatable field/);
    });

    it('returns ABORTED when If-Match does not match updatedAt', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await patch(created.metadata.id, { spec: { title: 't' } }, { 'if-match': '2001-01-01T00:00:00.000Z' }), 409, 10, /^the resource was modified/);
      assert.equal((await patch(created.metadata.id, { spec: { title: 't' } }, { 'if-match': created.metadata.updatedAt })).status, 200);
    });

    it('returns PERMISSION_DENIED in a system-managed layer', async () => {
      const system = await systemLayerWithEntry();
      const response = await api.request('PATCH', `${entries(system.layerId)}/${system.entryId}`, { token: ws.token, body: { spec: { content: 'x' } } });
      expectError(response, 403, 7, `memory layer ${system.layerId} is system-managed and cannot be changed by clients`);
    });

    it('returns NOT_FOUND for an entry of another workspace', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const other = await ws.otherWorkspace();
      expectError(await patch(created.metadata.id, { spec: { title: 't' } }, {}, other.token), 404, 5, `memory layer ${layerId} not found`);
    });

    it('requires authentication, memory:manage and well-formed ids', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      expectError(await api.request('PATCH', `${entries()}/${created.metadata.id}`, { body: {} }), 401, 16, /./);
      expectError(await patch(created.metadata.id, {}, {}, await ws.keyWith(['memory:read'])), 403, 7, 'this credential lacks the memory:manage scope');
      expectError(await patch('mement_bad', {}), 400, 3, /^id: has an invalid format/);
    });
  });

  describe('DELETE /v1/memory_layers/{memoryLayerId}/entries/{id}', () => {
    it('deletes the entry', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const response = await api.request('DELETE', `${entries()}/${created.metadata.id}`, { token: await ws.keyWith(['memory:manage']) });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      expectError(await api.request('GET', `${entries()}/${created.metadata.id}`, { token: ws.token }), 404, 5, `memory entry ${created.metadata.id} not found`);
      await createEntry({ key: 'k', content: 'again' });
    });

    it('returns PERMISSION_DENIED in a system-managed layer', async () => {
      const system = await systemLayerWithEntry();
      expectError(await api.request('DELETE', `${entries(system.layerId)}/${system.entryId}`, { token: ws.token }), 403, 7, /system-managed/);
    });

    it('returns NOT_FOUND for an entry of another workspace', async () => {
      const created = await createEntry({ key: 'k', content: 'x' });
      const other = await ws.otherWorkspace();
      expectError(await api.request('DELETE', `${entries()}/${created.metadata.id}`, { token: other.token }), 404, 5, `memory layer ${layerId} not found`);
      assert.equal((await api.request('GET', `${entries()}/${created.metadata.id}`, { token: ws.token })).status, 200);
    });

    it('requires authentication, memory:manage and well-formed ids', async () => {
      expectError(await api.request('DELETE', `${entries()}/${MISSING_ENTRY}`), 401, 16, /./);
      expectError(await api.request('DELETE', `${entries()}/${MISSING_ENTRY}`, { token: await ws.keyWith(['memory:read']) }), 403, 7, 'this credential lacks the memory:manage scope');
      expectError(await api.request('DELETE', `${entries()}/x`, { token: ws.token }), 400, 3, /^id: /);
    });
  });
});
