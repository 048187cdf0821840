// Widget sessions (api-decisions.md "Widgets"): minting with
// `widget_sessions:manage` (tenant and subject upserted, ttl bounds, widgetUrl
// with and without AGENTRT_WIDGET_BASE_URL), revocation, and the
// WidgetSessionVerifier the widget host asks: a good token, and one refusal
// (one message) for an expired, foreign, tampered, API key, revoked or
// widget-deleted token; session secrets sealed, opened only by sessionSecrets,
// never in a response or a log line.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { UnauthenticatedError } from '../../src/errors';
import { INVALID_WIDGET_TOKEN } from '../../src/widgets/widget-session.service';
import { createAgent } from '../support/agents-world';
import { startTestApi, type ApiResponse, type RequestOptions, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, type TestAccount } from '../support/fixtures';
import { LeakWatch } from '../support/leak-watch';

const CANARY = `wsesscanary${randomUUID().replace(/-/g, '')}`;
const BASE_URL_TEMPLATE = 'http://{hostname}:8080';

/** A hostname no other run of the shared database has. */
const uniqueHostname = (label = 'chat') => `${label}-${randomUUID().slice(0, 8)}.widgets.example.com`;

describe('widget sessions', () => {
  let api: TestApi;
  let account: TestAccount;
  let token: string;
  let agentId: string;
  const watch = new LeakWatch(CANARY);

  const call = async (method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> => watch.record(await api.request(method, path, { token, ...options }));
  const widgetsPath = () => `/v1/workspaces/${account.workspaceId}/widgets`;
  const sessionsPath = (widgetId: string) => `${widgetsPath()}/${widgetId}/sessions`;

  async function createWidget(hostname = uniqueHostname()) {
    const response = await call('POST', widgetsPath(), {
      body: { metadata: { name: 'support' }, spec: { agentId, hostname, allowedOrigins: ['https://www.example.com'] } },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function mint(widgetId: string, body: Record<string, unknown> = {}, options: RequestOptions = {}) {
    return call('POST', sessionsPath(widgetId), { body, ...options });
  }

  async function minted(widgetId: string, body: Record<string, unknown> = {}) {
    const response = await mint(widgetId, body);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function refused(sessionToken: string, hostname: string): Promise<void> {
    await assert.rejects(api.services.widgetSessions.verify(sessionToken, hostname), (error: unknown) => {
      assert.ok(error instanceof UnauthenticatedError, String(error));
      assert.equal(error.message, INVALID_WIDGET_TOKEN);
      return true;
    });
  }

  before(async () => {
    api = await startTestApi({ env: { AGENTRT_WIDGET_BASE_URL: BASE_URL_TEMPLATE } });
    account = await newAccount(api);
    token = (await newKey(api, account, account.workspaceId, ['widgets:manage', 'widget_sessions:manage', 'agents:manage'])).token;
    agentId = (await createAgent(api, token, account.workspaceId)).metadata.id;
  });
  after(async () => api.close());

  describe('POST /v1/workspaces/{ws}/widgets/{widgetId}/sessions', () => {
    it('mints a session whose token verifies for the widget hostname', async () => {
      const widget = await createWidget();
      const before = Date.now();
      const session = await minted(widget.metadata.id);
      assert.match(session.sessionId, /^wsess_[0-9A-HJKMNP-TV-Z]{26}$/);
      const expiresAt = Date.parse(session.expiresAt);
      // Default ttl 900 s, in whole seconds.
      assert.ok(expiresAt >= Math.floor(before / 1000) * 1000 + 900_000 && expiresAt <= Date.now() + 900_000, session.expiresAt);
      assert.equal(expiresAt % 1000, 0);
      assert.equal(session.widgetUrl, `http://${widget.spec.hostname}:8080/#session=${session.token}`);
      const principal = await api.services.widgetSessions.verify(session.token, widget.spec.hostname.toUpperCase());
      assert.deepEqual(principal, {
        sessionId: session.sessionId, widgetId: widget.metadata.id, accountId: account.accountId, workspaceId: account.workspaceId, agentId,
        tenantId: null, subjectId: null, allowVisitorApprovals: false, expiresAt: new Date(session.expiresAt),
      });
      const header = JSON.parse(Buffer.from(session.token.split('.')[0], 'base64url').toString());
      assert.deepEqual(header, { alg: 'HS256', typ: 'agentrt-widget+jwt' });
      const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString());
      assert.equal(claims.aud, widget.spec.hostname);
      assert.equal(claims.sub, session.sessionId);
      assert.equal(claims.exp * 1000, expiresAt);
    });
  });
});
