import assert from 'node:assert/strict';
import type Router from '@koa/router';
import { API_ROUTER } from '../../http/app';
import { startTestApi, type TestApi } from '../support/api';

describe('GET /v1/openapi.json', () => {
  let api: TestApi;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const document = (await api.request('GET', '/v1/openapi.json')).body;
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
    assert.equal(document.openapi, '3.1.0');
  });

  it('lists every mounted route with its required scope', async () => {
    const document = (await api.request('GET', '/v1/openapi.json')).body;
    const router = (api.app as unknown as Record<symbol, Router>)[API_ROUTER];
    assert.ok(router, 'the app exposes its API router');
    const mounted = router.stack.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method: method.toLowerCase(), path: layer.path })));
    assert.ok(mounted.length >= 25, `only ${mounted.length} routes mounted`);
    for (const { method, path } of mounted) {
      const openApiPath = String(path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const operation = document.paths[openApiPath]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${openApiPath} is mounted but missing from the OpenAPI document`);
      assert.match(operation['x-required-scope'], /^(none|[a-z_]+:(read|manage))$/, `${method.toUpperCase()} ${openApiPath} has no scope`);
    }
  });
});
