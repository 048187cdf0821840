// Upload helpers for API tests: create an upload, PUT its bytes to the signed
// URL (rebased on the test server for local storage, whose public URL names
// port 0), and complete it.
import assert from 'node:assert/strict';
import type { TestApi } from './api';

/** The upload URL, pointed at the test server when it is the service's own URL. */
export function reachable(api: TestApi, uploadUrl: string): string {
  if (!uploadUrl.startsWith(api.config.publicUrl)) return uploadUrl;
  const url = new URL(uploadUrl);
  return `${api.url}${url.pathname}${url.search}`;
}

export async function createUpload(api: TestApi, token: string, sizeBytes: number, extra: Record<string, unknown> = {}) {
  const response = await api.request('POST', '/v1/uploads', { token, body: { filename: 'notes.md', contentType: 'text/markdown', sizeBytes, ...extra } });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

export async function putBytes(api: TestApi, uploadUrl: string, bytes: Buffer, contentType = 'text/markdown') {
  return fetch(reachable(api, uploadUrl), { method: 'PUT', body: bytes, headers: { 'content-type': contentType } });
}

/** Creates, fills and completes an upload; returns its id. */
export async function completedUpload(api: TestApi, token: string, bytes: Buffer): Promise<string> {
  const upload = await createUpload(api, token, bytes.length);
  const put = await putBytes(api, upload.info.uploadUrl, bytes);
  assert.equal(put.status, 200, await put.text());
  const completed = await api.request('POST', `/v1/uploads/${upload.metadata.id}/complete`, { token });
  assert.equal(completed.status, 200, JSON.stringify(completed.body));
  return upload.metadata.id;
}
