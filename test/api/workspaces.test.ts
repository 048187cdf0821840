import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, missingId, newAccount, newKey, newWorkspace, type TestAccount } from '../support/fixtures';
import { eventuallyValue } from '../support/eventually';
import { startTestIssuer, type TestIssuer } from '../support/oidc';

describe('workspace administration', () => {
  let api: TestApi;
  let issuer: TestIssuer;
  let account: TestAccount;
  before(async () => {
    issuer = await startTestIssuer();
    api = await startTestApi({ env: { AGENTRT_OIDC_ISSUER: issuer.issuer, AGENTRT_OIDC_JWKS_URL: issuer.jwksUrl } });
    account = await newAccount(api);
  });
  after(async () => {
    await api.close();
    await issuer.close();
  });

  describe('workspaces', () => {
    it('creates, reads, updates and lists workspaces', async () => {
      const created = await api.request('POST', '/v1/account/workspaces', {
        token: account.globalToken,
        body: { metadata: { name: 'staging', externalId: 'ext-1', labels: { env: 'staging' } }, spec: { description: 'pre-production' } },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.metadata.id;
      assert.match(id, /^ws_/);
      assert.equal(created.body.status, 'STATUS_ENABLED');
      assert.equal(created.body.metadata.accountId, account.accountId);
      const patched = await api.request('PATCH', `/v1/account/workspaces/${id}`, { token: account.globalToken, body: { spec: { description: 'changed' } } });
      assert.equal(patched.body.spec.description, 'changed');
      assert.equal(patched.body.metadata.name, 'staging');
      const got = await api.request('GET', `/v1/account/workspaces/${id}`, { token: account.globalToken });
      assert.equal(got.body.metadata.externalId, 'ext-1');
      const listed = await api.request('GET', '/v1/account/workspaces?labels=env=staging', { token: account.globalToken });
      assert.deepEqual(listed.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [id]);
    });

    it('refuses invalid labels, naming the label', async () => {
      const response = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, body: { metadata: { name: 'x', labels: { 'Bad Key': 'v' } } } });
      assertStatus(response, 400, Code.INVALID_ARGUMENT, /metadata.labels.Bad Key/);
    });

    it('archives a workspace, hides it from lists and refuses every request scoped to it', async () => {
      const own = await newAccount(api);
      const second = await newWorkspace(api, own, 'to-archive');
      const key = await newKey(api, own, second, ['api_keys:read']);
      assert.equal((await api.request('DELETE', `/v1/account/workspaces/${second}`, { token: own.globalToken })).status, 200);
      const listed = await api.request('GET', '/v1/account/workspaces', { token: own.globalToken });
      assert.deepEqual(listed.body.items.map((item: { metadata: { id: string } }) => item.metadata.id), [own.workspaceId]);
      const all = await api.request('GET', '/v1/account/workspaces?includeArchived=true', { token: own.globalToken });
      assert.equal(all.body.items.length, 2);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: key.token }), 403, Code.PERMISSION_DENIED, /archived/);
      assertStatus(await api.request('GET', `/v1/workspaces/${second}/api_keys`, { token: own.globalToken }), 403, Code.PERMISSION_DENIED, /archived/);
      assertStatus(await api.request('GET', '/v1/api_keys', { token: own.globalToken, headers: { 'x-workspace-id': second } }), 403, Code.PERMISSION_DENIED, /archived/);
    });

    it('refuses every request scoped to a workspace an operator disabled (STATUS_DISABLED), as an archived one', async () => {
      const own = await newAccount(api);
      const second = await newWorkspace(api, own, 'to-disable');
      const key = await newKey(api, own, second, ['api_keys:read']);
      assert.equal((await api.request('GET', '/v1/api_keys', { token: key.token })).status, 200);
      // No API call disables a workspace: an operator does, in the database.
      await api.dataSource.query("UPDATE workspaces SET status = 'STATUS_DISABLED' WHERE id = $1", [second]);
      // Keys and their workspaces are remembered for up to a second (CREDENTIAL_TTL_MS).
      const refused = await eventuallyValue(async () => {
        const response = await api.request('GET', '/v1/api_keys', { token: key.token });
        return response.status !== 200 && response;
      }, 'the disabled workspace refused', 5_000);
      for (const response of [refused, await api.request('GET', `/v1/workspaces/${second}/api_keys`, { token: own.globalToken })]) {
        assertStatus(response, 403, Code.PERMISSION_DENIED);
        assert.equal(response.body.message, `workspace ${second} is disabled`);
      }
      const shown = await api.request('GET', `/v1/account/workspaces/${second}`, { token: own.globalToken });
      assert.equal(shown.body.status, 'STATUS_DISABLED', 'the account still sees it, with its status');
    });

    it('refuses to archive the last non-archived workspace', async () => {
      const own = await newAccount(api);
      const response = await api.request('DELETE', `/v1/account/workspaces/${own.workspaceId}`, { token: own.globalToken });
      assertStatus(response, 400, Code.FAILED_PRECONDITION, /last non-archived workspace/);
      const still = await api.request('GET', `/v1/account/workspaces/${own.workspaceId}`, { token: own.globalToken });
      assert.equal(still.body.status, 'STATUS_ENABLED');
    });

    it('needs the admin role: a workspace key with account:manage is refused', async () => {
      const key = await newKey(api, account, account.workspaceId, ['*']);
      assertStatus(await api.request('GET', '/v1/account/workspaces', { token: key.token }), 403, Code.PERMISSION_DENIED, /admin role/);
      assertStatus(await api.request('POST', '/v1/account/workspaces', { token: key.token, body: { metadata: { name: 'x' } } }), 403, Code.PERMISSION_DENIED);
    });

    it('answers NOT_FOUND for another account\'s workspace on every workspace endpoint', async () => {
      const stranger = await newAccount(api);
      for (const [method, path, body] of [
        ['GET', `/v1/account/workspaces/${stranger.workspaceId}`, undefined],
        ['PATCH', `/v1/account/workspaces/${stranger.workspaceId}`, { metadata: { name: 'x' } }],
        ['DELETE', `/v1/account/workspaces/${stranger.workspaceId}`, undefined],
        ['GET', `/v1/account/workspaces/${stranger.workspaceId}/members`, undefined],
        ['POST', `/v1/account/workspaces/${stranger.workspaceId}/members`, { profileId: stranger.profileId }],
        ['DELETE', `/v1/account/workspaces/${stranger.workspaceId}/members/${stranger.profileId}`, undefined],
        ['GET', `/v1/account/workspaces/${missingId('ws')}`, undefined],
      ] as const) {
        assertStatus(await api.request(method, path, { token: account.globalToken, body }), 404, Code.NOT_FOUND);
      }
      assertStatus(await api.request('GET', '/v1/account/workspaces/nope', { token: account.globalToken }), 400, Code.INVALID_ARGUMENT, /workspaceId/);
    });
  });

  describe('members and profiles', () => {
    it('requires exactly one of email and profileId', async () => {
      const path = `/v1/account/workspaces/${account.workspaceId}/members`;
      assertStatus(await api.request('POST', path, { token: account.globalToken, body: {} }), 400, Code.INVALID_ARGUMENT, /exactly one of email and profileId/);
      assertStatus(await api.request('POST', path, { token: account.globalToken, body: { email: 'a@example.com', profileId: account.profileId } }), 400, Code.INVALID_ARGUMENT, /exactly one/);
      assertStatus(await api.request('POST', path, { token: account.globalToken, body: { email: 'not-an-email' } }), 400, Code.INVALID_ARGUMENT, /email/);
    });

    it('invites by email, is idempotent, and cuts access at once on removal', async () => {
      const own = await newAccount(api);
      const second = await newWorkspace(api, own, 'team');
      const path = `/v1/account/workspaces/${second}/members`;
      const email = `dev-${Date.now()}@example.com`;
      const added = await api.request('POST', path, { token: own.globalToken, body: { email } });
      assert.equal(added.status, 200, JSON.stringify(added.body));
      assert.equal(added.body.email, email);
      assert.match(added.body.actorId, /^wsm_/);
      const again = await api.request('POST', path, { token: own.globalToken, body: { email: email.toUpperCase() } });
      assert.equal(again.body.actorId, added.body.actorId);
      const byId = await api.request('POST', path, { token: own.globalToken, body: { profileId: added.body.profileId } });
      assert.equal(byId.body.actorId, added.body.actorId);

      const userToken = await issuer.token(email);
      const asUser = await api.request('GET', `/v1/workspaces/${second}/api_keys`, { token: userToken });
      assert.equal(asUser.status, 200, JSON.stringify(asUser.body));
      assertStatus(await api.request('GET', `/v1/workspaces/${own.workspaceId}/api_keys`, { token: userToken }), 403, Code.PERMISSION_DENIED, /not a member/);
      const profile = await api.request('GET', '/v1/profile', { token: userToken });
      assert.equal(profile.body.spec.type, 'PROFILE_TYPE_USER');
      assert.equal(profile.body.spec.email, email);
      assert.deepEqual(profile.body.info, { admin: false, scopes: ['*'], workspaceIds: [second] }, 'a user acts in the workspaces it is a member of');

      const members = await api.request('GET', path, { token: own.globalToken });
      assert.deepEqual(members.body.items.map((item: { profileId: string }) => item.profileId), [added.body.profileId]);
      assert.equal((await api.request('DELETE', `${path}/${added.body.profileId}`, { token: own.globalToken })).status, 200);
      assertStatus(await api.request('GET', `/v1/workspaces/${second}/api_keys`, { token: userToken }), 403, Code.PERMISSION_DENIED, /not a member/);
      assertStatus(await api.request('DELETE', `${path}/${added.body.profileId}`, { token: own.globalToken }), 404, Code.NOT_FOUND, /not a member/);
      assert.equal((await api.request('GET', path, { token: own.globalToken })).body.items.length, 0);
      const readded = await api.request('POST', path, { token: own.globalToken, body: { profileId: added.body.profileId } });
      assert.equal(readded.body.actorId, added.body.actorId);
      assert.equal((await api.request('GET', `/v1/workspaces/${second}/api_keys`, { token: userToken })).status, 200);
    });

    it('searches profiles by a case-insensitive substring of name or email', async () => {
      const own = await newAccount(api);
      const path = `/v1/account/workspaces/${own.workspaceId}/members`;
      await api.request('POST', path, { token: own.globalToken, body: { email: 'Zelda.Search@example.com' } });
      await api.request('POST', path, { token: own.globalToken, body: { email: 'link@example.com' } });
      const found = await api.request('GET', '/v1/account/profiles?query=zelda', { token: own.globalToken });
      assert.deepEqual(found.body.items.map((item: { spec: { email: string } }) => item.spec.email), ['Zelda.Search@example.com']);
      const all = await api.request('GET', '/v1/account/profiles?query=', { token: own.globalToken });
      assert.ok(all.body.items.length >= 3);
      const literal = await api.request('GET', '/v1/account/profiles?query=%25', { token: own.globalToken });
      assert.equal(literal.body.items.length, 0);
    });
  });

  describe('OpenID Connect users', () => {
    it('maps a verified token to the USER profile with its admin flag', async () => {
      const own = await newAccount(api);
      const profile = await api.services.store.profiles.findById(own.profileId);
      const adminToken = await issuer.token(profile!.email!);
      const workspaces = await api.request('GET', '/v1/account/workspaces', { token: adminToken });
      assert.equal(workspaces.status, 200, JSON.stringify(workspaces.body));
      // An admin user can re-enable a disabled global key, which cannot enable itself.
      await api.request('PUT', '/v1/account/global_api_key/disable', { token: own.globalToken });
      assertStatus(await api.request('GET', '/v1/account', { token: own.globalToken }), 401, Code.UNAUTHENTICATED);
      assert.equal((await api.request('PUT', '/v1/account/global_api_key/enable', { token: adminToken })).body.state, 'STATE_ENABLED');
      assert.equal((await api.request('GET', '/v1/account', { token: own.globalToken })).status, 200);
    });

    it('refuses tokens of another signer or issuer, and unknown emails', async () => {
      const own = await newAccount(api);
      const profile = await api.services.store.profiles.findById(own.profileId);
      const { privateKey } = await (await import('jose')).generateKeyPair('RS256');
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { foreignKey: privateKey }) }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { issuer: 'https://evil.example' }) }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { emailVerified: false }) }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { emailVerified: null }) }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token('nobody@example.com') }), 401, Code.UNAUTHENTICATED, /no user profile/);
    });

    it('refuses an expired token and a token without an expiry', async () => {
      const own = await newAccount(api);
      const profile = await api.services.store.profiles.findById(own.profileId);
      assert.equal((await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!) })).status, 200);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { expiresIn: '-10m' }) }), 401, Code.UNAUTHENTICATED, /^invalid bearer token$/);
      assertStatus(await api.request('GET', '/v1/account', { token: await issuer.token(profile!.email!, { expiresIn: null }) }), 401, Code.UNAUTHENTICATED, /^invalid bearer token$/);
    });

    it('binds a profile to the first identity that signs in with its email', async () => {
      const own = await newAccount(api);
      const email = `bound-${Date.now()}@example.com`;
      await api.request('POST', `/v1/account/workspaces/${own.workspaceId}/members`, { token: own.globalToken, body: { email } });
      assert.equal((await api.request('GET', '/v1/profile', { token: await issuer.token(email, { subject: 'alice' }) })).status, 200);
      assert.equal((await api.request('GET', '/v1/profile', { token: await issuer.token(email, { subject: 'alice' }) })).status, 200);
      // Someone else later gets this email at the issuer: not the same person.
      const takeover = await api.request('GET', '/v1/profile', { token: await issuer.token(email, { subject: 'mallory' }) });
      assertStatus(takeover, 401, Code.UNAUTHENTICATED, /bound to another identity/);
    });

    it('refuses a non-admin user on admin routes', async () => {
      const own = await newAccount(api);
      const email = `member-${Date.now()}@example.com`;
      await api.request('POST', `/v1/account/workspaces/${own.workspaceId}/members`, { token: own.globalToken, body: { email } });
      assertStatus(await api.request('GET', '/v1/account/workspaces', { token: await issuer.token(email) }), 403, Code.PERMISSION_DENIED, /admin role/);
    });
  });
});
