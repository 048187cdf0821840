// Hostile input against every declared route: whatever a client sends, the
// answer is a 4xx Status body, never a 500 and never a hang.
import assert from 'node:assert/strict';
import { allRoutes } from '../../http/route-table';
import type { RouteDefinition } from '../../http/route';
import { startTestApi, type TestApi } from '../support/api';
import { newAccount, type TestAccount } from '../support/fixtures';

const HOSTILE_BODIES: unknown[] = [
  null,
  [],
  'text',
  42,
  true,
  { metadata: null },
  { metadata: [] },
  { metadata: { name: '' } },
  { metadata: { name: 'x'.repeat(300) } },
  { metadata: { name: 'n', labels: { 'a/b/c': '\u0000' } } },
  { spec: 'not an object' },
  { spec: { nested: { deeper: { deepest: [1, { a: null }] } } } },
  { updateMask: 'metadata.name,,,', metadata: { name: 'x' } },
  { __proto__: { admin: true }, constructor: { prototype: { admin: true } } },
  { metadata: { name: '\ud800' }, spec: {} },
  { metadata: { name: 'nul\u0000inside' }, spec: { description: 'x' } },
  { metadata: { name: 'n', labels: { ['k\u0000']: 'v' } } },
];

const HOSTILE_QUERIES = ['prefix=%00', 'query=a%00b', 'limit=-1', 'limit=1e99', 'cursor=%00%01', 'includeInfo=maybe', 'labels=,,,', 'sortOrder=sideways', 'prefix=%25_%5C', 'limit=1&limit=2'];

function fillPath(route: RouteDefinition, workspaceId: string, mode: 'valid' | 'garbage'): string {
  const properties = (route.params as { properties?: Record<string, { pattern?: string }> } | undefined)?.properties ?? {};
  return route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    if (mode === 'garbage') return encodeURIComponent("'; DROP TABLE accounts; --");
    if (name === 'workspaceId') return workspaceId;
    const prefix = /^\^([a-z]+)_/.exec(properties[name]?.pattern ?? '')?.[1];
    return prefix ? `${prefix}_01ARZ3NDEKTSV4RRFFQ69G5FAV` : 'x';
  });
}

describe('hostile input on every route', () => {
  let api: TestApi;
  let account: TestAccount;
  let routes: RouteDefinition[];
  before(async () => {
    api = await startTestApi();
    account = await newAccount(api);
    routes = allRoutes(api.services).filter((route) => route.auth === 'bearer');
  });
  after(async () => api.close());

  function expectClientError(route: RouteDefinition, what: string, response: { status: number; body: { code?: number } }) {
    assert.ok(response.status >= 400 && response.status < 500, `${route.method} ${route.path} with ${what}: ${response.status} ${JSON.stringify(response.body)}`);
    assert.equal(typeof response.body.code, 'number', `${route.method} ${route.path} with ${what}: no Status body`);
  }

  it('answers hostile bodies with a 4xx Status', async () => {
    for (const route of routes.filter((candidate) => ['POST', 'PUT', 'PATCH'].includes(candidate.method) && candidate.body)) {
      for (const body of HOSTILE_BODIES) {
        const response = await api.request(route.method, fillPath(route, account.workspaceId, 'valid'), {
          token: account.globalToken,
          headers: { 'x-workspace-id': account.workspaceId },
          rawBody: JSON.stringify(body),
        });
        if (response.status < 300) continue; // some hostile-looking bodies are valid for some routes
        expectClientError(route, JSON.stringify(body), response);
      }
    }
  });

  it('answers hostile paths and queries with a 4xx Status', async () => {
    for (const route of routes) {
      if (route.params) {
        const response = await api.request(route.method, fillPath(route, account.workspaceId, 'garbage'), { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
        expectClientError(route, 'a garbage id', response);
      }
      if (route.method !== 'GET' || !route.query) continue;
      for (const query of HOSTILE_QUERIES) {
        const response = await api.request('GET', `${fillPath(route, account.workspaceId, 'valid')}?${query}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId } });
        if (response.status < 300) continue;
        expectClientError(route, query, response);
      }
    }
  });
});
