// Widgets (api-decisions.md "Widgets"): CRUD with the usual conventions
// (metadata, list params and labels, update masks, If-Match), every field
// checked and named, hostnames unique across accounts whatever their case
// (ALREADY_EXISTS, race-safe), exact allowed origins, the agent of the
// workspace, the theme's default, and the route guards.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, describeGuards, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import { Code, missingId } from '../support/fixtures';
import type { WorkspaceFixture } from '../support/workspace-keys';

const uniqueHostname = (label = 'chat') => `${label}-${randomUUID().slice(0, 8)}.widgets.example.com`;
const ORIGINS = ['https://www.example.com', 'http://localhost:3000'];
/** The API's own hostname (AGENTRT_PUBLIC_URL): no widget may take it. */
const API_HOSTNAME = `api-${randomUUID().slice(0, 8)}.agentrt.example.com`;

describe('widgets', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;
  before(async () => (api = await startTestApi({ env: { AGENTRT_PUBLIC_URL: `https://${API_HOSTNAME}:8443/` } })));
  after(async () => api.close());
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
  });

  const widgetsPath = (workspaceId = ws.workspaceId) => `/v1/workspaces/${workspaceId}/widgets`;
  const spec = (fields: Record<string, unknown> = {}) => ({ agentId, hostname: uniqueHostname(), allowedOrigins: ORIGINS, ...fields });
  const post = (fields: Record<string, unknown> = {}, metadata: Record<string, unknown> = { name: 'support' }, token = ws.token) =>
    api.request('POST', widgetsPath(), { token, body: { metadata, spec: spec(fields) } });
  async function createWidget(fields: Record<string, unknown> = {}, metadata?: Record<string, unknown>) {
    const response = await post(fields, metadata);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }
  const patch = (id: string, body: unknown, headers: Record<string, string> = {}) => api.request('PATCH', `${widgetsPath()}/${id}`, { token: ws.token, body, headers });

  describe('POST /v1/workspaces/{ws}/widgets', () => {
    it('creates a widget with every field', async () => {
      const hostname = uniqueHostname();
      const widget = await createWidget(
        { hostname, title: 'Help', greeting: 'Hi! How can we help?', theme: 'THEME_DARK', allowVisitorApprovals: true },
        { name: 'support', externalId: 'ext-1', labels: { team: 'care' } },
      );
      assert.match(widget.metadata.id, /^widget_[0-9A-HJKMNP-TV-Z]{26}$/);
      assert.equal(widget.metadata.workspaceId, ws.workspaceId);
      assert.equal(widget.metadata.externalId, 'ext-1');
      assert.deepEqual(widget.metadata.labels, { team: 'care' });
      assert.deepEqual(widget.spec, {
        agentId, hostname, allowedOrigins: ORIGINS, title: 'Help', greeting: 'Hi! How can we help?', theme: 'THEME_DARK', allowVisitorApprovals: true,
      });
      assert.deepEqual(widget.info, { baseUrl: `https://${hostname}` });
    });

    it('defaults the theme to THEME_AUTO and allowVisitorApprovals to false, and leaves out blank text', async () => {
      const widget = await createWidget({ title: '  ', theme: 'THEME_UNSPECIFIED' });
      assert.equal(widget.spec.theme, 'THEME_AUTO');
      assert.equal(widget.spec.allowVisitorApprovals, false);
      assert.equal('title' in widget.spec, false);
      assert.equal('greeting' in widget.spec, false);
    });

    it('stores the hostname in lower case and origins normalised, without repeats', async () => {
      const hostname = uniqueHostname('MiXeD');
      const widget = await createWidget({ hostname, allowedOrigins: ['HTTPS://WWW.Example.COM', 'https://www.example.com:443', 'http://shop.example.com:8080'] });
      assert.equal(widget.spec.hostname, hostname.toLowerCase());
      assert.deepEqual(widget.spec.allowedOrigins, ['https://www.example.com', 'http://shop.example.com:8080']);
    });

    it('answers ALREADY_EXISTS for a hostname another widget has, in any account and any case', async () => {
      const hostname = uniqueHostname();
      await createWidget({ hostname });
      const expected = 'a widget with this hostname already exists (hostnames are unique across all accounts)';
      assertError(await post({ hostname }), 409, Code.ALREADY_EXISTS, expected);
      const other = await workspaceFixture(api);
      const otherAgent = (await createAgent(api, other.token, other.workspaceId)).metadata.id;
      const inOther = await api.request('POST', widgetsPath(other.workspaceId), {
        token: other.token, body: { metadata: { name: 'w' }, spec: { agentId: otherAgent, hostname: hostname.toUpperCase(), allowedOrigins: ORIGINS } },
      });
      assertError(inOther, 409, Code.ALREADY_EXISTS, expected);
    });

    it('lets one of concurrent creates of a hostname win', async () => {
      const hostname = uniqueHostname();
      const responses = await Promise.all(Array.from({ length: 5 }, () => post({ hostname })));
      assert.deepEqual(responses.map((response) => response.status).sort(), [200, 409, 409, 409, 409]);
    });

    it('answers NOT_FOUND naming spec.agentId for an agent that is not the workspace\'s', async () => {
      const other = await ws.otherWorkspace();
      const foreignAgent = (await createAgent(api, other.token, other.workspaceId)).metadata.id;
      for (const id of [missingId('agent'), foreignAgent]) {
        const response = await post({ agentId: id });
        assertError(response, 404, Code.NOT_FOUND, `spec.agentId: agent ${id} not found in the workspace`);
        assert.equal(response.body.details[0].fieldViolations[0].field, 'spec.agentId');
      }
      assertError(await post({ agentId: 'agent-x' }), 400, Code.INVALID_ARGUMENT, /spec\.agentId/);
    });

    it("refuses the service's own API hostname (AGENTRT_PUBLIC_URL's), in any case", async () => {
      for (const hostname of [API_HOSTNAME, API_HOSTNAME.toUpperCase()]) {
        assertError(await post({ hostname }), 400, Code.INVALID_ARGUMENT, "spec.hostname: is this service's own API hostname");
      }
    });

    it('names each invalid hostname', async () => {
      for (const hostname of ['', 'localhost', 'https://chat.example.com', 'chat.example.com:443', 'chat.example.com.', '-chat.example.com', 'chat_1.example.com',
        'chat..example.com', '10.0.0.1', 'chat example.com', `${'a'.repeat(64)}.example.com`, '*.example.com', 'chat.example.com/x', 'ché.example.com']) {
        assertError(await post({ hostname }), 400, Code.INVALID_ARGUMENT, /^spec\.hostname: /);
      }
    });

    it('names each invalid allowed origin', async () => {
      assertError(await post({ allowedOrigins: [] }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins: must name at least one origin/);
      for (const origin of ['https://www.example.com/', 'https://www.example.com/path', 'https://*.example.com', '*', 'ftp://files.example.com', 'www.example.com',
        'https://user:pw@www.example.com', 'https://www.example.com?x=1', 'https://www.example.com#x', 'null', 'javascript:alert(1)', 'https://www.example.com:99999']) {
        const response = await post({ allowedOrigins: ['https://ok.example.com', origin] });
        assertError(response, 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins\[1\]: must be an exact origin/);
        assert.equal(response.body.details[0].fieldViolations[0].field, 'spec.allowedOrigins[1]', origin);
      }
      assertError(await post({ allowedOrigins: ['http://[::1]:8080'] }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins\[0\]: cannot be an IPv6 address/);
      // Origins a URL takes but a CSP source list cannot name: CORS would answer them, frame-ancestors would leave them out.
      for (const origin of ['http://my_site.com', 'https://shop$.example.com', 'https://a~b.example.com']) {
        const response = await post({ allowedOrigins: ['https://ok.example.com', origin] });
        assertError(response, 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins\[1\]: must have a host of letters, digits, dots and hyphens only/);
        assert.equal(response.body.details[0].fieldViolations[0].field, 'spec.allowedOrigins[1]', origin);
      }
      const widget = await createWidget({ allowedOrigins: ['https://Bücher.example'] });
      assert.deepEqual(widget.spec.allowedOrigins, ['https://xn--bcher-kva.example'], 'an international name is stored as the punycode a CSP can name');
      const many = Array.from({ length: 51 }, (_, index) => `https://site${index}.example.com`);
      assertError(await post({ allowedOrigins: many }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins: must name at most 50/);
    });

    it('refuses bad shapes with the field named, never a 500', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ theme: 'THEME_PINK' }, /spec\.theme/],
        [{ allowVisitorApprovals: 'yes' }, /spec\.allowVisitorApprovals/],
        [{ title: 'x'.repeat(201) }, /spec\.title/],
        [{ greeting: 'x'.repeat(2001) }, /spec\.greeting/],
        [{ allowedOrigins: 'https://www.example.com' }, /spec\.allowedOrigins/],
        [{ hostname: 42 }, /spec\.hostname/],
        [{ color: 'red' }, /color/],
      ];
      for (const [fields, field] of cases) assertError(await post(fields), 400, Code.INVALID_ARGUMENT, field);
      const missing = await api.request('POST', widgetsPath(), { token: ws.token, body: { metadata: { name: 'w' }, spec: { agentId } } });
      assertError(missing, 400, Code.INVALID_ARGUMENT, /spec\.(hostname|allowedOrigins)/);
      assertError(await post({}, { name: 'w', labels: { 'bad key!': 'x' } }), 400, Code.INVALID_ARGUMENT, /metadata\.labels/);
    });
  });

  describe('GET /v1/workspaces/{ws}/widgets', () => {
    it('lists in id order with paging, prefix, labels and the agent filter', async () => {
      const otherAgent = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'sales-bot' } })).metadata.id;
      const a = await createWidget({}, { name: 'alpha', labels: { env: 'prod' } });
      const b = await createWidget({ agentId: otherAgent }, { name: 'beta', labels: { env: 'dev' } });
      const c = await createWidget({}, { name: 'alpine', labels: { env: 'prod' } });
      const list = (query: string) => api.request('GET', `${widgetsPath()}?${query}`, { token: ws.token });
      const ids = (response: { body: { items: Array<{ metadata: { id: string } }> } }) => response.body.items.map((item) => item.metadata.id);
      const first = await list('limit=2');
      assert.deepEqual(ids(first), [a.metadata.id, b.metadata.id]);
      const second = await list(`limit=2&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
      assert.deepEqual(ids(second), [c.metadata.id]);
      assert.equal(second.body.pagination.nextCursor, '');
      assert.deepEqual(ids(await list('prefix=alp')), [a.metadata.id, c.metadata.id]);
      assert.deepEqual(ids(await list('labels=env%3Ddev')), [b.metadata.id]);
      assert.deepEqual(ids(await list(`agentId=${otherAgent}`)), [b.metadata.id]);
      assert.deepEqual(ids(await list('sortOrder=desc')), [c.metadata.id, b.metadata.id, a.metadata.id]);
      assertError(await list('agentId=nope'), 400, Code.INVALID_ARGUMENT, /agentId/);
      assertError(await list('limit=0'), 400, Code.INVALID_ARGUMENT, /limit/);
    });
  });

  describe('GET /v1/workspaces/{ws}/widgets/{id}', () => {
    it('answers the widget, and NOT_FOUND for another workspace\'s', async () => {
      const widget = await createWidget();
      const got = await api.request('GET', `${widgetsPath()}/${widget.metadata.id}`, { token: ws.token });
      assert.deepEqual(got.body, widget);
      const other = await ws.otherWorkspace();
      assertError(await api.request('GET', `${widgetsPath(other.workspaceId)}/${widget.metadata.id}`, { token: other.token }), 404, Code.NOT_FOUND, `widget ${widget.metadata.id} not found`);
    });
  });

  describe('PATCH /v1/workspaces/{ws}/widgets/{id}', () => {
    it('changes the fields present, or those of the mask (a masked absent field returns to its default)', async () => {
      const widget = await createWidget({ title: 'Help', theme: 'THEME_DARK', allowVisitorApprovals: true }, { name: 'w', labels: { a: '1' } });
      const hostname = uniqueHostname();
      const changed = await patch(widget.metadata.id, { spec: { hostname: hostname.toUpperCase(), greeting: 'Hello' }, metadata: { labels: { b: '2' } } });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(changed.body.spec.hostname, hostname);
      assert.equal(changed.body.spec.greeting, 'Hello');
      assert.equal(changed.body.spec.title, 'Help');
      assert.deepEqual(changed.body.metadata.labels, { b: '2' });
      const masked = await patch(widget.metadata.id, { spec: { title: 'New' }, updateMask: 'spec.title,spec.theme,spec.allowVisitorApprovals' });
      assert.equal(masked.status, 200, JSON.stringify(masked.body));
      assert.equal(masked.body.spec.title, 'New');
      assert.equal(masked.body.spec.theme, 'THEME_AUTO');
      assert.equal(masked.body.spec.allowVisitorApprovals, false);
      assert.equal(masked.body.spec.greeting, 'Hello');
      assertError(await patch(widget.metadata.id, { updateMask: 'spec.hostname' }), 400, Code.INVALID_ARGUMENT, 'spec.hostname: is required');
      assertError(await patch(widget.metadata.id, { updateMask: 'spec.allowedOrigins' }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins: must name at least one/);
      assertError(await patch(widget.metadata.id, { updateMask: 'spec.color' }), 400, Code.INVALID_ARGUMENT, /^updateMask: "spec\.color" is not an updatable field/);
      assertError(await patch(widget.metadata.id, { spec: { agentId: missingId('agent') } }), 404, Code.NOT_FOUND, /^spec\.agentId: /);
      assertError(await patch(widget.metadata.id, { spec: { allowedOrigins: ['https://a.example.com/x'] } }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins\[0\]/);
      assertError(await patch(widget.metadata.id, { spec: { allowedOrigins: ['https://ok.example.com', 'http://my_site.com'] } }), 400, Code.INVALID_ARGUMENT, /^spec\.allowedOrigins\[1\]: must have a host/);
    });

    it("refuses the service's own API hostname, and keeps the widget's", async () => {
      const widget = await createWidget();
      assertError(await patch(widget.metadata.id, { spec: { hostname: API_HOSTNAME } }), 400, Code.INVALID_ARGUMENT, "spec.hostname: is this service's own API hostname");
      assert.equal((await api.request('GET', `${widgetsPath()}/${widget.metadata.id}`, { token: ws.token })).body.spec.hostname, widget.spec.hostname);
    });

    it("answers ALREADY_EXISTS for another widget's hostname, and keeps its own", async () => {
      const first = await createWidget();
      const second = await createWidget();
      assertError(await patch(second.metadata.id, { spec: { hostname: first.spec.hostname } }), 409, Code.ALREADY_EXISTS, /hostname already exists/);
      const same = await patch(first.metadata.id, { spec: { hostname: first.spec.hostname } });
      assert.equal(same.status, 200, JSON.stringify(same.body));
    });

    it('honours If-Match', async () => {
      const widget = await createWidget();
      assertError(await patch(widget.metadata.id, { spec: { title: 'x' } }, { 'If-Match': '2020-01-01T00:00:00.000Z' }), 409, Code.ABORTED, /was modified/);
      const ok = await patch(widget.metadata.id, { spec: { title: 'x' } }, { 'If-Match': widget.metadata.updatedAt });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });
  });

  describe('DELETE /v1/workspaces/{ws}/widgets/{id}', () => {
    it('deletes the widget and frees its hostname', async () => {
      const widget = await createWidget();
      const path = `${widgetsPath()}/${widget.metadata.id}`;
      const deleted = await api.request('DELETE', path, { token: ws.token });
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, {});
      assertError(await api.request('GET', path, { token: ws.token }), 404, Code.NOT_FOUND, `widget ${widget.metadata.id} not found`);
      assertError(await api.request('DELETE', path, { token: ws.token }), 404, Code.NOT_FOUND, `widget ${widget.metadata.id} not found`);
      await createWidget({ hostname: widget.spec.hostname });
    });
  });

  const routes: GuardedRoute[] = [
    { method: 'GET', path: (w) => widgetsPath(w), scope: 'widgets:read', idKeys: [] },
    { method: 'POST', path: (w) => widgetsPath(w), scope: 'widgets:manage', idKeys: [] },
    { method: 'GET', path: (w, ids) => `${widgetsPath(w)}/${ids.id}`, scope: 'widgets:read', idKeys: ['id'] },
    { method: 'PATCH', path: (w, ids) => `${widgetsPath(w)}/${ids.id}`, scope: 'widgets:manage', idKeys: ['id'] },
    { method: 'DELETE', path: (w, ids) => `${widgetsPath(w)}/${ids.id}`, scope: 'widgets:manage', idKeys: ['id'] },
    { method: 'POST', path: (w, ids) => `${widgetsPath(w)}/${ids.widgetId}/sessions`, scope: 'widget_sessions:manage', idKeys: ['widgetId'] },
    { method: 'DELETE', path: (w, ids) => `${widgetsPath(w)}/${ids.widgetId}/sessions/${ids.sessionId}`, scope: 'widget_sessions:manage', idKeys: ['widgetId', 'sessionId'] },
  ];
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const make = async (workspaceId: string, token: string) => {
      const agent = (await createAgent(api, token, workspaceId)).metadata.id;
      const widget = await api.request('POST', widgetsPath(workspaceId), { token, body: { metadata: { name: 'w' }, spec: { agentId: agent, hostname: uniqueHostname(), allowedOrigins: ORIGINS } } });
      assert.equal(widget.status, 200, JSON.stringify(widget.body));
      const session = await api.request('POST', `${widgetsPath(workspaceId)}/${widget.body.metadata.id}/sessions`, { token, body: {} });
      assert.equal(session.status, 200, JSON.stringify(session.body));
      return { id: widget.body.metadata.id, widgetId: widget.body.metadata.id, sessionId: session.body.sessionId };
    };
    return { ws: fixture, ids: await make(fixture.workspaceId, fixture.token), foreignIds: await make(other.workspaceId, other.token) };
  }, routes);
});
