// The API reference page (GET /docs) over HTTP: the page and only the files it
// loads, each with its type, an ETag (304 on a match), caching and compressed
// forms; the page's strict policy; the package's own bytes. Chromium's view of
// it is test/browser/api-reference.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../support/api';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request with exactly these headers (fetch would add Accept-Encoding and decompress). */
function rawRequest(url: string, method: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const FILES = [
  { name: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8', cache: 'public, max-age=3600' },
  { name: 'swagger-ui.css', type: 'text/css; charset=utf-8', cache: 'public, max-age=3600' },
  { name: 'favicon-32x32.png', type: 'image/png', cache: 'public, max-age=3600' },
];

describe('GET /docs (the API reference page)', function () {
  // The first request reads and compresses the page's 2 MB of files.
  this.timeout(60_000);
  let api: TestApi;
  const get = (path: string, headers: Record<string, string> = {}) => rawRequest(`${api.url}${path}`, 'GET', headers);

  before(async () => (api = await startTestApi()));
  after(async () => api?.close());

  it('answers an HTML page that loads only the node\'s own files, under a strict policy', async () => {
    const response = await get('/docs');
    assert.equal(response.status, 200, response.body.toString());
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(
      response.headers['content-security-policy'],
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = response.body.toString('utf8');
    const loaded = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]).sort();
    assert.deepEqual(loaded, ['/docs/api-reference.js', '/docs/favicon-32x32.png', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']);
    assert.doesNotMatch(html, /<script>|<style|\sstyle=|\son[a-z]+=/i, 'nothing inline: the policy would refuse it');
  });

  it('serves swagger-ui-dist\'s files as installed, with their types, ETags and caching', async () => {
    for (const { name, type, cache } of FILES) {
      const response = await get(`/docs/${name}`);
      assert.equal(response.status, 200, name);
      assert.equal(response.headers['content-type'], type, name);
      assert.equal(response.headers['cache-control'], cache, name);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', name);
      assert.match(String(response.headers.etag), /^"[\w-]{27}"$/, name);
      assert.ok(response.body.equals(readFileSync(path.join(SWAGGER_UI, name))), `${name} is the installed package's file`);
    }
  });

  it('starts Swagger UI on the node\'s OpenAPI document with the validator off', async () => {
    const response = await get('/docs/api-reference.js');
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(response.headers['cache-control'], 'no-cache');
    const script = response.body.toString('utf8');
    assert.match(script, /url: "\/v1\/openapi\.json",/);
    assert.match(script, /validatorUrl: null,/);
    assert.equal((await api.request('GET', '/v1/openapi.json')).status, 200, 'the document is where the page looks for it');
  });

  it('answers 304 to a request naming the current ETag, and the bytes again to a stale one', async () => {
    for (const target of ['/docs', '/docs/swagger-ui-bundle.js', '/docs/api-reference.js']) {
      const first = await get(target);
      const etag = String(first.headers.etag);
      const again = await get(target, { 'if-none-match': etag });
      assert.equal(again.status, 304, target);
      assert.equal(again.headers.etag, etag, target);
      assert.equal(again.body.length, 0, target);
      assert.equal((await get(target, { 'if-none-match': `W/${etag}` })).status, 304, `${target}: a weak comparison matches (RFC 9110 13.1.2)`);
      const stale = await get(target, { 'if-none-match': '"stale"' });
      assert.equal(stale.status, 200, target);
      assert.ok(stale.body.equals(first.body), target);
    }
  });

  it('sends the bundle brotli- or gzip-compressed to a client that accepts it', async () => {
    const installed = readFileSync(path.join(SWAGGER_UI, 'swagger-ui-bundle.js'));
    const brotli = await get('/docs/swagger-ui-bundle.js', { 'accept-encoding': 'gzip, br' });
    assert.equal(brotli.headers['content-encoding'], 'br');
    assert.equal(brotli.headers.vary, 'Accept-Encoding');
    assert.ok(brotli.body.length < installed.length / 3, `${brotli.body.length} bytes compressed`);
    assert.ok(brotliDecompressSync(brotli.body).equals(installed));
    const gzip = await get('/docs/swagger-ui-bundle.js', { 'accept-encoding': 'gzip' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(gzip.body).equals(installed));
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await rawRequest(`${api.url}/docs`, 'HEAD');
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(response.body.length, 0);
  });

  it('serves nothing else of the package: other names under /docs are 404 NOT_FOUND', async () => {
    for (const name of ['swagger-ui-bundle.js.map', 'index.html', 'swagger-initializer.js', 'oauth2-redirect.html', 'package.json', '..%2Fpackage.json', 'toString']) {
      const response = await get(`/docs/${name}`);
      assert.equal(response.status, 404, name);
      assert.deepEqual(JSON.parse(response.body.toString()), { code: 5, message: `no route for GET /docs/${name}`, details: [] }, name);
    }
  });

  it('answers an unknown name under /docs 404 whatever the method, and a file the page loads 405 with Allow for another method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const unknown = await rawRequest(`${api.url}/docs/nothing.js`, method);
      assert.equal(unknown.status, 404, method);
      assert.equal(unknown.headers.allow, undefined, method);
      assert.deepEqual(JSON.parse(unknown.body.toString()), { code: 5, message: `no route for ${method} /docs/nothing.js`, details: [] }, method);
      const known = await rawRequest(`${api.url}/docs/swagger-ui.css`, method);
      assert.equal(known.status, 405, method);
      assert.equal(known.headers.allow, 'GET, HEAD', method);
    }
  });
});
