import assert from 'node:assert/strict';
import { existsSync, writeFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { startTestApi, type TestApi } from '../support/api';
import { completedUpload, createUpload, putBytes, reachable } from '../support/uploads';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { UploadUrlSigner } from '../../src/uploads/upload-url-signer';

const MISSING_UPLOAD = 'upload_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const MAX_BYTES = 64 * 1024;

function expectError(response: { status: number; body: { code: number; message: string } }, status: number, code: number, message: string | RegExp) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.code, code);
  if (typeof message === 'string') assert.equal(response.body.message, message);
  else assert.match(response.body.message, message);
}

/** The running service's URL signer (tests may reach inside), to forge URLs the service would accept. */
function signer(api: TestApi): UploadUrlSigner {
  return (api.services.uploads as unknown as { signer: UploadUrlSigner }).signer;
}

async function putStatus(api: TestApi, url: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(reachable(api, url), { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream', ...headers } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe('uploads (data folder storage)', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentrt-uploads-'));
  before(async () => {
    api = await startTestApi({ env: { AGENTRT_DATA_DIR: dataDir, AGENTRT_UPLOAD_MAX_BYTES: String(MAX_BYTES) } });
  });
  after(async () => {
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => (ws = await workspaceFixture(api)));

  describe('POST /v1/uploads', () => {
    it('creates a PENDING upload with a signed PUT URL valid for 15 minutes', async () => {
      const before = Date.now();
      const upload = await createUpload(api, ws.token, 5);
      assert.match(upload.metadata.id, /^upload_[0-9A-Z]{26}$/);
      assert.equal(upload.metadata.workspaceId, ws.workspaceId);
      assert.equal(upload.metadata.name, 'notes.md');
      assert.deepEqual(upload.spec, { filename: 'notes.md', contentType: 'text/markdown', sizeBytes: 5 });
      assert.equal(upload.info.status, 'UPLOAD_STATUS_PENDING');
      assert.equal(upload.info.uploadMethod, 'PUT');
      const expiresAt = Date.parse(upload.info.expiresAt);
      assert.ok(expiresAt >= before + 15 * 60 * 1000 - 1000 && expiresAt <= Date.now() + 15 * 60 * 1000, upload.info.expiresAt);
      const url = new URL(upload.info.uploadUrl);
      assert.ok(upload.info.uploadUrl.startsWith(`${api.config.publicUrl}/v1/uploads/${upload.metadata.id}/content?`), upload.info.uploadUrl);
      assert.equal(url.searchParams.get('expires'), String(Math.floor(expiresAt / 1000)));
      assert.match(url.searchParams.get('signature') ?? '', /^[A-Za-z0-9_-]{43}$/);
    });

    it('returns INVALID_ARGUMENT for sizeBytes above AGENTRT_UPLOAD_MAX_BYTES', async () => {
      const response = await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain', sizeBytes: MAX_BYTES + 1 } });
      expectError(response, 400, 3, `sizeBytes: must be at most ${MAX_BYTES} bytes`);
      assert.equal((await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain', sizeBytes: MAX_BYTES } })).status, 200);
    });

    it('returns INVALID_ARGUMENT for missing, negative or malformed fields', async () => {
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain' } }), 400, 3, 'sizeBytes: is required');
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain', sizeBytes: -1 } }), 400, 3, 'sizeBytes: must be >= 0');
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain', sizeBytes: 1.5 } }), 400, 3, 'sizeBytes: must be of type integer');
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: '', contentType: 'text/plain', sizeBytes: 1 } }), 400, 3, /^filename: /);
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'plain', sizeBytes: 1 } }), 400, 3, /^contentType: has an invalid format/);
      expectError(await api.request('POST', '/v1/uploads', { token: ws.token, body: { filename: 'a', contentType: 'text/plain', sizeBytes: 1, status: 'x' } }), 400, 3, 'status: is not a known field');
    });

    it('requires authentication and workspaces:manage', async () => {
      const body = { filename: 'a', contentType: 'text/plain', sizeBytes: 1 };
      expectError(await api.request('POST', '/v1/uploads', { body }), 401, 16, /./);
      expectError(await api.request('POST', '/v1/uploads', { token: await ws.keyWith(['workspaces:read']), body }), 403, 7, 'this credential lacks the workspaces:manage scope');
      expectError(await api.request('POST', '/v1/uploads', { token: await ws.keyWith(['memory:manage']), body }), 403, 7, 'this credential lacks the workspaces:manage scope');
      assert.equal((await api.request('POST', '/v1/uploads', { token: await ws.keyWith(['workspaces:manage']), body })).status, 200);
    });

    it('replays the first response for a repeated Idempotency-Key', async () => {
      const body = { filename: 'a', contentType: 'text/plain', sizeBytes: 1 };
      const first = await api.request('POST', '/v1/uploads', { token: ws.token, body, headers: { 'idempotency-key': 'upload-1' } });
      const second = await api.request('POST', '/v1/uploads', { token: ws.token, body, headers: { 'idempotency-key': 'upload-1' } });
      assert.equal(second.body.metadata.id, first.body.metadata.id);
    });
  });

  describe('PUT /v1/uploads/{id}/content (signed URL)', () => {
    it('stores the bytes in the data folder without a bearer token', async () => {
      const upload = await createUpload(api, ws.token, 5);
      const response = await putStatus(api, upload.info.uploadUrl, 'hello');
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, {});
      const file = path.join(dataDir, 'objects', 'uploads', ws.workspaceId, upload.metadata.id);
      assert.equal(readFileSync(file, 'utf8'), 'hello');
      const signature = new URL(upload.info.uploadUrl).searchParams.get('signature')!;
      assert.ok(api.logs.some((line) => line.includes('/v1/uploads/{id}/content')), 'the PUT is logged');
      assert.equal(api.logs.filter((line) => line.includes(signature)).length, 0, 'no log line holds the URL signature');
    });

    it('refuses a body larger than sizeBytes with 413 INVALID_ARGUMENT', async () => {
      const upload = await createUpload(api, ws.token, 5);
      expectError(await putStatus(api, upload.info.uploadUrl, 'hello!'), 413, 3, 'request body exceeds the 5-byte limit');
    });

    it('refuses a chunked body that grows past sizeBytes', async () => {
      const upload = await createUpload(api, ws.token, 4);
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('abc'));
          controller.enqueue(new TextEncoder().encode('def'));
          controller.close();
        },
      });
      // The service stops reading and closes the connection; a client that is
      // still sending may see the close before the 413.
      const outcome = await fetch(reachable(api, upload.info.uploadUrl), { method: 'PUT', body: stream, duplex: 'half' } as RequestInit).then(
        async (response) => `${response.status} ${((await response.json()) as { message: string }).message}`,
        (error: Error) => `closed: ${(error.cause as Error | undefined)?.message ?? error.message}`,
      );
      assert.match(outcome, /^(413 request body exceeds the 4-byte limit|closed: other side closed)$/);
      const complete = await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token });
      expectError(complete, 400, 9, `upload ${upload.metadata.id} has no content yet: PUT the bytes to its uploadUrl first`);
    });

    it('returns PERMISSION_DENIED for a tampered signature', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const url = new URL(upload.info.uploadUrl);
      const signature = url.searchParams.get('signature')!;
      url.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
      expectError(await putStatus(api, url.toString(), 'x'), 403, 7, 'the upload URL signature is invalid');
    });

    it('returns PERMISSION_DENIED for a changed expiry', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const url = new URL(upload.info.uploadUrl);
      url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
      expectError(await putStatus(api, url.toString(), 'x'), 403, 7, 'the upload URL signature is invalid');
    });

    it("returns PERMISSION_DENIED for another upload's signature", async () => {
      const first = await createUpload(api, ws.token, 1);
      const second = await createUpload(api, ws.token, 1);
      const url = new URL(first.info.uploadUrl);
      url.pathname = `/v1/uploads/${second.metadata.id}/content`;
      expectError(await putStatus(api, url.toString(), 'x'), 403, 7, 'the upload URL signature is invalid');
    });

    it('returns PERMISSION_DENIED for an expired URL', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const { expires, signature } = signer(api).sign(upload.metadata.id, new Date(Date.now() - 1000));
      const url = `${api.url}/v1/uploads/${upload.metadata.id}/content?expires=${expires}&signature=${signature}`;
      expectError(await putStatus(api, url, 'x'), 403, 7, 'the upload URL has expired');
    });

    it('returns PERMISSION_DENIED without a signature', async () => {
      expectError(await putStatus(api, `${api.url}/v1/uploads/${MISSING_UPLOAD}/content`, 'x'), 403, 7, 'the upload URL is not signed (expires and signature are required)');
    });

    it('returns NOT_FOUND for a validly signed unknown upload', async () => {
      const { expires, signature } = signer(api).sign(MISSING_UPLOAD, new Date(Date.now() + 60_000));
      expectError(await putStatus(api, `${api.url}/v1/uploads/${MISSING_UPLOAD}/content?expires=${expires}&signature=${signature}`, 'x'), 404, 5, `upload ${MISSING_UPLOAD} not found`);
    });

    it('returns FAILED_PRECONDITION once the upload is COMPLETE', async () => {
      const upload = await createUpload(api, ws.token, 1);
      assert.equal((await putStatus(api, upload.info.uploadUrl, 'x')).status, 200);
      assert.equal((await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token })).status, 200);
      expectError(await putStatus(api, upload.info.uploadUrl, 'y'), 400, 9, `upload ${upload.metadata.id} is UPLOAD_STATUS_COMPLETE; its content can no longer change`);
    });

    it('returns INVALID_ARGUMENT for a malformed id', async () => {
      expectError(await putStatus(api, `${api.url}/v1/uploads/nope/content?expires=1&signature=x`, 'x'), 400, 3, /^id: has an invalid format/);
    });
  });

  describe('POST /v1/uploads/{id}/complete', () => {
    it('makes an upload of the declared size COMPLETE; repeating it changes nothing', async () => {
      const upload = await createUpload(api, ws.token, 3);
      await putBytes(api, upload.info.uploadUrl, Buffer.from('abc'));
      const response = await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token });
      assert.equal(response.status, 200);
      assert.equal(response.body.info.status, 'UPLOAD_STATUS_COMPLETE');
      assert.equal(response.body.info.uploadUrl, undefined);
      const again = await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token });
      assert.deepEqual(again.body, response.body);
    });

    it('returns FAILED_PRECONDITION when nothing was uploaded', async () => {
      const upload = await createUpload(api, ws.token, 3);
      expectError(await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token }), 400, 9, `upload ${upload.metadata.id} has no content yet: PUT the bytes to its uploadUrl first`);
    });

    it('returns FAILED_PRECONDITION when the stored size differs from sizeBytes', async () => {
      const upload = await createUpload(api, ws.token, 3);
      await putBytes(api, upload.info.uploadUrl, Buffer.from('ab'));
      expectError(await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token }), 400, 9, `upload ${upload.metadata.id} holds 2 bytes but sizeBytes is 3`);
      const current = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: ws.token });
      assert.equal(current.body.info.status, 'UPLOAD_STATUS_PENDING');
    });

    it('returns FAILED_PRECONDITION for a CONSUMED upload, whose bytes are gone from the data folder', async () => {
      const uploadId = await completedUpload(api, ws.token, Buffer.from('body'));
      const layer = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'l' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
      const entry = await api.request('POST', `/v1/memory_layers/${layer.body.metadata.id}/entries`, { token: ws.token, body: { spec: { key: 'k', uploadId } } });
      assert.equal(entry.body.content, 'body');
      assert.equal(existsSync(path.join(dataDir, 'objects', 'uploads', ws.workspaceId, uploadId)), false);
      expectError(await api.request('POST', `/v1/uploads/${uploadId}/complete`, { token: ws.token }), 400, 9, `upload ${uploadId} was already consumed`);
    });

    it('never consumes bytes that changed after completion (a late PUT to a still-valid URL)', async () => {
      const uploadId = await completedUpload(api, ws.token, Buffer.from('good'));
      writeFileSync(path.join(dataDir, 'objects', 'uploads', ws.workspaceId, uploadId), 'evil');
      const layer = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'late' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
      const entry = await api.request('POST', `/v1/memory_layers/${layer.body.metadata.id}/entries`, { token: ws.token, body: { spec: { key: 'k', uploadId } } });
      expectError(entry, 400, 9, `spec.uploadId: upload ${uploadId} changed after it was completed; upload it again`);
    });

    it('returns NOT_FOUND for an upload of another workspace', async () => {
      const upload = await createUpload(api, ws.token, 1);
      await putBytes(api, upload.info.uploadUrl, Buffer.from('x'));
      const other = await ws.otherWorkspace();
      expectError(await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: other.token }), 404, 5, `upload ${upload.metadata.id} not found`);
    });

    it('requires authentication, workspaces:manage and a well-formed id', async () => {
      expectError(await api.request('POST', `/v1/uploads/${MISSING_UPLOAD}/complete`), 401, 16, /./);
      expectError(await api.request('POST', `/v1/uploads/${MISSING_UPLOAD}/complete`, { token: await ws.keyWith(['workspaces:read']) }), 403, 7, 'this credential lacks the workspaces:manage scope');
      expectError(await api.request('POST', '/v1/uploads/upload_x/complete', { token: ws.token }), 400, 3, /^id: has an invalid format/);
      expectError(await api.request('POST', `/v1/uploads/${MISSING_UPLOAD}/complete`, { token: ws.token }), 404, 5, `upload ${MISSING_UPLOAD} not found`);
    });
  });

  describe('GET /v1/uploads/{id}', () => {
    it('returns the upload, with its URL while PENDING to callers who may write uploads', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const response = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: await ws.keyWith(['workspaces:manage']) });
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, upload);
    });

    it('keeps the URL, a write credential, from read-only callers', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const response = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: await ws.keyWith(['workspaces:read']) });
      assert.equal(response.status, 200);
      assert.equal(response.body.info.status, 'UPLOAD_STATUS_PENDING');
      assert.equal(response.body.info.uploadUrl, undefined);
      assert.equal(response.body.metadata.id, upload.metadata.id);
    });

    it('omits the URL once it has expired', async () => {
      const upload = await createUpload(api, ws.token, 1);
      await api.dataSource.query("UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1", [upload.metadata.id]);
      const response = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: ws.token });
      assert.equal(response.body.info.status, 'UPLOAD_STATUS_PENDING');
      assert.equal(response.body.info.uploadUrl, undefined);
    });

    it('returns NOT_FOUND for an upload of another workspace or account', async () => {
      const upload = await createUpload(api, ws.token, 1);
      const other = await ws.otherWorkspace();
      expectError(await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: other.token }), 404, 5, `upload ${upload.metadata.id} not found`);
      const stranger = await workspaceFixture(api);
      expectError(await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: stranger.token }), 404, 5, `upload ${upload.metadata.id} not found`);
    });

    it('requires authentication, workspaces:read and a well-formed id', async () => {
      expectError(await api.request('GET', `/v1/uploads/${MISSING_UPLOAD}`), 401, 16, /./);
      expectError(await api.request('GET', `/v1/uploads/${MISSING_UPLOAD}`, { token: await ws.keyWith(['memory:manage']) }), 403, 7, 'this credential lacks the workspaces:read scope');
      expectError(await api.request('GET', '/v1/uploads/memlayer_01ARZ3NDEKTSV4RRFFQ69G5FAV', { token: ws.token }), 400, 3, /^id: has an invalid format/);
    });
  });
});

