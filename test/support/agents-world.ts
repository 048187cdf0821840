// Fixtures for the agents and tools API suites: creators for agents,
// variations, tools and tool sets, and the per-route guard checks (401 without
// a token, 403 without the scope, NOT_FOUND for another workspace's ids,
// INVALID_ARGUMENT for malformed ids) run over a table of routes.
import assert from 'node:assert/strict';
import type { ApiResponse, TestApi } from './api';
import { workspaceFixture, type WorkspaceFixture } from './workspace-keys';

export const MODEL_ID = 'builtin/scripted';

/** POSTs `body` and asserts 200; returns the response body. */
export async function created(api: TestApi, token: string, path: string, body: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const response = await api.request('POST', path, { token, body });
  assert.equal(response.status, 200, `POST ${path}: ${JSON.stringify(response.body)}`);
  return response.body;
}

export const createAgent = (api: TestApi, token: string, workspaceId: string, body: Record<string, unknown> = {}) =>
  created(api, token, `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'support-bot' }, ...body });

export const createVariation = (api: TestApi, token: string, workspaceId: string, agentId: string, body: Record<string, unknown> = {}) =>
  created(api, token, `/v1/workspaces/${workspaceId}/agents/${agentId}/variations`, { metadata: { name: 'v1' }, ...body });

export const createTool = (api: TestApi, token: string, workspaceId: string, body: Record<string, unknown> = {}) =>
  created(api, token, `/v1/workspaces/${workspaceId}/tools`, {
    metadata: { name: 'lookup' },
    spec: { http: { url: 'https://api.example.com/lookup', method: 'POST' } },
    ...body,
  });

export const createToolSet = (api: TestApi, token: string, workspaceId: string, body: Record<string, unknown> = {}) =>
  created(api, token, `/v1/workspaces/${workspaceId}/tool_sets`, { metadata: { name: 'crm' }, ...body });

/** Asserts a Status body: HTTP status, gRPC code and the exact message (or a pattern). */
export function assertError(response: ApiResponse, httpStatus: number, code: number, message: string | RegExp): void {
  assert.equal(response.status, httpStatus, `expected ${httpStatus}, got ${response.status}: ${JSON.stringify(response.body)}`);
  assert.equal(response.body.code, code, JSON.stringify(response.body));
  if (typeof message === 'string') assert.equal(response.body.message, message);
  else assert.match(response.body.message, message);
}

/** Ids of one workspace's resources, for building guarded paths. */
export type Ids = Record<string, string>;

export interface GuardedRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** Builds the path from a workspace id and the ids of resources. */
  path: (workspaceId: string, ids: Ids) => string;
  scope: string;
  body?: unknown;
  /** Id parameters a malformed value can replace (keys of Ids). */
  idKeys: string[];
}

export interface GuardWorld {
  ws: WorkspaceFixture;
  ids: Ids;
  /** The same kinds of resources in another workspace of the account. */
  foreignIds: Ids;
}

/**
 * Declares the four guard checks of every route in `routes`.
 * @param world builds the resources once (called in `before`)
 */
export function describeGuards(api: () => TestApi, world: () => Promise<GuardWorld>, routes: GuardedRoute[]): void {
  describe('route guards', () => {
    let setup: GuardWorld;
    before(async () => (setup = await world()));
    const call = (route: GuardedRoute, path: string, token?: string) =>
      api().request(route.method, path, { token, body: route.body ?? (['POST', 'PATCH', 'PUT'].includes(route.method) ? {} : undefined) });
    const name = (route: GuardedRoute) => `${route.method} ${route.path('{ws}', Object.fromEntries(route.idKeys.map((key) => [key, `{${key}}`])))}`;

    it('returns UNAUTHENTICATED without a bearer token', async () => {
      for (const route of routes) {
        const response = await call(route, route.path(setup.ws.workspaceId, setup.ids));
        assert.equal(response.status, 401, name(route));
        assert.equal(response.body.code, 16, name(route));
        assert.equal(response.body.message, 'missing bearer token (Authorization: Bearer <token>)');
      }
    });

    it('returns PERMISSION_DENIED for a key without the scope', async () => {
      for (const route of routes) {
        const [resource, verb] = route.scope.split(':');
        const token = await setup.ws.keyWith(verb === 'manage' ? [`${resource}:read`] : [resource === 'tools' ? 'agents:manage' : 'tools:manage']);
        const response = await call(route, route.path(setup.ws.workspaceId, setup.ids), token);
        assert.equal(response.status, 403, name(route));
        assert.equal(response.body.code, 7, name(route));
        assert.equal(response.body.message, `this credential lacks the ${route.scope} scope`, name(route));
      }
    });

    it("returns NOT_FOUND for another workspace's ids", async () => {
      for (const route of routes.filter((candidate) => candidate.idKeys.length)) {
        const response = await call(route, route.path(setup.ws.workspaceId, { ...setup.ids, ...setup.foreignIds }), setup.ws.token);
        assert.equal(response.status, 404, `${name(route)}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.code, 5, name(route));
        assert.match(response.body.message, / not found$/, name(route));
      }
    });

    it('returns INVALID_ARGUMENT for a malformed id', async () => {
      for (const route of routes) {
        for (const key of route.idKeys) {
          const response = await call(route, route.path(setup.ws.workspaceId, { ...setup.ids, [key]: 'not-an-id' }), setup.ws.token);
          assert.equal(response.status, 400, `${name(route)} (${key}): ${JSON.stringify(response.body)}`);
          assert.equal(response.body.code, 3, name(route));
          assert.match(response.body.message, new RegExp(`^${key}: has an invalid format`), name(route));
        }
      }
    });
  });
}

export { workspaceFixture };
