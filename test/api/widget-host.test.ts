// The widget host (issue 26 item 3), through real HTTP with a Host header, the
// embedded runtime and builtin/scripted: the page and loader answer only on a
// widget's hostname (with its CSP), the API never does there and the widget
// routes never on the API's host; CORS answers only the widget's origins; a
// session creates objectives, streams their events to FINALIZED and resumes
// with Last-Event-ID; a session sees only its own objectives (not their
// sub-objectives); bad tokens are UNAUTHENTICATED, an archived or disabled
// workspace's sessions PERMISSION_DENIED; a widget whose agent was deleted
// starts nothing (FAILED_PRECONDITION) until repointed; approvals need
// allowVisitorApprovals; visitor limits count per node; a session's secrets
// reach its objectives' tools (over the workspace's) and nothing else.
//
// Widgets and sessions are the widgets area's own (POST …/widgets, POST
// …/widgets/{id}/sessions): real tokens, minted and verified as in production.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { newId } from '../../src/ids';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { eventually } from '../support/cluster-harness';
import { eventuallyValue } from '../support/eventually';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */

interface HostResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  text: string;
  body: any;
}

/** A request to the test server naming `host` (node:http: fetch will not send a Host of our choosing). */
function hostRequest(url: string, host: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<HostResponse> {
  const { port } = new URL(url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { host: `${host}:${port}`, ...options.headers };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // a page, a script, an event stream
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, raw, text, body });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

/** Asserts `response` is the API's answer to `GET /` (the links to its reference), never the widget's chat page. */
function assertApiRoot(response: HostResponse, label: string): void {
  assert.equal(response.status, 200, `${label}: ${response.text.slice(0, 300)}`);
  assert.match(String(response.headers['content-type']), /^application\/json/, label);
  assert.equal(response.body.docs, '/docs', label);
  assert.equal(response.body.openapi, '/v1/openapi.json', label);
}

/** The `id:`/`data:` messages of an event stream's text. */
function sseEvents(text: string): Array<{ id: number; data: any }> {
  return text.split('\n\n').filter((block) => block.startsWith('id: ')).map((block) => {
    const [idLine, dataLine] = block.split('\n');
    return { id: Number(idLine.slice('id: '.length)), data: JSON.parse(dataLine.slice('data: '.length)) };
  });
}

describe('widget host', function () {
  this.timeout(30_000);
  const ALLOWED = 'https://shop.example.com';
  const OTHER = 'https://evil.example.net';
  const suffix = randomBytes(4).toString('hex');
  const HOST = `chat-${suffix}.widgets.test`;
  const APPROVING_HOST = `approve-${suffix}.widgets.test`;
  /** The API's own hostname (AGENTRT_PUBLIC_URL). */
  const API_HOST = `api-${suffix}.agentrt.test`;
  const SESSION_SECRET = `session-crm-${suffix}`;
  const WORKSPACE_SECRET = `workspace-crm-${suffix}`;
  /** In the `lookup` tool's answer (its URL, echoed), never in what the visitor sends. */
  const RESULT_MARKER = `tool-answer-marker-${suffix}`;
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let agentId: string;
  let crmToolId: string;
  let lookupToolId: string;
  const widgetIds = new Map<string, string>();

  /** Mints a session of the widget served on `host`; `ttlSeconds: 1` and a wait past its expiry makes an expired token. */
  const mintSession = async (host: string, body: Record<string, unknown> = {}) => {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/widgets/${widgetIds.get(host)}/sessions`, { token: ws.token, body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { token: string; sessionId: string; expiresAt: string };
  };
  const widgets = {
    mint: (host: string, options: { secrets?: Record<string, string> } = {}) => mintSession(host, options.secrets ? { secrets: options.secrets } : {}),
  };

  const widget = (host: string, token: string | undefined, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}) =>
    hostRequest(api.url, host, method, path, { ...options, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers } });
  const apiHost = (method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}) => hostRequest(api.url, '127.0.0.1', method, path, options);
  /** Creates an objective as `token`'s session and waits for it to end. */
  const runAs = async (token: string, content: string, host = HOST) => {
    const response = await widget(host, token, 'POST', '/api/objectives', { body: { content } });
    assert.equal(response.status, 201, response.text);
    const id = response.body.id as string;
    let view: any;
    await eventually(async () => {
      view = (await widget(host, token, 'GET', `/api/objectives/${id}`)).body;
      return TERMINAL_OBJECTIVE_STATUSES.includes(view.status);
    }, 'objective finished', 15_000);
    return { id, view };
  };
  const eventsOf = async (id: string) => (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events?limit=1000`, { token: ws.token })).body.items as any[];

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_PUBLIC_URL: `https://${API_HOST}` } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    await created(api, ws.token, '/v1/workspace_secrets', { metadata: { name: 'CRM_TOKEN' }, spec: { value: WORKSPACE_SECRET } });
    const tool = async (name: string, spec: Record<string, unknown>) => created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name }, spec });
    const assign = (body: Record<string, unknown>) => created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, body);
    const crm = await tool('crm', { description: 'Echoes with the CRM token', http: { url: `${tools.url}/echo`, method: 'POST', headers: { authorization: 'Bearer {{secrets.CRM_TOKEN}}' } } });
    const refund = await tool('refund', { description: 'Refunds an order', http: { url: `${tools.url}/echo`, method: 'POST' } });
    const lookup = await tool('lookup', { description: 'Looks a customer up', http: { url: `${tools.url}/echo?marker=${RESULT_MARKER}`, method: 'POST' } });
    crmToolId = crm.metadata.id;
    lookupToolId = lookup.metadata.id;
    await assign({ toolId: crm.metadata.id });
    await assign({ toolId: lookup.metadata.id });
    await assign({ toolId: refund.metadata.id, requiresApproval: true });
    const widget = async (hostname: string, spec: Record<string, unknown>) => {
      const body = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: hostname.split('.')[0] }, spec: { agentId, hostname, allowedOrigins: [ALLOWED], greeting: 'Hello!', theme: 'THEME_LIGHT', ...spec },
      });
      widgetIds.set(hostname, body.metadata.id);
    };
    await widget(HOST, { title: 'Help </script><script>alert(1)</script>' });
    await widget(APPROVING_HOST, { title: 'Help', allowVisitorApprovals: true });
  });

  after(async () => {
    await api?.close();
    await tools?.close();
  });

  describe('routing by Host', () => {
    it('serves the chat page on a widget hostname, with frame-ancestors of its origins and its settings inlined, escaped', async () => {
      const page = await widget(HOST.toUpperCase(), undefined, 'GET', '/');
      assert.equal(page.status, 200, page.text);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(String(page.headers['content-security-policy']), new RegExp(`frame-ancestors ${ALLOWED}(;|$)`));
      assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
      const block = /<script type="application\/json" id="agentrt-widget-config">(.*?)<\/script>/.exec(page.text);
      assert.ok(block, page.text);
      assert.deepEqual(JSON.parse(block[1]), {
        title: 'Help </script><script>alert(1)</script>', greeting: 'Hello!', theme: 'THEME_LIGHT', allowVisitorApprovals: false, apiBase: '/api',
      });
      assert.doesNotMatch(page.text, /<script>alert/);
    });

    it('serves the loader and the page\'s assets, compressed when accepted, with ETags that revalidate', async () => {
      const loader = await widget(HOST, undefined, 'GET', '/widget.js');
      assert.equal(loader.status, 200);
      assert.match(String(loader.headers['content-type']), /^text\/javascript/);
      assert.match(String(loader.headers['content-security-policy']), new RegExp(`frame-ancestors ${ALLOWED}$`));
      const page = await widget(HOST, undefined, 'GET', '/');
      const brotli = await widget(HOST, undefined, 'GET', '/', { headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(brotli.headers['content-encoding'], 'br');
      assert.equal(brotliDecompressSync(brotli.raw).toString('utf8'), page.text);
      const gzip = await widget(HOST, undefined, 'GET', '/', { headers: { 'accept-encoding': 'gzip, br;q=0' } });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gzip.raw).toString('utf8'), page.text);
      assert.equal(page.headers['content-encoding'], undefined);
      assert.match(String(page.headers.vary), /Accept-Encoding/i);
      const again = await widget(HOST, undefined, 'GET', '/', { headers: { 'if-none-match': String(page.headers.etag) } });
      assert.equal(again.status, 304);
      assert.equal((await widget(HOST, undefined, 'GET', '/', { headers: { 'if-none-match': '*' } })).status, 304, 'any current representation matches *');
      assert.equal((await widget(HOST, undefined, 'GET', '/', { headers: { 'if-none-match': '"other"' } })).status, 200);
      const css = await widget(HOST, undefined, 'GET', '/assets/chat.css');
      assert.equal(css.status, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.ok(css.headers.etag);
    });

    it('serves no file outside the allow-list (no path traversal)', async () => {
      for (const path of ['/assets/../widget-host.ts', '/assets/%2e%2e%2fwidget-host.ts', '/assets/..%2Fassets.ts', '/assets/chat.html', '/assets/.hidden', '/assets/nope.js']) {
        const response = await widget(HOST, undefined, 'GET', path);
        assert.equal(response.status, 404, `${path}: ${response.text}`);
        assert.equal(response.body.code, 5);
      }
    });

    it('serves neither the page, the loader nor the widget routes on the API host', async () => {
      assertApiRoot(await apiHost('GET', '/'), 'GET / on the API host');
      for (const path of ['/widget.js', '/assets/chat.css']) assert.equal((await apiHost('GET', path)).status, 404, path);
      const { token } = await widgets.mint(HOST);
      const create = await apiHost('POST', '/api/objectives', { headers: { authorization: `Bearer ${token}` }, body: { content: 'hi' } });
      assert.equal(create.status, 404);
      assert.equal((await apiHost('GET', '/v1/workspace_secrets', { headers: { authorization: `Bearer ${ws.token}` } })).status, 200);
    });

    it("leaves the API's own hostname (AGENTRT_PUBLIC_URL's) to the API, even when a widget row names it", async () => {
      // The widgets area refuses that hostname; a row from before (or written behind its back) must not take the API over.
      const created = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/widgets`, {
        token: ws.token, body: { metadata: { name: 'squatter' }, spec: { agentId, hostname: `squat-${suffix}.widgets.test`, allowedOrigins: [ALLOWED] } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      await api.dataSource.query('UPDATE widgets SET hostname = $1 WHERE id = $2', [API_HOST, created.body.metadata.id]);
      (api.services.widgetSessions as any).forgetHostname(API_HOST);
      try {
        for (const host of [API_HOST, API_HOST.toUpperCase()]) {
          const response = await hostRequest(api.url, host, 'GET', '/v1/workspace_secrets', { headers: { authorization: `Bearer ${ws.token}` } });
          assert.equal(response.status, 200, `${host}: ${response.text}`);
          assertApiRoot(await hostRequest(api.url, host, 'GET', '/'), host);
          assert.equal((await hostRequest(api.url, host, 'GET', '/widget.js')).status, 404, host);
        }
      } finally {
        await api.dataSource.query('DELETE FROM widgets WHERE id = $1', [created.body.metadata.id]);
      }
    });

    it('recognises a widget hostname with one trailing dot', async () => {
      const page = await widget(`${HOST}.`, undefined, 'GET', '/');
      assert.equal(page.status, 200, page.text);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      const { token } = await widgets.mint(HOST);
      const missing = await widget(`${HOST}.`, token, 'GET', `/api/objectives/${newId('objective')}`);
      assert.equal(missing.status, 404, missing.text);
      assert.equal(missing.body.code, 5);
      assertApiRoot(await widget(`${HOST}..`, undefined, 'GET', '/'), 'two trailing dots name no widget');
    });

    it('leaves every path but its own to the API whatever the Host: a widget named after the hostname the API is reached by takes none of the API', async () => {
      // The API is reached as TAKEN too, which is not AGENTRT_PUBLIC_URL's (as when that is unset): any account may name a widget after it.
      const taken = `api-${suffix}.example.com`;
      const made = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: 'takeover' }, spec: { agentId, hostname: taken, allowedOrigins: [ALLOWED] },
      });
      try {
        const globalKey = { authorization: `Bearer ${ws.account.globalApiKey.token}` };
        const onTaken = (method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}) => hostRequest(api.url, taken, method, path, options);
        const account = await onTaken('GET', '/v1/account', { headers: globalKey });
        assert.equal(account.status, 200, account.text);
        assert.deepEqual(account.body, (await apiHost('GET', '/v1/account', { headers: globalKey })).body);
        for (const path of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/docs', '/docs/swagger-ui-bundle.js']) {
          const response = await onTaken('GET', path);
          assert.equal(response.status, 200, `${path}: ${response.text.slice(0, 300)}`);
          assert.equal(response.headers['content-type'], (await apiHost('GET', path)).headers['content-type'], path);
        }
        const secrets = await onTaken('GET', '/v1/workspace_secrets', { headers: { authorization: `Bearer ${ws.token}` } });
        assert.equal(secrets.status, 200, secrets.text);
        const nowhere = await onTaken('GET', `/nowhere-${suffix}`);
        assert.equal(nowhere.status, 404);
        assert.equal(nowhere.body.message, `no route for GET /nowhere-${suffix}`, 'the API answers it, as on any Host');
        // The widget host's own paths stay the widget's.
        const page = await onTaken('GET', '/');
        assert.equal(page.status, 200, page.text);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.equal((await onTaken('GET', '/widget.js')).status, 200);
        assert.equal((await onTaken('GET', `/api/objectives/${newId('objective')}`)).body.code, 16, 'the widget\'s /api asks for its session token');
      } finally {
        await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/widgets/${made.metadata.id}`, { token: ws.token });
      }
    });

    it('answers a widget path no widget route serves with NOT_FOUND, never the API', async () => {
      const { token } = await widgets.mint(HOST);
      for (const path of ['/api/nothing-here', '/api', '/assets/nothing.css']) {
        const response = await widget(HOST, token, 'GET', path);
        assert.equal(response.status, 404, `${path}: ${response.text}`);
        assert.equal(response.body.message, `no ${path.startsWith('/assets/') ? 'widget asset "nothing.css"' : `widget route for GET ${path}`}`);
      }
    });

    it('reads the database for an API hostname at most once per memo period, not once per request', async () => {
      const store = (api.services.widgetSessions as any).store.widgets;
      const findByHostname = store.findByHostname;
      const looked: string[] = [];
      store.findByHostname = (hostname: string) => (looked.push(hostname), findByHostname.call(store, hostname));
      try {
        for (let i = 0; i < 5; i += 1) assert.equal((await api.request('GET', '/v1/workspace_secrets', { token: ws.token })).status, 200);
      } finally {
        store.findByHostname = findByHostname;
      }
      assert.ok(looked.length <= 1, `database lookups: ${looked.length}`);
    });
  });

  describe('metrics', () => {
    it('labels widget requests by route template, never by path', async () => {
      const { token } = await widgets.mint(HOST);
      const { id } = await runAs(token, 'SAY hi');
      await widget(HOST, undefined, 'GET', '/assets/chat.css');
      await widget(HOST, undefined, 'GET', `/scanner-${suffix}`);
      const metrics = await apiHost('GET', '/metrics');
      assert.equal(metrics.status, 200);
      assert.match(metrics.text, /route="widget \/api\/objectives\/:id"/);
      assert.match(metrics.text, /route="widget \/assets\/\{file\}"/);
      assert.ok(!metrics.text.includes(id) && !metrics.text.includes(`scanner-${suffix}`), 'a path in a label');
    });
  });

  describe('CORS', () => {
    it('answers a preflight from an allowed origin with the methods and headers', async () => {
      const response = await widget(HOST, undefined, 'OPTIONS', '/api/objectives', {
        headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers['access-control-allow-origin'], ALLOWED);
      assert.match(String(response.headers['access-control-allow-methods']), /POST/);
      assert.match(String(response.headers['access-control-allow-headers']), /Authorization/);
      assert.match(String(response.headers['access-control-allow-headers']), /Last-Event-ID/);
    });

    it('gives another origin no CORS header, on a preflight or a simple request', async () => {
      const preflight = await widget(HOST, undefined, 'OPTIONS', '/api/objectives', { headers: { origin: OTHER, 'access-control-request-method': 'POST' } });
      assert.equal(preflight.status, 403);
      const { token } = await widgets.mint(HOST);
      const { id } = await runAs(token, 'SAY hi');
      const other = await widget(HOST, token, 'GET', `/api/objectives/${id}`, { headers: { origin: OTHER } });
      const allowed = await widget(HOST, token, 'GET', `/api/objectives/${id}`, { headers: { origin: ALLOWED } });
      for (const response of [preflight, other]) {
        assert.equal(Object.keys(response.headers).filter((name) => name.startsWith('access-control-')).length, 0, JSON.stringify(response.headers));
      }
      assert.equal(allowed.headers['access-control-allow-origin'], ALLOWED);
      assert.match(String(allowed.headers.vary), /Origin/);
    });

    it('names the allowed origin on an error too, so the page can read why', async () => {
      const response = await widget(HOST, 'garbage', 'GET', '/api/objectives/obj_x', { headers: { origin: ALLOWED } });
      assert.equal(response.status, 401);
      assert.equal(response.headers['access-control-allow-origin'], ALLOWED);
    });
  });

  describe('a session\'s objectives', () => {
    it('creates an objective and streams its events to FINALIZED; Last-Event-ID resumes without repeats', async () => {
      const { token } = await widgets.mint(HOST);
      const { id, view } = await runAs(token, 'SAY Hello visitor');
      assert.deepEqual(Object.keys(view).sort(), ['createdAt', 'error', 'finishedAt', 'id', 'lastMessage', 'pendingToolCallIds', 'status']);
      assert.equal(view.status, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(view.lastMessage, 'Hello visitor');
      const stream = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`);
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const events = sseEvents(stream.text);
      assert.ok(events.length >= 3, stream.text);
      assert.deepEqual(events.map((event) => event.id), events.map((_, index) => index + 1));
      assert.equal(events.at(-1)!.data.data.type, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
      const resumed = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`, { headers: { 'last-event-id': '1' } });
      assert.deepEqual(sseEvents(resumed.text).map((event) => event.id), events.slice(1).map((event) => event.id));
      const done = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`, { headers: { 'last-event-id': String(events.at(-1)!.id) } });
      assert.equal(done.status, 204);
    });

    it('runs the widget\'s agent with the session\'s tenant and subject, the session named on the row', async () => {
      const session = await mintSession(HOST, { tenant: { externalId: `acme-${suffix}` }, subject: { externalId: `visitor-${suffix}` } }) as any;
      const { id } = await runAs(session.token, 'SAY hi');
      const objective = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}`, { token: ws.token })).body;
      assert.equal(objective.spec.agentId, agentId);
      assert.equal(objective.spec.tenantId, session.tenantId);
      assert.equal(objective.spec.subjectId, session.subjectId);
      assert.ok(session.tenantId && session.subjectId, JSON.stringify(session));
      const [{ sessionId }] = await api.dataSource.query('SELECT widget_session_id AS "sessionId" FROM objectives WHERE id = $1', [id]);
      assert.equal(sessionId, session.sessionId);
      // The profile that minted the session (the workspace key's) is the objective's.
      const [{ profileId }] = await api.dataSource.query('SELECT profile_id AS "profileId" FROM widget_sessions WHERE id = $1', [session.sessionId]);
      assert.ok(profileId);
      assert.equal(objective.metadata.profileId, profileId);
    });

    it('tells the visitor of a failed objective in plain words, never the internal error', async () => {
      const { token } = await widgets.mint(HOST);
      const { view } = await runAs(token, 'FAIL upstream answered 502 at http://10.0.0.7/internal');
      assert.equal(view.status, 'OBJECTIVE_STATUS_FAILED');
      assert.deepEqual(view.error, { message: 'Sorry, something went wrong.' });
    });

    it('takes a follow-up message', async () => {
      const { token } = await widgets.mint(HOST);
      const { id } = await runAs(token, 'SAY first');
      const sent = await widget(HOST, token, 'POST', `/api/objectives/${id}/messages`, { body: { content: 'SAY second' } });
      assert.equal(sent.status, 200, sent.text);
      await eventually(async () => (await widget(HOST, token, 'GET', `/api/objectives/${id}`)).body.lastMessage === 'second', 'follow-up answered', 15_000);
    });

    it('shows a session only its own objectives: another\'s is NOT_FOUND', async () => {
      const mine = await widgets.mint(HOST);
      const theirs = await widgets.mint(HOST);
      const { id } = await runAs(mine.token, 'SAY mine');
      for (const [method, path, body] of [
        ['GET', `/api/objectives/${id}`], ['GET', `/api/objectives/${id}/events/stream`], ['POST', `/api/objectives/${id}/messages`, { content: 'hi' }],
      ] as const) {
        const response = await widget(HOST, theirs.token, method, path, body ? { body } : {});
        assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
        assert.equal(response.body.code, 5);
      }
      const row = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}`, { token: ws.token });
      assert.equal(row.status, 200);
    });

    it('refuses a missing, garbage, expired or other widget\'s token with UNAUTHENTICATED', async () => {
      const foreign = await widgets.mint(APPROVING_HOST);
      const expired = await mintSession(HOST, { ttlSeconds: 1 });
      // Past its expiry (whole seconds), waited for, not timed.
      while (Date.now() <= Date.parse(expired.expiresAt)) await new Promise((resolve) => setTimeout(resolve, Date.parse(expired.expiresAt) - Date.now() + 10));
      for (const token of [undefined, 'garbage', expired.token, foreign.token]) {
        const response = await widget(HOST, token, 'POST', '/api/objectives', { body: { content: 'SAY hi' } });
        assert.equal(response.status, 401, `${token}: ${response.text}`);
        assert.equal(response.body.code, 16);
        if (token) assert.ok(!response.text.includes(token));
      }
    });

    /** A widget and a session of it in a new workspace, whose token answers until `retire` changes the workspace's status. */
    const sessionOfOtherWorkspace = async (label: string) => {
      const other = await ws.otherWorkspace();
      const otherAgent = (await createAgent(api, other.token, other.workspaceId)).metadata.id;
      const host = `${label}-${suffix}.widgets.test`;
      const made = await api.request('POST', `/v1/workspaces/${other.workspaceId}/widgets`, {
        token: other.token, body: { metadata: { name: label }, spec: { agentId: otherAgent, hostname: host, allowedOrigins: [ALLOWED] } },
      });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const sessionsPath = `/v1/workspaces/${other.workspaceId}/widgets/${made.body.metadata.id}/sessions`;
      const minted = await api.request('POST', sessionsPath, { token: other.token, body: {} });
      assert.equal(minted.status, 200, JSON.stringify(minted.body));
      const missing = `/api/objectives/${newId('objective')}`;
      assert.equal((await widget(host, minted.body.token, 'GET', missing)).status, 404);
      return { workspaceId: other.workspaceId, keyToken: other.token, host, sessionsPath, token: minted.body.token as string, missing };
    };
    /** The page's /api requests (loading its conversation, starting one) are refused as `message` says. */
    const refusedOnWidgetHost = async (session: Awaited<ReturnType<typeof sessionOfOtherWorkspace>>, message: string) => {
      for (const [method, path, body] of [['GET', session.missing], ['POST', '/api/objectives', { content: 'SAY hi' }]] as const) {
        const response = await widget(session.host, session.token, method, path, body ? { body } : {});
        assert.equal(response.status, 403, `${method} ${path}: ${response.text}`);
        assert.equal(response.body.code, 7);
        assert.equal(response.body.message, message);
        assert.ok(!response.text.includes(session.token));
      }
    };

    it('refuses the sessions of an archived workspace with PERMISSION_DENIED, as the API does', async () => {
      const session = await sessionOfOtherWorkspace('archived');
      assert.equal((await api.request('DELETE', `/v1/account/workspaces/${session.workspaceId}`, { token: ws.account.globalApiKey.token })).status, 200);
      await refusedOnWidgetHost(session, `workspace ${session.workspaceId} is archived`);
    });

    it('refuses the sessions of a disabled workspace, and minting, with PERMISSION_DENIED, as the API refuses its keys', async () => {
      const session = await sessionOfOtherWorkspace('disabled');
      // No API call disables a workspace: an operator does, in the database.
      await api.dataSource.query("UPDATE workspaces SET status = 'STATUS_DISABLED' WHERE id = $1", [session.workspaceId]);
      const message = `workspace ${session.workspaceId} is disabled`;
      // Every widget request reads the workspace's status; an API key remembers it for up to a second (CREDENTIAL_TTL_MS).
      await refusedOnWidgetHost(session, message);
      const mint = await eventuallyValue(async () => {
        const response = await api.request('POST', session.sessionsPath, { token: session.keyToken, body: {} });
        return response.status !== 200 && response;
      }, 'minting refused', 5_000);
      assert.equal(mint.status, 403, JSON.stringify(mint.body));
      assert.equal(mint.body.code, 7);
      assert.equal(mint.body.message, message);
    });

    it('keeps a widget whose agent was deleted: minting and new conversations are FAILED_PRECONDITION until spec.agentId names another agent', async () => {
      const host = `orphan-${suffix}.widgets.test`;
      const agentWithVariation = async (name: string) => {
        const id = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
        await createVariation(api, ws.token, ws.workspaceId, id, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
        return id;
      };
      const doomed = await agentWithVariation(`doomed-${suffix}`);
      const orphan = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: `orphan-${suffix}` }, spec: { agentId: doomed, hostname: host, allowedOrigins: [ALLOWED] },
      });
      widgetIds.set(host, orphan.metadata.id);
      const widgetPath = `/v1/workspaces/${ws.workspaceId}/widgets/${orphan.metadata.id}`;
      const earlier = await widgets.mint(host);
      const conversation = await runAs(earlier.token, 'SAY before', host);

      assert.equal((await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/agents/${doomed}`, { token: ws.token })).status, 200, 'a widget never blocks deleting its agent');
      const kept = await api.request('GET', widgetPath, { token: ws.token });
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.equal(kept.body.spec.agentId, doomed);

      const mint = await api.request('POST', `${widgetPath}/sessions`, { token: ws.token, body: {} });
      assert.equal(mint.status, 400, JSON.stringify(mint.body));
      assert.equal(mint.body.code, 9);
      assert.equal(mint.body.message, `the widget's agent ${doomed} was deleted; point the widget's spec.agentId at another agent, or delete the widget`);
      const started = await widget(host, earlier.token, 'POST', '/api/objectives', { body: { content: 'SAY after' } });
      assert.equal(started.status, 400, started.text);
      assert.equal(started.body.code, 9);
      assert.equal(started.body.message, "the widget's agent was deleted; this chat cannot start a conversation");
      // A conversation begun before goes on: the objective runs what it resolved when it started.
      const followUp = await widget(host, earlier.token, 'POST', `/api/objectives/${conversation.id}/messages`, { body: { content: 'SAY still here' } });
      assert.equal(followUp.status, 200, followUp.text);
      await eventually(async () => (await widget(host, earlier.token, 'GET', `/api/objectives/${conversation.id}`)).body.lastMessage === 'still here', 'follow-up answered', 15_000);

      const toDeleted = await api.request('PATCH', widgetPath, { token: ws.token, body: { spec: { agentId: doomed } } });
      assert.equal(toDeleted.status, 404, JSON.stringify(toDeleted.body));
      assert.equal(toDeleted.body.message, `spec.agentId: agent ${doomed} not found in the workspace`);
      assert.equal(toDeleted.body.details[0].fieldViolations[0].field, 'spec.agentId');
      const successor = await agentWithVariation(`successor-${suffix}`);
      assert.equal((await api.request('PATCH', widgetPath, { token: ws.token, body: { spec: { agentId: successor } } })).status, 200);
      await widgets.mint(host);
      const mended = await runAs(earlier.token, 'SAY after', host);
      assert.equal(mended.view.lastMessage, 'after');
      assert.equal((await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${mended.id}`, { token: ws.token })).body.spec.agentId, successor);
    });

    it('keeps a session\'s sub-objectives (sub-agents) from the visitor: NOT_FOUND on every route, nothing of them in the stream', async () => {
      const host = `subagents-${suffix}.widgets.test`;
      const agentWithVariation = async (name: string) => {
        const id = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
        const variation = await createVariation(api, ws.token, ws.workspaceId, id, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
        return { id, assignments: `/v1/workspaces/${ws.workspaceId}/agents/${id}/variations/${variation.metadata.id}/assignments` };
      };
      const helper = await agentWithVariation(`researcher-${suffix}`);
      await created(api, ws.token, helper.assignments, { toolId: lookupToolId });
      const delegator = await agentWithVariation(`front-desk-${suffix}`);
      await created(api, ws.token, delegator.assignments, { agentId: helper.id });
      const made = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: `subagents-${suffix}` }, spec: { agentId: delegator.id, hostname: host, allowedOrigins: [ALLOWED], allowVisitorApprovals: true },
      });
      widgetIds.set(host, made.metadata.id);
      const { token } = await widgets.mint(host);
      // The child answers with its tool's result, which holds RESULT_MARKER: nothing the visitor wrote.
      const childScript = 'CALL lookup {"customer":"c-sub"}';
      const parent = await runAs(token, `CALL researcher-${suffix} ${JSON.stringify({ prompt: childScript })}\nSAY parent done`, host);
      assert.equal(parent.view.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(parent.view));
      const children = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives?parentObjectiveId=${parent.id}`, { token: ws.token })).body.items as any[];
      assert.equal(children.length, 1, JSON.stringify(children));
      const childId = children[0].metadata.id as string;
      const childEvents = await eventsOf(childId);
      const childCall = childEvents.find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_CALLED')!;
      assert.ok(childCall, 'the child called a tool');
      assert.ok(JSON.stringify(childEvents).includes(RESULT_MARKER), 'the child\'s tool answered with the marker');

      for (const [method, path, body] of [
        ['GET', `/api/objectives/${childId}`], ['GET', `/api/objectives/${childId}/events/stream`],
        ['POST', `/api/objectives/${childId}/messages`, { content: 'SAY hi' }],
        ['PUT', `/api/objectives/${childId}/tool_calls/${childCall.data.toolCalled.toolCallId}/approve`, {}],
        ['PUT', `/api/objectives/${childId}/tool_calls/${childCall.data.toolCalled.toolCallId}/deny`, {}],
      ] as const) {
        const response = await widget(host, token, method, path, body ? { body } : {});
        assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
        assert.equal(response.body.code, 5);
      }
      const stream = await widget(host, token, 'GET', `/api/objectives/${parent.id}/events/stream`);
      assert.equal(stream.status, 200, stream.text);
      const kinds = sseEvents(stream.text).map((event) => String(event.data.data.type).replace('OBJECTIVE_EVENT_TYPE_', ''));
      assert.deepEqual(kinds.filter((kind) => kind.startsWith('SUB_')), [], kinds.join(', '));
      assert.ok(!stream.text.includes(childId), `the visitor's stream names the sub-objective: ${stream.text}`);
      assert.ok(!stream.text.includes(RESULT_MARKER), `the visitor's stream holds the sub-objective's answer: ${stream.text}`);
      // The API's stream of the same objective has all three: they were there to leave out.
      const own = await apiHost('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${parent.id}/events/stream`, { headers: { authorization: `Bearer ${ws.token}` } });
      for (const part of ['OBJECTIVE_EVENT_TYPE_SUB_OBJECTIVE_CREATED', childId, RESULT_MARKER]) assert.ok(own.text.includes(part), `${part} in ${own.text}`);
    });

    it('answers bad input with INVALID_ARGUMENT, never a 500', async () => {
      const { token } = await widgets.mint(HOST);
      for (const body of [{}, { content: '' }, { content: 5 }, { content: 'hi', extra: true }]) {
        const response = await widget(HOST, token, 'POST', '/api/objectives', { body });
        assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      }
      assert.equal((await widget(HOST, token, 'GET', '/api/objectives/not-an-id')).status, 400);
      // The session's own objective, so the 400 is the Last-Event-ID's (an unknown objective is a 404 whatever the header).
      const { id } = await runAs(token, 'SAY hi');
      const badResume = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`, { headers: { 'last-event-id': 'x' } });
      assert.equal(badResume.status, 400, badResume.text);
      assert.equal(badResume.body.code, 3);
      assert.match(badResume.text, /Last-Event-ID/);
      assert.equal((await widget(HOST, token, 'GET', `/api/objectives/${newId('objective')}/events/stream`, { headers: { 'last-event-id': '1' } })).status, 404);
      // No /api route takes a query parameter: one is refused by name (the resume point is the header only), as /v1 refuses an unknown one.
      const v1 = await apiHost('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events/stream?bogus=1`, { headers: { authorization: `Bearer ${ws.token}` } });
      for (const [method, path, body] of [
        ['GET', `/api/objectives/${id}/events/stream?lastEventId=abc`], ['GET', `/api/objectives/${id}?bogus=1`],
        ['POST', '/api/objectives?bogus=1', { content: 'SAY hi' }], ['POST', `/api/objectives/${id}/messages?bogus=1`, { content: 'SAY hi' }],
      ] as const) {
        const response = await widget(HOST, token, method, path, body ? { body } : {});
        assert.equal(response.status, 400, `${method} ${path}: ${response.text}`);
        assert.equal(response.body.code, 3);
        const name = /\?(\w+)=/.exec(path)![1];
        assert.equal(response.body.message, `${name}: is not a known field`);
        assert.deepEqual(response.body.details[0].fieldViolations, [{ field: name, description: 'is not a known field' }]);
      }
      assert.equal(v1.status, 400, v1.text);
      assert.equal(v1.body.message, 'bogus: is not a known field');
      assert.equal((await widget(HOST, token, 'GET', `/api/objectives/${id}`)).body.lastMessage, 'hi', 'nothing was sent');
    });

    it('streams the visitor only what the page shows: no tenant, usage, tool arguments or results; the API\'s stream keeps them', async () => {
      const { token } = await widgets.mint(HOST);
      const marker = RESULT_MARKER;
      const { id, view } = await runAs(token, 'CALL lookup {"customer":"c-9"}\nSAY done');
      assert.equal(view.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(view));
      assert.ok(JSON.stringify(await eventsOf(id)).includes(marker), 'the tool\'s answer (its URL echoed) holds the marker');
      const internal = /"(accountId|workspaceId|profileId|usage|costCents|arguments)"/;
      const stream = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`);
      assert.equal(stream.status, 200, stream.text);
      const events = sseEvents(stream.text);
      assert.doesNotMatch(stream.text, internal);
      assert.ok(!stream.text.includes(marker), `the visitor's stream holds the tool's arguments or answer: ${stream.text}`);
      const kinds = events.map((event) => String(event.data.data.type).replace('OBJECTIVE_EVENT_TYPE_', ''));
      for (const kind of ['USER_MESSAGE', 'ASSISTANT_MESSAGE', 'TOOL_CALLED', 'TOOL_RESULT', 'FINALIZED']) assert.ok(kinds.includes(kind), `${kind} in ${kinds.join(', ')}`);
      const call = events.find((event) => event.data.data.assistantMessage?.toolCalls?.length)!;
      const called = events.find((event) => event.data.data.toolCalled)!;
      assert.match(called.data.data.toolCalled.toolCallId, /^toolcall_/);
      assert.deepEqual(call.data.data.assistantMessage.toolCalls, [{ id: called.data.data.toolCalled.toolCallId, functionName: 'lookup' }], 'the call names the id its TOOL_* events carry');
      const result = events.find((event) => event.data.data.toolResult)!;
      assert.deepEqual(Object.keys(result.data.data.toolResult), ['toolCallId']);
      assert.deepEqual(Object.keys(result.data).sort(), ['createdAt', 'data', 'sequence']);
      assert.ok(events.every((event) => event.id === event.data.sequence));
      const own = await apiHost('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events/stream`, { headers: { authorization: `Bearer ${ws.token}` } });
      assert.equal(own.status, 200, own.text);
      assert.match(own.text, internal);
      assert.ok(own.text.includes(marker), 'the API\'s stream holds the tool\'s answer');
      assert.deepEqual(sseEvents(own.text).map((event) => event.id), events.map((event) => event.id), 'the same sequences (no kind here is left out)');
    });
  });

  describe('approvals', () => {
    /** An objective waiting for the visitor's approval of `refund`. */
    const awaitingApproval = async (host: string, token: string) => {
      const response = await widget(host, token, 'POST', '/api/objectives', { body: { content: 'CALL refund {"order":"o-1"}\nSAY refunded' } });
      assert.equal(response.status, 201, response.text);
      const id = response.body.id as string;
      let view: any;
      await eventually(async () => {
        view = (await widget(host, token, 'GET', `/api/objectives/${id}`)).body;
        return view.pendingToolCallIds.length === 1;
      }, 'approval requested', 15_000);
      return { id, toolCallId: view.pendingToolCallIds[0] as string };
    };

    it('lets the visitor approve a tool call when the widget allows it', async () => {
      const { token } = await widgets.mint(APPROVING_HOST);
      const { id, toolCallId } = await awaitingApproval(APPROVING_HOST, token);
      const approved = await widget(APPROVING_HOST, token, 'PUT', `/api/objectives/${id}/tool_calls/${toolCallId}/approve`, { body: {} });
      assert.equal(approved.status, 200, approved.text);
      await eventually(async () => (await widget(APPROVING_HOST, token, 'GET', `/api/objectives/${id}`)).body.lastMessage === 'refunded', 'approved call ran', 15_000);
    });

    it('lets the visitor deny a tool call when the widget allows it', async () => {
      const { token } = await widgets.mint(APPROVING_HOST);
      const { id, toolCallId } = await awaitingApproval(APPROVING_HOST, token);
      const denied = await widget(APPROVING_HOST, token, 'PUT', `/api/objectives/${id}/tool_calls/${toolCallId}/deny`, { body: { memo: 'not now' } });
      assert.equal(denied.status, 200, denied.text);
      const events = await eventsOf(id);
      assert.ok(events.some((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_DENIED'), JSON.stringify(events.map((event) => event.data.type)));
    });

    it('refuses approvals with PERMISSION_DENIED when the widget does not allow them', async () => {
      const { token } = await widgets.mint(HOST);
      const { id, toolCallId } = await awaitingApproval(HOST, token);
      for (const verb of ['approve', 'deny']) {
        const response = await widget(HOST, token, 'PUT', `/api/objectives/${id}/tool_calls/${toolCallId}/${verb}`, { body: {} });
        assert.equal(response.status, 403, response.text);
        assert.equal(response.body.code, 7);
      }
      assert.deepEqual((await widget(HOST, token, 'GET', `/api/objectives/${id}`)).body.pendingToolCallIds, [toolCallId]);
    });
  });

  describe('visitor limits', () => {
    /** A stream held open (its response begun) until `close`. */
    const holdStream = (token: string, id: string, node = api) => new Promise<{ status: number; headers: http.IncomingHttpHeaders; close: () => void }>((resolve, reject) => {
      const { port } = new URL(node.url);
      const request = http.request({ host: '127.0.0.1', port, method: 'GET', path: `/api/objectives/${id}/events/stream`, headers: { host: `${HOST}:${port}`, authorization: `Bearer ${token}` } }, (response) => {
        response.on('error', () => undefined);
        response.resume();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, close: () => request.destroy() });
      });
      request.on('error', reject);
      request.end();
    });
    /** An objective that stays open: it waits for an approval nobody gives. */
    const waiting = async (token: string) => {
      const response = await widget(HOST, token, 'POST', '/api/objectives', { body: { content: 'CALL refund {"order":"o-wait"}\nSAY refunded' } });
      assert.equal(response.status, 201, response.text);
      return response.body.id as string;
    };

    it('refuses a session\'s 11th objective in a minute with RESOURCE_EXHAUSTED and Retry-After', async () => {
      const { token } = await widgets.mint(HOST);
      for (let n = 1; n <= 10; n++) {
        const response = await widget(HOST, token, 'POST', '/api/objectives', { body: { content: `SAY ${n}` } });
        assert.equal(response.status, 201, `create ${n}: ${response.text}`);
      }
      const refused = await widget(HOST, token, 'POST', '/api/objectives', { body: { content: 'SAY 11' } });
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.code, 8);
      assert.ok(Number(refused.headers['retry-after']) >= 1, JSON.stringify(refused.headers));
      const other = await widgets.mint(HOST);
      assert.equal((await widget(HOST, other.token, 'POST', '/api/objectives', { body: { content: 'SAY other' } })).status, 201, 'another session has its own budget');
    });

    it('refuses a session\'s third open event stream with RESOURCE_EXHAUSTED and Retry-After, and frees a slot when a stream closes', async () => {
      const { token } = await widgets.mint(HOST);
      const id = await waiting(token);
      const first = await holdStream(token, id);
      const second = await holdStream(token, id);
      try {
        assert.deepEqual([first.status, second.status], [200, 200]);
        const third = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`);
        assert.equal(third.status, 429, third.text);
        assert.equal(third.body.code, 8);
        assert.ok(Number(third.headers['retry-after']) >= 1, JSON.stringify(third.headers));
        first.close();
        let again: Awaited<ReturnType<typeof holdStream>> | undefined;
        await eventually(async () => {
          const attempt = await holdStream(token, id);
          if (attempt.status === 200) again = attempt;
          else attempt.close();
          return attempt.status === 200;
        }, 'a slot freed by the closed stream', 15_000);
        again!.close();
      } finally {
        first.close();
        second.close();
      }
    });

    it('counts per node: the stream a session is refused on one node opens on another (N nodes allow N times the limits)', async () => {
      // A second node of the same deployment: the same database, no actor runtime of its own (a stream only reads events).
      const otherNode = await startTestApi({ env: { AGENTRT_PUBLIC_URL: `https://${API_HOST}` } });
      const { token } = await widgets.mint(HOST);
      const id = await waiting(token);
      const held = [await holdStream(token, id), await holdStream(token, id)];
      try {
        assert.deepEqual(held.map((stream) => stream.status), [200, 200]);
        const third = await holdStream(token, id);
        held.push(third);
        assert.equal(third.status, 429);
        const elsewhere = await holdStream(token, id, otherNode);
        held.push(elsewhere);
        assert.equal(elsewhere.status, 200, 'the other node keeps its own count');
      } finally {
        for (const stream of held) stream.close();
        await otherNode.close();
      }
    });

    it('ends an event stream when the session\'s token expires', async () => {
      const { token } = await mintSession(HOST, { ttlSeconds: 2 });
      const id = await waiting(token);
      // The objective waits for an approval: only the token's expiry ends this stream.
      const stream = await widget(HOST, token, 'GET', `/api/objectives/${id}/events/stream`);
      assert.equal(stream.status, 200, stream.text);
      assert.ok(sseEvents(stream.text).length > 0, stream.text);
      assert.equal((await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}`, { token: ws.token })).body.info.status, 'OBJECTIVE_STATUS_AWAITING_APPROVAL');
    });
  });

  describe('session secrets', () => {
    it('gives a session\'s tool calls its secret over the workspace\'s, for its objectives only, and shows the value nowhere', async () => {
      const withSecret = await widgets.mint(HOST, { secrets: { CRM_TOKEN: SESSION_SECRET } });
      const without = await widgets.mint(HOST);
      const mine = await runAs(withSecret.token, 'CALL crm {"customer":"c-1"}\nSAY done');
      assert.equal(mine.view.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(mine.view));
      assert.equal(tools.requestsTo('/echo').at(-1)!.headers.authorization, `Bearer ${SESSION_SECRET}`);
      const theirs = await runAs(without.token, 'CALL crm {"customer":"c-2"}\nSAY done');
      assert.equal(theirs.view.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(theirs.view));
      assert.equal(tools.requestsTo('/echo').at(-1)!.headers.authorization, `Bearer ${WORKSPACE_SECRET}`);
      const apiObjective = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, {
        token: ws.token, body: { agentId, initialMessage: 'CALL crm {"customer":"c-3"}\nSAY done' },
      });
      assert.equal(apiObjective.status, 200, JSON.stringify(apiObjective.body));
      await eventually(async () => tools.requestsTo('/echo').at(-1)!.body.includes('c-3'), 'API objective called the tool', 15_000);
      assert.equal(tools.requestsTo('/echo').at(-1)!.headers.authorization, `Bearer ${WORKSPACE_SECRET}`);
      const stream = await widget(HOST, withSecret.token, 'GET', `/api/objectives/${mine.id}/events/stream`);
      const everything = JSON.stringify(await eventsOf(mine.id)) + stream.text + api.logs.join('');
      assert.ok(!everything.includes(SESSION_SECRET), 'the session secret appears in an event, the stream or a log');
      // The runtime's durable rows (journal, snapshots, outbox, commands) name the session, never its secrets.
      for (const table of ['actor_journal', 'actor_snapshots', 'actor_outbox', 'actor_commands', 'objectives', 'objective_events']) {
        const [{ n }] = await api.dataSource.query(`SELECT count(*)::int AS n FROM ${table} t WHERE t::text LIKE $1`, [`%${SESSION_SECRET}%`]);
        assert.equal(n, 0, `${table} holds the session secret`);
      }
      const [{ named }] = await api.dataSource.query('SELECT count(*)::int AS named FROM objectives WHERE id = $1 AND widget_session_id = $2', [mine.id, withSecret.sessionId]);
      assert.equal(named, 1);
    });

    it('gives a sub-agent of a session\'s objective the session\'s secret, not the workspace\'s', async () => {
      const host = `delegate-${suffix}.widgets.test`;
      const agentWithVariation = async (name: string, prompt: string) => {
        const id = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
        const variation = await createVariation(api, ws.token, ws.workspaceId, id, { spec: { prompt, modelConfig: { modelId: MODEL_ID } } });
        return { id, assignments: `/v1/workspaces/${ws.workspaceId}/agents/${id}/variations/${variation.metadata.id}/assignments` };
      };
      const helper = await agentWithVariation('crm-helper', 'You look customers up.');
      await created(api, ws.token, helper.assignments, { toolId: crmToolId });
      const delegator = await agentWithVariation('delegator', 'You delegate.');
      await created(api, ws.token, delegator.assignments, { agentId: helper.id });
      const delegating = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: `delegate-${suffix}` }, spec: { agentId: delegator.id, hostname: host, allowedOrigins: [ALLOWED], theme: 'THEME_LIGHT' },
      });
      widgetIds.set(host, delegating.metadata.id);
      const session = await widgets.mint(host, { secrets: { CRM_TOKEN: SESSION_SECRET } });
      const childScript = 'CALL crm {"customer":"c-child"}\nSAY child done';
      const run = await runAs(session.token, `CALL crm-helper ${JSON.stringify({ prompt: childScript })}\nSAY parent done`, host);
      assert.equal(run.view.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.view));
      const childCall = tools.requestsTo('/echo').find((request) => request.body.includes('c-child'));
      assert.ok(childCall, 'the sub-agent called the tool');
      assert.equal(childCall.headers.authorization, `Bearer ${SESSION_SECRET}`);
    });

    it('fails a revoked session\'s tool call that reads a secret (never the workspace\'s value); a tool without secrets still runs', async () => {
      const session = await widgets.mint(HOST, { secrets: { CRM_TOKEN: SESSION_SECRET } });
      const created = await widget(HOST, session.token, 'POST', '/api/objectives', { body: { content: 'CALL refund {"order":"o-revoked"}\nSLEEP 0\nCALL crm {"customer":"c-revoked"}\nSAY done' } });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const objectivePath = `/v1/workspaces/${ws.workspaceId}/objectives/${id}`;
      let pending: string[] = [];
      await eventually(async () => {
        pending = (await api.request('GET', objectivePath, { token: ws.token })).body.info.pendingToolCallIds ?? [];
        return pending.length === 1;
      }, 'approval requested', 15_000);
      const revoked = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/widgets/${widgetIds.get(HOST)}/sessions/${session.sessionId}`, { token: ws.token });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      const approved = await api.request('PUT', `${objectivePath}/tool_calls/${pending[0]}/approve`, { token: ws.token, body: {} });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      await eventually(async () => TERMINAL_OBJECTIVE_STATUSES.includes((await api.request('GET', objectivePath, { token: ws.token })).body.info.status), 'objective finished', 15_000);
      assert.ok(tools.requestsTo('/echo').some((request) => request.body.includes('o-revoked')), 'the tool without secrets ran');
      assert.ok(!tools.requestsTo('/echo').some((request) => request.body.includes('c-revoked')), 'the tool reading a secret was called');
      const errors = (await eventsOf(id)).filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_ERROR');
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0].data.toolError.type, 'SECRET_NOT_FOUND');
      assert.match(errors[0].data.toolError.message, /the widget session of this objective has ended/);
    });
  });
});
