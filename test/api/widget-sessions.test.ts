// Widget sessions (api-decisions.md "Widgets"): minting with
// `widget_sessions:manage` (tenant and subject upserted, ttl bounds, widgetUrl
// with and without AGENTRT_WIDGET_BASE_URL), revocation, and the
// WidgetSessionVerifier the widget host asks: a good token, and one refusal
// (one message) for an expired, foreign, tampered, API key, revoked or
// widget-deleted token; session secrets sealed, opened only by sessionSecrets,
// never in a response or a log line.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WidgetSessionSweeper } from '../../actors/kinds/widget-session-sweeper';
import { UnauthenticatedError } from '../../src/errors';
import { newId } from '../../src/ids';
import type { WidgetsStore } from '../../src/ports/widgets-store';
import type { WidgetSessionRecord } from '../../src/widgets/records';
import { INVALID_WIDGET_TOKEN, WidgetSessionService } from '../../src/widgets/widget-session.service';
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
  /** Every token minted: none may reach a log line. */
  const tokens: string[] = [];

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
    tokens.push(response.body.token);
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
      const [{ profileId }] = await api.dataSource.query('SELECT profile_id AS "profileId" FROM widget_sessions WHERE id = $1', [session.sessionId]);
      assert.match(profileId, /^prof_/);
      assert.deepEqual(principal, {
        sessionId: session.sessionId, widgetId: widget.metadata.id, accountId: account.accountId, workspaceId: account.workspaceId, workspaceStatus: 'STATUS_ENABLED',
        profileId, agentId,
        tenantId: null, subjectId: null, allowVisitorApprovals: false, expiresAt: new Date(session.expiresAt),
      });
      const header = JSON.parse(Buffer.from(session.token.split('.')[0], 'base64url').toString());
      assert.deepEqual(header, { alg: 'HS256', typ: 'agentrt-widget+jwt' });
      const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString());
      assert.equal(claims.aud, widget.spec.hostname);
      assert.equal(claims.sub, session.sessionId);
      assert.equal(claims.exp * 1000, expiresAt);
    });

    it('asserts the tenant and subject (upserted by externalId) and carries their ids', async () => {
      const widget = await createWidget();
      const body = { tenant: { externalId: 'acme', name: 'Acme' }, subject: { externalId: 'visitor-1', email: 'v@acme.example' } };
      const first = await minted(widget.metadata.id, body);
      const second = await minted(widget.metadata.id, body);
      assert.match(first.tenantId, /^tenant_/);
      assert.match(first.subjectId, /^subject_/);
      assert.equal(second.tenantId, first.tenantId);
      assert.equal(second.subjectId, first.subjectId);
      const subject = await api.request('GET', `/v1/workspaces/${account.workspaceId}/subjects/${first.subjectId}`, { token: account.globalToken });
      assert.equal(subject.status, 200, JSON.stringify(subject.body));
      assert.equal(subject.body.spec.tenantId, first.tenantId);
      assert.equal(subject.body.spec.email, 'v@acme.example');
      const principal = await api.services.widgetSessions.verify(first.token, widget.spec.hostname);
      assert.equal(principal.tenantId, first.tenantId);
      assert.equal(principal.subjectId, first.subjectId);
    });

    it('names the field of a bad assertion', async () => {
      const widget = await createWidget();
      assertStatus(await mint(widget.metadata.id, { tenant: { externalId: '' } }), 400, Code.INVALID_ARGUMENT, /tenant/);
      assertStatus(await mint(widget.metadata.id, { subject: { externalId: 'x', email: 'not-an-email' } }), 400, Code.INVALID_ARGUMENT, /subject\.email/);
      assertStatus(await mint(widget.metadata.id, { visitor: 'x' }), 400, Code.INVALID_ARGUMENT, /visitor/);
    });

    it('takes ttlSeconds from 1 to 86400 and refuses others naming the field', async () => {
      const widget = await createWidget();
      for (const ttlSeconds of [0, -1, 86_401, 1.5, '60']) {
        assertStatus(await mint(widget.metadata.id, { ttlSeconds }), 400, Code.INVALID_ARGUMENT, /ttlSeconds/);
      }
      // Expiry = the minting second + ttl: between (start, whole seconds) + ttl and now + ttl.
      const expiresWithin = async (ttlSeconds: number) => {
        const start = Math.floor(Date.now() / 1000) * 1000;
        const { expiresAt } = await minted(widget.metadata.id, { ttlSeconds });
        assert.ok(Date.parse(expiresAt) >= start + ttlSeconds * 1000 && Date.parse(expiresAt) <= Date.now() + ttlSeconds * 1000, `${ttlSeconds}: ${expiresAt}`);
      };
      await expiresWithin(86_400);
      await expiresWithin(1);
    });

    it('answers NOT_FOUND for a widget that is not the workspace\'s', async () => {
      assertStatus(await mint(missingId('widget')), 404, Code.NOT_FOUND, /widget widget_\w+ not found/);
      const other = await newAccount(api);
      const otherToken = (await newKey(api, other, other.workspaceId, ['widget_sessions:manage'])).token;
      const widget = await createWidget();
      assertStatus(await api.request('POST', `/v1/workspaces/${other.workspaceId}/widgets/${widget.metadata.id}/sessions`, { token: otherToken, body: {} }), 404, Code.NOT_FOUND);
    });

    it('requires widget_sessions:manage: widgets:manage alone cannot mint', async () => {
      const widget = await createWidget();
      const widgetsOnly = (await newKey(api, account, account.workspaceId, ['widgets:manage'])).token;
      assertStatus(await mint(widget.metadata.id, {}, { token: widgetsOnly }), 403, Code.PERMISSION_DENIED);
      const sessionsOnly = (await newKey(api, account, account.workspaceId, ['widget_sessions:manage'])).token;
      const session = (await mint(widget.metadata.id, {}, { token: sessionsOnly })).body;
      assert.match(session.sessionId, /^wsess_/);
      assertStatus(await call('DELETE', `${sessionsPath(widget.metadata.id)}/${session.sessionId}`, { token: widgetsOnly }), 403, Code.PERMISSION_DENIED);
      assertStatus(await call('GET', widgetsPath(), { token: sessionsOnly }), 403, Code.PERMISSION_DENIED);
    });
  });

  describe('session secrets', () => {
    it('seals the secrets, never answers or logs them, and opens them for sessionSecrets', async () => {
      const widget = await createWidget();
      const secrets = { CRM_TOKEN: watch.canary(), _other: watch.canary() };
      const session = await minted(widget.metadata.id, { secrets });
      assert.deepEqual(await watch.recordErrors(() => api.services.widgetSessions.sessionSecrets(session.sessionId)), secrets);
      const rows: Array<{ secrets_ciphertext: string }> = await api.dataSource.query('SELECT secrets_ciphertext FROM widget_sessions WHERE id = $1', [session.sessionId]);
      assert.ok(rows[0].secrets_ciphertext.length > 0);
      assert.ok(!rows[0].secrets_ciphertext.includes(CANARY), 'the stored secrets are sealed');
      // A bad name next to a good value: the error names the field, never a value.
      assertStatus(await mint(widget.metadata.id, { secrets: { GOOD: watch.canary(), '1BAD': watch.canary() } }), 400, Code.INVALID_ARGUMENT, /^secrets\.1BAD: a secret name must start/);
      assertStatus(await mint(widget.metadata.id, { secrets: { GOOD: 42 } }), 400, Code.INVALID_ARGUMENT, /secrets/);
      assertStatus(await mint(widget.metadata.id, { secrets: { [`A${'b'.repeat(128)}`]: watch.canary() } }), 400, Code.INVALID_ARGUMENT, /^secrets\.A/);
      const many = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`S${index}`, watch.canary()]));
      assertStatus(await mint(widget.metadata.id, { secrets: many }), 400, Code.INVALID_ARGUMENT, /^secrets: must hold at most 64 secrets/);
    });

    it('opens a session\'s secrets only before its expiry by the service\'s clock, as verify does', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id, { secrets: { CRM_TOKEN: watch.canary() }, ttlSeconds: 3600 });
      const expiresAt = Date.parse(session.expiresAt);
      // The same store, keyring and tokens as the node's service, with a clock of its own.
      const { store, widgets, tenants, keyring, tokens: signer } = api.services.widgetSessions as unknown as Record<string, never>;
      const at = (time: number) => new WidgetSessionService(store, widgets, tenants, keyring, signer, { now: () => new Date(time) });
      assert.deepEqual(Object.keys(await at(expiresAt - 1000).sessionSecrets(session.sessionId) ?? {}), ['CRM_TOKEN']);
      assert.equal(await at(expiresAt).sessionSecrets(session.sessionId), null, 'expired by the clock, though not by the wall');
      await assert.rejects(at(expiresAt).verify(session.token, widget.spec.hostname), UnauthenticatedError);
    });

    it('answers {} for a session without secrets, null for one that does not exist', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id, { secrets: {} });
      assert.deepEqual(await api.services.widgetSessions.sessionSecrets(session.sessionId), {});
      assert.equal(await api.services.widgetSessions.sessionSecrets(missingId('wsess')), null);
    });
  });

  describe('WidgetSessionVerifier.verify', () => {
    it('refuses a token whose session has expired', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id, { ttlSeconds: 1 });
      const expiresAt = Date.parse(session.expiresAt);
      // Verified while current (the token was minted less than a second before its expiry at worst).
      if (Date.now() < expiresAt - 200) await api.services.widgetSessions.verify(session.token, widget.spec.hostname);
      while (Date.now() <= expiresAt) await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 10));
      await refused(session.token, widget.spec.hostname);
    });

    it("refuses another widget's hostname (the audience)", async () => {
      const widget = await createWidget();
      const other = await createWidget();
      const session = await minted(widget.metadata.id);
      await refused(session.token, other.spec.hostname);
      await refused(session.token, 'unknown.example.com');
    });

    it('refuses a tampered token', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id);
      const otherSession = await minted(widget.metadata.id);
      const [header, payload, signature] = session.token.split('.');
      // Another session's claims under this signature.
      await refused(`${header}.${otherSession.token.split('.')[1]}.${signature}`, widget.spec.hostname);
      // One character of the signature changed.
      const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
      await refused(`${header}.${payload}.${flipped}`, widget.spec.hostname);
      // An unsigned token with the same claims.
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'agentrt-widget+jwt' })).toString('base64url');
      await refused(`${none}.${payload}.`, widget.spec.hostname);
      await refused('not a token', widget.spec.hostname);
      await refused('', widget.spec.hostname);
    });

    it('refuses the session of an erased subject (its row goes with the subject)', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id, { subject: { externalId: `erased-${randomUUID()}` } });
      await api.services.widgetSessions.verify(session.token, widget.spec.hostname);
      // What an erasure's delete of the record does (TenantService.deleteSubject, without the erasure runtime).
      await api.dataSource.query('DELETE FROM subjects WHERE id = $1', [session.subjectId]);
      await refused(session.token, widget.spec.hostname);
    });

    it('is not a credential of the /v1 API', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id);
      assertStatus(await api.request('GET', widgetsPath(), { token: session.token }), 401, Code.UNAUTHENTICATED);
    });

    it('refuses an API key token', async () => {
      const widget = await createWidget();
      await refused(token, widget.spec.hostname);
      await refused(account.globalToken, widget.spec.hostname);
    });

    it('refuses the sessions of a deleted widget, and the widget stops answering by hostname', async () => {
      const widget = await createWidget();
      const session = await minted(widget.metadata.id);
      assert.equal((await api.services.widgetSessions.widgetByHostname(widget.spec.hostname))?.widgetId, widget.metadata.id);
      assert.equal((await call('DELETE', `${widgetsPath()}/${widget.metadata.id}`)).status, 200);
      await refused(session.token, widget.spec.hostname);
      assert.equal(await api.services.widgetSessions.widgetByHostname(widget.spec.hostname), null);
      assert.equal(await api.services.widgetSessions.sessionSecrets(session.sessionId), null);
    });

    it('refuses a revoked session (DELETE …/sessions/{sessionId}), and only that one', async () => {
      const widget = await createWidget();
      const revoked = await minted(widget.metadata.id);
      const kept = await minted(widget.metadata.id);
      const path = `${sessionsPath(widget.metadata.id)}/${revoked.sessionId}`;
      assert.equal((await call('DELETE', path)).status, 200);
      await refused(revoked.token, widget.spec.hostname);
      assert.equal((await api.services.widgetSessions.verify(kept.token, widget.spec.hostname)).sessionId, kept.sessionId);
      assertStatus(await call('DELETE', path), 404, Code.NOT_FOUND, /widget session wsess_\w+ not found/);
      const other = await createWidget();
      assertStatus(await call('DELETE', `${sessionsPath(other.metadata.id)}/${kept.sessionId}`), 404, Code.NOT_FOUND);
    });
  });

  describe('a change of hostname', () => {
    const patchWidget = (id: string, spec: Record<string, unknown>) => call('PATCH', `${widgetsPath()}/${id}`, { body: { spec } });
    const sessionRows = async (widgetId: string) =>
      (await api.dataSource.query('SELECT count(*)::int AS n FROM widget_sessions WHERE widget_id = $1', [widgetId]))[0].n as number;

    it('ends the widget\'s sessions: moving back (A→B→A) revives no token; other changes and other widgets keep theirs', async () => {
      const a = uniqueHostname('a');
      const b = uniqueHostname('b');
      const widget = await createWidget(a);
      const session = await minted(widget.metadata.id, { secrets: { CRM_TOKEN: watch.canary() } });
      const neighbour = await createWidget();
      const kept = await minted(neighbour.metadata.id);
      assert.equal((await api.services.widgetSessions.verify(session.token, a)).sessionId, session.sessionId);

      assert.equal((await patchWidget(widget.metadata.id, { hostname: b })).status, 200);
      await refused(session.token, a);
      await refused(session.token, b);
      assert.equal((await patchWidget(widget.metadata.id, { hostname: a })).status, 200);
      await refused(session.token, a);
      assert.equal(await api.services.widgetSessions.sessionSecrets(session.sessionId), null, 'its objectives\' tools get its secrets no more');
      assert.equal(await sessionRows(widget.metadata.id), 0, 'the session rows went with the move');

      const fresh = await minted(widget.metadata.id);
      assert.equal((await patchWidget(widget.metadata.id, { title: 'Help', hostname: a.toUpperCase() })).status, 200, 'the same hostname is no move');
      assert.equal((await api.services.widgetSessions.verify(fresh.token, a)).sessionId, fresh.sessionId);
      assert.equal((await api.services.widgetSessions.verify(kept.token, neighbour.spec.hostname)).sessionId, kept.sessionId);
    });

    it('mints no session for a hostname the widget has left, even one read before a move still in progress', async () => {
      const from = uniqueHostname('from');
      const widget = await createWidget(from);
      const store = (api.services.widgetSessions as unknown as { store: WidgetsStore }).store;
      const session = (id: string): WidgetSessionRecord => ({
        id, widgetId: widget.metadata.id, accountId: account.accountId, workspaceId: account.workspaceId, tenantId: null, subjectId: null,
        secretsCiphertext: null, profileId: null, expiresAt: new Date(Date.now() + 60_000), createdAt: new Date(),
      });
      assert.equal(await store.sessions.insert(session(newId('widgetSession')), uniqueHostname('elsewhere')), false);

      // A move holds the widget's row until it commits; an insert for the old hostname waits for it, then sees the move.
      let moved!: () => void;
      const locked = new Promise<void>((resolve) => (moved = resolve));
      let commit!: () => void;
      const held = new Promise<void>((resolve) => (commit = resolve));
      const move = store.transaction(async (tx) => {
        await tx.widgets.findForUpdate(widget.metadata.id);
        await tx.widgets.update(widget.metadata.id, { hostname: uniqueHostname('to') });
        await tx.sessions.deleteOfWidget(widget.metadata.id);
        moved();
        await held;
      });
      await locked;
      const late = newId('widgetSession');
      const insert = store.sessions.insert(session(late), from);
      await new Promise((resolve) => setTimeout(resolve, 100));
      commit();
      await move;
      assert.equal(await insert, false);
      assert.equal(await store.sessions.findById(late), null);
      assert.equal(await sessionRows(widget.metadata.id), 0);
    });
  });

  describe('widgetByHostname', () => {
    it('finds the widget whatever the case, with what the host needs', async () => {
      const hostname = uniqueHostname('Case');
      const widget = await createWidget(hostname);
      assert.equal(widget.spec.hostname, hostname.toLowerCase());
      assert.deepEqual(await api.services.widgetSessions.widgetByHostname(hostname.toUpperCase()), {
        widgetId: widget.metadata.id, allowedOrigins: ['https://www.example.com'], title: null, greeting: null, theme: 'THEME_AUTO', allowVisitorApprovals: false,
      });
      assert.equal(await api.services.widgetSessions.widgetByHostname(uniqueHostname('absent')), null);
    });

    it('answers a create and a hostname change made on this node at once', async () => {
      const hostname = uniqueHostname('soon');
      assert.equal(await api.services.widgetSessions.widgetByHostname(hostname), null);
      const widget = await createWidget(hostname);
      assert.equal((await api.services.widgetSessions.widgetByHostname(hostname))?.widgetId, widget.metadata.id);
      const moved = uniqueHostname('moved');
      assert.equal(await api.services.widgetSessions.widgetByHostname(moved), null);
      assert.equal((await call('PATCH', `${widgetsPath()}/${widget.metadata.id}`, { body: { spec: { hostname: moved } } })).status, 200);
      assert.equal(await api.services.widgetSessions.widgetByHostname(hostname), null);
      assert.equal((await api.services.widgetSessions.widgetByHostname(moved))?.widgetId, widget.metadata.id);
    });

    it('answers a change made on this node at once', async () => {
      const widget = await createWidget();
      await api.services.widgetSessions.widgetByHostname(widget.spec.hostname);
      const patched = await call('PATCH', `${widgetsPath()}/${widget.metadata.id}`, { body: { spec: { title: 'Help', allowVisitorApprovals: true } } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const hosted = await api.services.widgetSessions.widgetByHostname(widget.spec.hostname);
      assert.equal(hosted?.title, 'Help');
      assert.equal(hosted?.allowVisitorApprovals, true);
    });
  });

  describe('WidgetSessionSweeper', () => {
    it('deletes expired sessions in batches and keeps current ones', async () => {
      const widget = await createWidget();
      const expiring = await Promise.all([1, 2, 3].map(() => minted(widget.metadata.id, { ttlSeconds: 1 })));
      const current = await minted(widget.metadata.id);
      const expiresAt = Math.max(...expiring.map((session) => Date.parse(session.expiresAt)));
      while (Date.now() <= expiresAt) await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 10));
      const quiet = { debug() {}, info() {}, warn() {}, error() {} };
      const sweeper = new WidgetSessionSweeper({ sessions: api.services.widgetSessions, logger: quiet, batchSize: 2 });
      assert.ok((await sweeper.sweepOnce()) >= 3);
      const ids = [...expiring, current].map((session) => session.sessionId);
      const rows: Array<{ id: string }> = await api.dataSource.query('SELECT id FROM widget_sessions WHERE id = ANY($1)', [ids]);
      assert.deepEqual(rows.map((row) => row.id), [current.sessionId]);
      assert.equal((await api.services.widgetSessions.verify(current.token, widget.spec.hostname)).sessionId, current.sessionId);
    });
  });

  // Last: every response, error and log line of the suite.
  describe('leaks', () => {
    it('no response, error message or log line carried a session secret', () => {
      assert.ok(watch.canariesUsed > 0);
      assert.deepEqual(watch.leaks(api.logs), []);
      assert.ok(api.logs.length > 0, 'the logs were captured');
      assert.ok(tokens.length > 0);
      assert.deepEqual(api.logs.filter((line) => tokens.some((minted) => line.includes(minted.split('.')[2]))), []);
    });
  });
});

describe('widget sessions without AGENTRT_WIDGET_BASE_URL', () => {
  let api: TestApi;

  before(async () => (api = await startTestApi()));
  after(async () => api.close());

  it('answers widgetUrl https://<hostname>/#session=<token>', async () => {
    const account = await newAccount(api);
    const agentId = (await createAgent(api, account.globalToken, account.workspaceId)).metadata.id;
    const hostname = uniqueHostname();
    const widget = await api.request('POST', `/v1/workspaces/${account.workspaceId}/widgets`, {
      token: account.globalToken, body: { metadata: { name: 'w' }, spec: { agentId, hostname, allowedOrigins: ['https://shop.example.com'] } },
    });
    assert.equal(widget.status, 200, JSON.stringify(widget.body));
    assert.equal(widget.body.info.baseUrl, `https://${hostname}`);
    const session = await api.request('POST', `/v1/workspaces/${account.workspaceId}/widgets/${widget.body.metadata.id}/sessions`, { token: account.globalToken, body: {} });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    assert.equal(session.body.widgetUrl, `https://${hostname}/#session=${session.body.token}`);
  });
});
