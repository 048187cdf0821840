// Walks every declared route: a key without the route's scope is refused with
// PERMISSION_DENIED naming the scope; read does not grant manage; the scope
// itself gets past the scope check (later checks may still refuse).
import assert from 'node:assert/strict';
import { allRoutes } from '../../http/route-table';
import type { RouteDefinition } from '../../http/route';
import { ScopeResource } from '../../src/auth/scopes';
import { startTestApi, type TestApi } from '../support/api';
import { newAccount, newKey, type TestAccount } from '../support/fixtures';

function fillPath(route: RouteDefinition, workspaceId: string): string {
  const properties = (route.params as { properties?: Record<string, { pattern?: string }> } | undefined)?.properties ?? {};
  return route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    if (name === 'workspaceId') return workspaceId;
    const prefix = /^\^([a-z]+)_/.exec(properties[name]?.pattern ?? '')?.[1];
    return prefix ? `${prefix}_01ARZ3NDEKTSV4RRFFQ69G5FAV` : 'x';
  });
}

describe('scope enforcement on every route', () => {
  let api: TestApi;
  let account: TestAccount;
  const tokens = new Map<string, string>();
  let routes: RouteDefinition[];

  async function keyWith(permissions: string[]): Promise<string> {
    const cacheKey = permissions.join(',');
    if (!tokens.has(cacheKey)) tokens.set(cacheKey, (await newKey(api, account, account.workspaceId, permissions)).token);
    return tokens.get(cacheKey)!;
  }

  function call(route: RouteDefinition, token: string) {
    const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? {} : undefined;
    return api.request(route.method, fillPath(route, account.workspaceId), { token, body });
  }

  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
    routes = allRoutes(api.services).filter((route) => route.scope !== 'none' && route.auth === 'bearer');
  });
  after(async () => api.close());

  it('refuses a key holding every other scope', async () => {
    for (const route of routes) {
      const resource = route.scope.split(':')[0];
      const others = ScopeResource.filter((candidate) => candidate !== resource).map((candidate) => `${candidate}:manage`);
      const response = await call(route, await keyWith(others));
      assert.equal(response.status, 403, `${route.method} ${route.path}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.code, 7);
      assert.equal(response.body.message, `this credential lacks the ${route.scope} scope`, `${route.method} ${route.path}`);
    }
  });

  it('does not let read grant manage', async () => {
    for (const route of routes.filter((candidate) => candidate.scope.endsWith(':manage'))) {
      const resource = route.scope.split(':')[0];
      if (resource === 'secrets' || resource === 'account') continue; // these have no read verb
      const response = await call(route, await keyWith([`${resource}:read`]));
      assert.equal(response.status, 403, `${route.method} ${route.path}`);
      assert.match(response.body.message, /lacks the .* scope/);
    }
  });

  it('lets the route\'s own scope past the scope check', async () => {
    for (const route of routes) {
      const response = await call(route, await keyWith([route.scope]));
      assert.ok(!/lacks the/.test(String(response.body?.message ?? '')), `${route.method} ${route.path} refused its own scope ${route.scope}`);
      assert.notEqual(response.status, 500, `${route.method} ${route.path} answered 500`);
    }
  });
});
