import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, newAccount, newKey, type TestAccount } from '../support/fixtures';
import { DependencyHealth } from '../../actors/runtime/dependency-health';
import { silentLogger } from '../support/cluster-harness';

describe('HTTP conventions', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi({ env: { AGENTRT_BODY_LIMIT_BYTES: '2048' } });
    account = await newAccount(api);
  });
  after(async () => api.close());

  describe('bad input', () => {
    const create = (options: { rawBody?: string; body?: unknown; headers?: Record<string, string> }) =>
      api.request('POST', '/v1/account/workspaces', { token: account.globalToken, ...options });

    it('answers malformed JSON with INVALID_ARGUMENT', async () => {
      assertStatus(await create({ rawBody: '{"metadata": ' }), 400, Code.INVALID_ARGUMENT, /not valid JSON/);
    });
    it('answers a body over the limit with 413 and INVALID_ARGUMENT', async () => {
      assertStatus(await create({ body: { metadata: { name: 'x'.repeat(5000) } } }), 413, Code.INVALID_ARGUMENT, /exceeds the 2048-byte limit/);
    });
    it('answers a wrong content type with 415 and INVALID_ARGUMENT', async () => {
      assertStatus(await create({ rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, Code.INVALID_ARGUMENT, /application\/json/);
    });
    it('names the field of a wrong type and of a missing field', async () => {
      const wrongType = await create({ body: { metadata: { name: 42 } } });
      assertStatus(wrongType, 400, Code.INVALID_ARGUMENT, /metadata.name: must be of type string/);
      assert.deepEqual(wrongType.body.details[0].fieldViolations[0], { field: 'metadata.name', description: 'must be of type string' });
      assertStatus(await create({ body: { spec: {} } }), 400, Code.INVALID_ARGUMENT, /metadata: is required/);
      assertStatus(await create({ rawBody: '[1,2]' }), 400, Code.INVALID_ARGUMENT, /must be of type object/);
    });
    it('rejects unknown fields', async () => {
      assertStatus(await create({ body: { metadata: { name: 'x', owner: 'me' } } }), 400, Code.INVALID_ARGUMENT, /^metadata.owner: is not a known field$/);
      assertStatus(await create({ body: { metadata: { name: 'x' }, color: 'red' } }), 400, Code.INVALID_ARGUMENT, /^color: is not a known field$/);
    });
    it('ignores read-only fields and never stores them, so a read resource can be sent back', async () => {
      const sent = { metadata: { name: 'echo', id: 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV', accountId: 'acc_other', createdAt: '2000-01-01T00:00:00Z' }, status: 'STATUS_ARCHIVED', info: { anything: true } };
      const created = await create({ body: sent });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.notEqual(created.body.metadata.id, sent.metadata.id);
      assert.equal(created.body.metadata.accountId, account.accountId);
      assert.notEqual(created.body.metadata.createdAt, sent.metadata.createdAt);
      assert.equal(created.body.status, 'STATUS_ENABLED');
      const echoed = await api.request('PATCH', `/v1/account/workspaces/${created.body.metadata.id}`, {
        token: account.globalToken,
        body: { ...created.body, spec: { description: 'round trip' } },
      });
      assert.equal(echoed.status, 200, JSON.stringify(echoed.body));
      assert.equal(echoed.body.spec.description, 'round trip');
      assert.equal(echoed.body.status, 'STATUS_ENABLED');
    });
    it('refuses NUL characters, naming the field', async () => {
      assertStatus(await create({ body: { metadata: { name: 'a\u0000b' } } }), 400, Code.INVALID_ARGUMENT, /^metadata.name: must not contain NUL characters$/);
      assertStatus(await api.request('GET', '/v1/account/workspaces?prefix=%00', { token: account.globalToken }), 400, Code.INVALID_ARGUMENT, /^prefix: must not contain NUL/);
    });
    it('answers an unknown route with a NOT_FOUND Status', async () => {
      assertStatus(await api.request('GET', '/v1/nothing-here', { token: account.globalToken }), 404, Code.NOT_FOUND, /no route/);
    });
  });

  describe('routing', () => {
    const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

    it('answers a wrong method on a known path with 405, an Allow header and an UNIMPLEMENTED Status', async () => {
      const objective = `/v1/workspaces/${account.workspaceId}/objectives/obj_01ARZ3NDEKTSV4RRFFQ69G5FAV`;
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/v1/account/workspaces', 'GET, HEAD, POST'],
        ['OPTIONS', '/v1/account/workspaces', 'GET, HEAD, POST'],
        ['PUT', objective, 'GET, HEAD'],
        ['GET', `${objective}/tool_calls/toolcall_01ARZ3NDEKTSV4RRFFQ69G5FAV/approve`, 'PUT'],
        ['POST', '/v1/api_keys/apikey_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'GET, HEAD, PATCH, DELETE'],
        ['POST', '/v1/profile', 'GET, HEAD'],
        ['POST', '/healthz', 'GET, HEAD'],
        ['DELETE', '/', 'GET, HEAD'],
      ];
      for (const [method, path, allow] of cases) {
        const response = await api.request(method, path, { token: account.globalToken });
        assertStatus(response, 405, Code.UNIMPLEMENTED, new RegExp(`^method ${method} is not allowed on ${escaped(path)}; allowed: ${allow}$`));
        assert.equal(response.headers.get('allow'), allow, `${method} ${path}`);
      }
    });

    it('answers 405 before authentication, as it answers 404: paths and methods are public (the OpenAPI document)', async () => {
      const response = await api.request('PATCH', '/v1/account/workspaces');
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'GET, HEAD, POST');
    });

    it('still answers an unknown path with 404 NOT_FOUND and no Allow header, whatever the method', async () => {
      for (const [method, path] of [['GET', '/v1/nothing-here'], ['DELETE', '/v1/nothing-here'], ['PUT', `/v1/workspaces/${account.workspaceId}/nothing`], ['POST', '/v1']]) {
        const response = await api.request(method, path, { token: account.globalToken });
        assertStatus(response, 404, Code.NOT_FOUND, new RegExp(`^no route for ${method} ${escaped(path)}$`));
        assert.equal(response.headers.get('allow'), null);
      }
    });

    it('answers GET / with where the API reference, the OpenAPI document and the README are', async () => {
      const root = await api.request('GET', '/');
      assert.equal(root.status, 200);
      assert.deepEqual(root.body, {
        name: 'agentrt', docs: '/docs', openapi: '/v1/openapi.json', readme: 'README.md at the root of the agentrt source: first steps, configuration, commands',
      });
      const openApi = await api.request('GET', root.body.openapi);
      assert.equal(openApi.status, 200);
      assert.match(openApi.body.openapi, /^3\./);
    });
  });

  describe('authentication', () => {
    it('refuses missing, malformed and forged tokens', async () => {
      assertStatus(await api.request('GET', '/v1/account'), 401, Code.UNAUTHENTICATED, /missing bearer token/);
      assertStatus(await api.request('GET', '/v1/account', { token: 'garbage' }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { headers: { authorization: 'Basic abc' } }), 401, Code.UNAUTHENTICATED);
      const [header, payload] = account.globalToken.split('.');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'agentrt-key+jwt' })).toString('base64url')}.${payload}.`;
      assertStatus(await api.request('GET', '/v1/account', { token: unsigned }), 401, Code.UNAUTHENTICATED);
      const forged = await new SignJWT(JSON.parse(Buffer.from(payload, 'base64url').toString()))
        .setProtectedHeader(JSON.parse(Buffer.from(header, 'base64url').toString()))
        .sign(new Uint8Array(32).fill(7));
      assertStatus(await api.request('GET', '/v1/account', { token: forged }), 401, Code.UNAUTHENTICATED);
      assertStatus(await api.request('GET', '/v1/account', { token: 'x'.repeat(9000) }), 401, Code.UNAUTHENTICATED, /too long/);
    });
  });

  describe('account', () => {
    it('shows the signing secret and global key to admins only', async () => {
      const admin = await api.request('GET', '/v1/account', { token: account.globalToken });
      assert.match(admin.body.info.webhookEventsHmacSecret, /^wh_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(admin.body.info.webhookEventsHmacSecret.slice(3), 'base64').length, 32);
      assert.equal(admin.body.info.globalApiKey.metadata.id, account.globalKeyId);
      const narrow = await newKey(api, account, account.workspaceId, []);
      const plain = await api.request('GET', '/v1/account', { token: narrow.token });
      assert.equal(plain.status, 200);
      assert.equal(plain.body.metadata.id, account.accountId);
      assert.deepEqual(plain.body.info, {});
      assert.deepEqual(plain.body.spec, {}, 'the billing contact is for admins only');
      assert.match(admin.body.spec.billingEmail, /@example.com$/);
    });
    it('keeps the webhook signing secrets sealed at rest, and both of them for 24 h after a rotation', async () => {
      const own = await newAccount(api);
      const first = (await api.request('GET', '/v1/account', { token: own.globalToken })).body.info.webhookEventsHmacSecret;
      const stored = async () => (await api.dataSource.query('SELECT webhook_signing_secret, previous_webhook_signing_secret FROM accounts WHERE id = $1', [own.accountId]))[0];
      assert.ok(!JSON.stringify(await stored()).includes(first.slice(3)), 'the signing secret is stored in the clear');
      const second = (await api.request('POST', '/v1/account/rotate_webhook_signing_key', { token: own.globalToken })).body.webhookEventsHmacSecret;
      assert.ok(!JSON.stringify(await stored()).includes(second.slice(3)));
      const now = await api.services.accounts.webhookSigningSecrets(own.accountId);
      assert.equal(now.current, second);
      assert.equal(now.previous, first);
      const later = await api.services.accounts.webhookSigningSecrets(own.accountId, new Date(Date.now() + 25 * 3600 * 1000));
      assert.deepEqual(later, { current: second });
    });
    it('rotates the webhook signing secret', async () => {
      const before = (await api.request('GET', '/v1/account', { token: account.globalToken })).body.info.webhookEventsHmacSecret;
      const rotated = await api.request('POST', '/v1/account/rotate_webhook_signing_key', { token: account.globalToken });
      assert.equal(rotated.status, 200);
      assert.deepEqual(Object.keys(rotated.body), ['webhookEventsHmacSecret']);
      assert.notEqual(rotated.body.webhookEventsHmacSecret, before);
      assert.equal((await api.request('GET', '/v1/account', { token: account.globalToken })).body.info.webhookEventsHmacSecret, rotated.body.webhookEventsHmacSecret);
      const narrow = await newKey(api, account, account.workspaceId, ['account:manage']);
      assertStatus(await api.request('POST', '/v1/account/rotate_webhook_signing_key', { token: narrow.token }), 403, Code.PERMISSION_DENIED, /admin role/);
    });
    it('answers GET /v1/profile with the key\'s own profile', async () => {
      const key = await newKey(api, account, account.workspaceId, [], 'profiled');
      const profile = await api.request('GET', '/v1/profile', { token: key.token });
      assert.equal(profile.body.spec.type, 'PROFILE_TYPE_API_KEY');
      assert.equal(profile.body.spec.name, 'profiled');
    });
    it('tells a workspace key, through GET /v1/profile, its workspace, its scopes, its id and name, and never its token', async () => {
      const key = await newKey(api, account, account.workspaceId, ['objectives:manage', 'agents:read'], 'reader');
      const renamed = await api.request('PATCH', `/v1/api_keys/${key.id}`, { token: account.globalToken, headers: { 'x-workspace-id': account.workspaceId }, body: { metadata: { name: 'reader-2' } } });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      const profile = await api.request('GET', '/v1/profile', { token: key.token });
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.equal(profile.body.metadata.accountId, account.accountId);
      assert.match(profile.body.metadata.id, /^prof_/);
      assert.deepEqual(profile.body.info, {
        admin: false, scopes: ['agents:read', 'objectives:manage'], workspaceIds: [account.workspaceId], apiKey: { id: key.id, name: 'reader-2', global: false },
      });
      assert.ok(!JSON.stringify(profile.body).includes(key.token.split('.')[2]), 'no token in the answer');
    });
    it('tells the global key, through GET /v1/profile, its account and that it is global', async () => {
      const global = (await api.request('GET', '/v1/account/global_api_key', { token: account.globalToken })).body;
      const profile = await api.request('GET', '/v1/profile', { token: account.globalToken });
      assert.equal(profile.status, 200, JSON.stringify(profile.body));
      assert.equal(profile.body.metadata.accountId, account.accountId);
      assert.equal(profile.body.spec.type, 'PROFILE_TYPE_API_KEY');
      assert.deepEqual(profile.body.info, { admin: true, scopes: ['*'], apiKey: { id: account.globalKeyId, name: global.metadata.name, global: true } });
      assert.ok(!JSON.stringify(profile.body).includes(account.globalToken.split('.')[2]), 'no token in the answer');
    });
  });

  describe('Idempotency-Key', () => {
    it('returns the first response for a repeat and refuses a different body', async () => {
      const headers = { 'idempotency-key': `key-${Date.now()}` };
      const first = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, headers, body: { metadata: { name: 'once' } } });
      const second = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, headers, body: { metadata: { name: 'once' } } });
      assert.equal(second.status, 200);
      assert.equal(second.body.metadata.id, first.body.metadata.id);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assertStatus(
        await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, headers, body: { metadata: { name: 'other' } } }),
        400,
        Code.INVALID_ARGUMENT,
        /Idempotency-Key: was already used with a different request/,
      );
      const listed = await api.request('GET', '/v1/account/workspaces?prefix=once', { token: account.globalToken });
      assert.equal(listed.body.items.length, 1);
    });
    it('keeps no record of a failed request, so a retry runs again instead of replaying or blocking', async () => {
      const headers = { 'idempotency-key': `retry-${Date.now()}` };
      assertStatus(await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, headers, body: { metadata: { name: 'y', labels: { '-': 'x' } } } }), 400, Code.INVALID_ARGUMENT);
      const retried = await api.request('POST', '/v1/account/workspaces', { token: account.globalToken, headers, body: { metadata: { name: 'y', labels: { '-': 'x' } } } });
      assertStatus(retried, 400, Code.INVALID_ARGUMENT, /metadata.labels/);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
    });
  });

  describe('operations', () => {
    it('echoes a request id, or makes one', async () => {
      const given = await api.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
      assert.equal(given.headers.get('x-request-id'), 'trace-123');
      const made = await api.request('GET', '/healthz');
      assert.match(made.headers.get('x-request-id') ?? '', /^[0-9A-Z]{26}$/);
    });
    it('serves healthz, readyz and Prometheus metrics by route and code', async () => {
      assert.deepEqual((await api.request('GET', '/healthz')).body, { status: 'ok' });
      assert.deepEqual((await api.request('GET', '/readyz')).body, { status: 'ready' });
      await api.request('GET', '/v1/account', { token: account.globalToken });
      const metrics = await api.request('GET', '/metrics');
      assert.match(metrics.body, /agentrt_http_requests_total\{method="GET",route="\/v1\/account",code="200"\} \d+/);
      assert.match(metrics.body, /agentrt_http_request_duration_seconds_bucket\{le="[0-9.]+",method="GET",route="\/v1\/account",code="200"\}/);
    });
    it('never writes a token to the logs', async () => {
      const key = await newKey(api, account, account.workspaceId, ['api_keys:manage']);
      await api.request('PUT', `/v1/api_keys/${key.id}/rotate`, { token: key.token });
      await api.request('GET', '/v1/account', { token: 'not.a.token' });
      const logs = api.logs.join('\n');
      assert.ok(logs.includes('"route":"/v1/api_keys/{id}/rotate"'));
      assert.ok(!logs.includes(key.token), 'a token reached the logs');
      assert.ok(!logs.includes(account.globalToken), 'a token reached the logs');
    });
    it('logs the final status of a refused request', async () => {
      await api.request('GET', '/v1/api_keys', { headers: { 'x-request-id': 'refused-1' } });
      const line = api.logs.map((entry) => JSON.parse(entry)).find((entry) => entry.requestId === 'refused-1');
      assert.equal(line?.status, 401);
      assert.equal(line?.route, '/v1/api_keys');
    });
  });
});

describe('GET /readyz while shutting down', () => {
  let api: TestApi;
  let draining = false;
  before(async () => (api = await startTestApi({ isDraining: () => draining })));
  after(async () => api.close());

  it('answers 503 UNAVAILABLE once the node drains, so load balancers stop routing to it', async () => {
    assert.equal((await api.request('GET', '/readyz')).status, 200);
    draining = true;
    const response = await api.request('GET', '/readyz');
    assert.equal(response.status, 503);
    assert.equal(response.body.code, 14);
    assert.equal(response.body.message, 'not ready: the node is shutting down');
    assert.equal((await api.request('GET', '/healthz')).status, 200);
  });
});

describe('GET /healthz once the node must be restarted', () => {
  let api: TestApi;
  const health = new DependencyHealth({ logger: silentLogger });
  before(async () => (api = await startTestApi({ health })));
  after(async () => api.close());

  it('stays 200 through an outage, and answers 503 saying why once a dependency can never be reached again', async () => {
    health.track('nats');
    health.down('nats');
    assert.equal((await api.request('GET', '/healthz')).status, 200, 'an outage is for /readyz');
    health.markDead('the NATS connection was closed by the client, which will not reconnect: the node must be restarted');
    const response = await api.request('GET', '/healthz');
    assert.equal(response.status, 503);
    assert.equal(response.body.code, 14);
    assert.match(response.body.message, /^not live: the NATS connection was closed .* must be restarted$/);
  });
});

describe('rate limits', () => {
  let api: TestApi;
  let account: TestAccount;
  before(async () => {
    api = await startTestApi({ env: { AGENTRT_RATE_LIMIT_PER_SECOND: '1', AGENTRT_RATE_LIMIT_BURST: '6', AGENTRT_RATE_LIMIT_INCLUDE_INFO_COST: '5' } });
    account = await newAccount(api);
  });
  after(async () => api.close());

  it('answers RESOURCE_EXHAUSTED with Retry-After once the bucket is empty, and counts includeInfo more', async () => {
    const key = await newKey(api, account, account.workspaceId, ['api_keys:read']);
    assert.equal((await api.request('GET', '/v1/api_keys?includeInfo=true', { token: key.token })).status, 200);
    assert.equal((await api.request('GET', '/v1/api_keys', { token: key.token })).status, 200);
    const limited = await api.request('GET', '/v1/api_keys', { token: key.token });
    assertStatus(limited, 429, Code.RESOURCE_EXHAUSTED, /rate limit exceeded/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Buckets are per principal: another key still has its own.
    const other = await newKey(api, account, account.workspaceId, ['api_keys:read']);
    assert.equal((await api.request('GET', '/v1/api_keys', { token: other.token })).status, 200);
  });
});