describe('uploads (S3-compatible storage)', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let s3: S3rver;
  let s3Url: string;
  const s3Dir = mkdtempSync(path.join(tmpdir(), 'agentrt-s3rver-'));
  before(async () => {
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'agentrt-uploads', configs: [] }] });
    const address = (await s3.run()) as unknown as { port: number };
    s3Url = `http://127.0.0.1:${address.port}`;
    api = await startTestApi({
      env: {
        AGENTRT_S3_ENDPOINT: s3Url,
        AGENTRT_S3_BUCKET: 'agentrt-uploads',
        AGENTRT_S3_REGION: 'us-east-1',
        AGENTRT_S3_ACCESS_KEY_ID: 'S3RVER',
        AGENTRT_S3_SECRET_ACCESS_KEY: 'S3RVER',
        AGENTRT_S3_FORCE_PATH_STYLE: 'true',
      },
    });
  });
  after(async () => {
    await api.close();
    await s3.close();
    rmSync(s3Dir, { recursive: true, force: true });
  });
  beforeEach(async () => (ws = await workspaceFixture(api)));

  it('returns a presigned URL of the S3 server, and the PUT/complete/consume cycle works', async () => {
    const bytes = Buffer.from('# stored in S3\n');
    const upload = await createUpload(api, ws.token, bytes.length);
    const url = new URL(upload.info.uploadUrl);
    assert.equal(url.origin, s3Url);
    assert.equal(url.pathname, `/agentrt-uploads/uploads/${ws.workspaceId}/${upload.metadata.id}`);
    assert.match(url.searchParams.get('X-Amz-Expires') ?? '', /^(899|900)$/);
    assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'content-length;content-type;host');
    assert.equal(url.searchParams.get('x-amz-checksum-crc32'), null);
    const put = await putBytes(api, upload.info.uploadUrl, bytes);
    assert.equal(put.status, 200, await put.text());
    const completed = await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token });
    assert.equal(completed.body.info.status, 'UPLOAD_STATUS_COMPLETE');
    const layer = await api.request('POST', '/v1/memory_layers', { token: ws.token, body: { metadata: { name: 'l' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
    const entry = await api.request('POST', `/v1/memory_layers/${layer.body.metadata.id}/entries`, { token: ws.token, body: { spec: { key: 'k', uploadId: upload.metadata.id } } });
    assert.equal(entry.status, 200, JSON.stringify(entry.body));
    assert.equal(entry.body.content, '# stored in S3\n');
    const consumed = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: ws.token });
    assert.equal(consumed.body.info.status, 'UPLOAD_STATUS_CONSUMED');
    const gone = await fetch(`${s3Url}/agentrt-uploads/uploads/${ws.workspaceId}/${upload.metadata.id}`);
    assert.equal(gone.status, 404);
    const again = await api.request('POST', `/v1/memory_layers/${layer.body.metadata.id}/entries`, { token: ws.token, body: { spec: { key: 'k2', uploadId: upload.metadata.id } } });
    expectError(again, 400, 9, `spec.uploadId: upload ${upload.metadata.id} was already consumed`);
  });

  it('returns FAILED_PRECONDITION on complete when the object is missing or of another size', async () => {
    const upload = await createUpload(api, ws.token, 10);
    expectError(await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token }), 400, 9, `upload ${upload.metadata.id} has no content yet: PUT the bytes to its uploadUrl first`);
    assert.equal((await putBytes(api, upload.info.uploadUrl, Buffer.from('short'))).status, 200);
    expectError(await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token: ws.token }), 400, 9, `upload ${upload.metadata.id} holds 5 bytes but sizeBytes is 10`);
  });

  it('has the S3 server refuse an expired URL', async () => {
    const upload = await createUpload(api, ws.token, 1);
    await api.dataSource.query("UPDATE uploads SET expires_at = now() + interval '1 second' WHERE id = $1", [upload.metadata.id]);
    const shortLived = await api.request('GET', `/v1/uploads/${upload.metadata.id}`, { token: ws.token });
    assert.equal(new URL(shortLived.body.info.uploadUrl).searchParams.get('X-Amz-Expires'), '1');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const response = await putBytes(api, shortLived.body.info.uploadUrl, Buffer.from('x'));
    assert.equal(response.status, 403);
    assert.match(await response.text(), /Request has expired/);
  });

  it("refuses the service's own signed URL while S3 storage is configured", async () => {
    const upload = await createUpload(api, ws.token, 1);
    const { expires, signature } = new UploadUrlSigner(Buffer.alloc(32)).sign(upload.metadata.id, new Date(Date.now() + 60_000));
    const response = await putStatus(api, `${api.url}/v1/uploads/${upload.metadata.id}/content?expires=${expires}&signature=${signature}`, 'x');
    expectError(response, 403, 7, 'the upload URL signature is invalid');
  });
});
