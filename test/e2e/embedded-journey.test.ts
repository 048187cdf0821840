// A user's journey over HTTP against the BUILT node in its default embedded
// mode (PGlite: one backend session shared by the whole pool, a transaction on
// one connection blocking every other). Every API area is touched, requests
// are also sent in parallel, and a restart on the same data folder must still
// serve everything. Every request carries a timeout: a deadlock in the
// embedded database shows as a failed request, not a hung suite.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { assertBuilt, cliEnv, runCli, startServe, type ServeProcess } from './cli-process';

/** Longest time any single request may take before the journey fails. */
const REQUEST_TIMEOUT_MS = 15_000;

// Loose JSON shape of answers: the journey reads a few fields of each.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Reply {
  status: number;
  body: Json;
}

interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  token?: string;
}

/** A free TCP port, so the signed upload URLs (built on HOST:PORT) are reachable. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One HTTP client bound to a node and a default token. */
function client(baseUrl: () => string, defaultToken: () => string) {
  return async function call(method: string, route: string, options: CallOptions = {}): Promise<Reply> {
    const token = options.token ?? defaultToken();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrl()}${route}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    }).catch((error: Error) => {
      throw new Error(`${method} ${route} failed: ${error.message}`);
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
}

/** Asserts the status, showing the answer when it differs. */
function expectStatus(reply: Reply, status: number, what: string): Json {
  assert.equal(reply.status, status, `${what}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

const ids = (list: Json): string[] => (list.items as Json[]).map((item) => item.metadata.id as string);
const names = (list: Json): string[] => (list.items as Json[]).map((item) => item.metadata.name as string);

describe('embedded node: a user journey over every API area', function () {
  this.timeout(120_000);

  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let node: ServeProcess;
  let token: string;
  const call = client(
    () => node.url,
    () => token,
  );

  // What the journey creates, checked again after the restart.
  const state: Record<string, string> = {};
  let workspaceToken: string;
  const ws = () => `/v1/workspaces/${state.workspace}`;

  before(async () => {
    assertBuilt();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-journey-'));
    // The journey sends its requests as fast as the node answers, on one key: on a quick box that ran past the
    // default 50/s and got 429 (the rate limiter has its own tests).
    env = cliEnv({ AGENTRT_DATA_DIR: dataDir, PORT: String(await freePort()), AGENTRT_RATE_LIMIT_PER_SECOND: '10000', AGENTRT_RATE_LIMIT_BURST: '10000' });
    node = await startServe(env);
    token = (await fs.readFile(path.join(dataDir, 'global-api-key.token'), 'utf8')).trim();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') process.stdout.write(node.output().stdout.split('\n').slice(-40).join('\n'));
  });

  after(async () => {
    await node?.stop('SIGKILL');
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('shows the account and manages workspaces (create, patch, list, archive rules)', async () => {
    const account = expectStatus(await call('GET', '/v1/account'), 200, 'get account');
    assert.match(account.metadata.id, /^acc/);
    const created = expectStatus(
      await call('POST', '/v1/account/workspaces', { body: { metadata: { name: 'journey', labels: { team: 'a' } }, spec: { description: 'first' } } }),
      200,
      'create workspace',
    );
    state.workspace = created.metadata.id;
    const patched = expectStatus(
      await call('PATCH', `/v1/account/workspaces/${state.workspace}`, { body: { spec: { description: 'patched' } } }),
      200,
      'patch workspace',
    );
    assert.equal(patched.spec.description, 'patched');
    const spare = expectStatus(await call('POST', '/v1/account/workspaces', { body: { metadata: { name: 'spare' } } }), 200, 'create spare');
    expectStatus(await call('DELETE', `/v1/account/workspaces/${spare.metadata.id}`), 200, 'archive spare');
    const listed = expectStatus(await call('GET', '/v1/account/workspaces'), 200, 'list workspaces');
    assert.ok(ids(listed).includes(state.workspace));
    assert.ok(!ids(listed).includes(spare.metadata.id), 'archived workspaces are hidden by default');
    const withArchived = expectStatus(await call('GET', '/v1/account/workspaces?includeArchived=true'), 200, 'list with archived');
    assert.ok(ids(withArchived).includes(spare.metadata.id));
    const archivedCall = await call('GET', '/v1/memory_layers', { headers: { 'x-workspace-id': spare.metadata.id } });
    assert.equal(archivedCall.status, 403);
  });

  it('adds a member by email and lists the members', async () => {
    const member = expectStatus(
      await call('POST', `/v1/account/workspaces/${state.workspace}/members`, { body: { email: 'ana@example.com' } }),
      200,
      'add member',
    );
    state.memberProfile = member.profileId;
    const again = expectStatus(
      await call('POST', `/v1/account/workspaces/${state.workspace}/members`, { body: { email: 'ana@example.com' } }),
      200,
      'add member again',
    );
    assert.equal(again.actorId, member.actorId);
    const members = expectStatus(await call('GET', `/v1/account/workspaces/${state.workspace}/members`), 200, 'list members');
    assert.deepEqual(
      (members.items as Json[]).map((item) => item.email),
      ['ana@example.com'],
    );
  });

  it('creates, rotates and disables API keys whose scopes are enforced', async () => {
    const key = expectStatus(
      await call('POST', `${ws()}/api_keys`, { body: { metadata: { name: 'journey-key' }, spec: { permissions: ['*'] } } }),
      200,
      'create key',
    );
    state.apiKey = key.metadata.id;
    workspaceToken = key.spec.token;
    const narrow = expectStatus(
      await call('POST', '/v1/api_keys', { token: workspaceToken, body: { metadata: { name: 'narrow' }, spec: { permissions: ['agents:read'] } } }),
      200,
      'create narrow key',
    );
    assert.equal((await call('GET', '/v1/api_keys', { token: narrow.spec.token })).status, 403);
    expectStatus(await call('GET', `${ws()}/agents`, { token: narrow.spec.token }), 200, 'narrow key reads agents');
    const rotated = expectStatus(await call('PUT', `/v1/api_keys/${narrow.metadata.id}/rotate`, { token: workspaceToken }), 200, 'rotate');
    assert.equal((await call('GET', `${ws()}/agents`, { token: narrow.spec.token })).status, 401, 'the old token is refused');
    expectStatus(await call('GET', `${ws()}/agents`, { token: rotated.spec.token }), 200, 'the rotated token works');
    expectStatus(await call('PUT', `/v1/api_keys/${narrow.metadata.id}/disable`, { token: workspaceToken }), 200, 'disable');
    assert.equal((await call('GET', `${ws()}/agents`, { token: rotated.spec.token })).status, 401, 'a disabled key is refused');
    const keys = expectStatus(await call('GET', '/v1/api_keys', { token: workspaceToken }), 200, 'list keys');
    assert.deepEqual(names(keys).sort(), ['journey-key', 'narrow']);
  });

  it('stores workspace secrets and AI provider keys without ever returning their values', async () => {
    const secret = expectStatus(
      await call('POST', '/v1/workspace_secrets', { token: workspaceToken, body: { metadata: { name: 'CRM_TOKEN' }, spec: { value: 's3cr3t' } } }),
      200,
      'create secret',
    );
    state.secret = secret.metadata.id;
    assert.deepEqual(secret.spec, {});
    expectStatus(
      await call('PATCH', `/v1/workspace_secrets/${state.secret}`, { token: workspaceToken, body: { spec: { value: 'n3w' } } }),
      200,
      'patch secret',
    );
    const providerKey = expectStatus(
      await call('POST', `${ws()}/ai_provider_keys`, { body: { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-journey' } } }),
      200,
      'create provider key',
    );
    state.providerKey = providerKey.metadata.id;
    assert.equal(providerKey.spec.apiKey, '');
    const got = expectStatus(await call('GET', `${ws()}/ai_provider_keys/${state.providerKey}`), 200, 'get provider key');
    assert.ok(got.info.enabledModelCount > 0);
  });

  it('lists models and disables and enables one', async () => {
    const models = expectStatus(await call('GET', '/v1/models?prefix=builtin/', { token: workspaceToken }), 200, 'list models');
    assert.deepEqual(names(models), ['builtin/scripted']);
    state.model = models.items[0].metadata.id;
    const all = expectStatus(await call('GET', '/v1/models?limit=100', { token: workspaceToken }), 200, 'list all models');
    const other = (all.items as Json[]).find((model) => model.metadata.name !== 'builtin/scripted');
    const disabled = expectStatus(
      await call('PUT', `/v1/models/${other.metadata.id}/status`, { token: workspaceToken, body: { status: 'MODEL_STATUS_DISABLED' } }),
      200,
      'disable model',
    );
    assert.equal(disabled.spec.status, 'MODEL_STATUS_DISABLED');
    const onlyDisabled = expectStatus(await call('GET', '/v1/models?status=MODEL_STATUS_DISABLED', { token: workspaceToken }), 200, 'list disabled');
    assert.deepEqual(ids(onlyDisabled), [other.metadata.id]);
    expectStatus(
      await call('PUT', `/v1/models/${other.metadata.id}/status`, { token: workspaceToken, body: { status: 'MODEL_STATUS_ENABLED' } }),
      200,
      'enable model',
    );
  });

  it('manages a memory layer and its entries, one of them from an upload', async () => {
    const opts = { token: workspaceToken };
    const layer = expectStatus(
      await call('POST', '/v1/memory_layers', { ...opts, body: { metadata: { name: 'support-notes' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } }),
      200,
      'create layer',
    );
    state.layer = layer.metadata.id;
    const entries = `/v1/memory_layers/${state.layer}/entries`;
    const refunds = expectStatus(
      await call('POST', entries, { ...opts, body: { spec: { key: 'policies/refunds', content: 'Refunds are granted within thirty days.', title: 'Refunds' } } }),
      200,
      'create entry',
    );
    state.entry = refunds.metadata.id;
    expectStatus(await call('POST', entries, { ...opts, body: { spec: { key: 'policies/shipping', content: 'Ships in two days.' } } }), 200, 'second');
    const scratch = expectStatus(await call('POST', entries, { ...opts, body: { spec: { key: 'scratch', content: 'temporary' } } }), 200, 'third');
    const byPrefix = expectStatus(await call('GET', `${entries}?prefix=policies/`, opts), 200, 'list by prefix');
    assert.deepEqual(names(byPrefix), ['policies/refunds', 'policies/shipping']);
    assert.equal(byPrefix.items[0].content, undefined, 'lists carry no content');
    const patched = expectStatus(
      await call('PATCH', `${entries}/${state.entry}`, { ...opts, body: { spec: { title: 'Refund policy' } } }),
      200,
      'patch entry',
    );
    assert.equal(patched.spec.title, 'Refund policy');
    assert.equal(patched.content, 'Refunds are granted within thirty days.');
    expectStatus(await call('DELETE', `${entries}/${scratch.metadata.id}`, opts), 200, 'delete entry');

    const bytes = Buffer.from('Escalate billing disputes to finance.');
    const upload = expectStatus(
      await call('POST', '/v1/uploads', { ...opts, body: { filename: 'escalation.txt', contentType: 'text/plain', sizeBytes: bytes.length } }),
      200,
      'create upload',
    );
    const put = await fetch(upload.info.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: bytes,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    assert.equal(put.status, 200, await put.text());
    expectStatus(await call('POST', `/v1/uploads/${upload.metadata.id}/complete`, opts), 200, 'complete upload');
    const fromUpload = expectStatus(
      await call('POST', entries, { ...opts, body: { spec: { key: 'escalation', uploadId: upload.metadata.id } } }),
      200,
      'entry from upload',
    );
    assert.equal(fromUpload.content, bytes.toString());
    const consumed = expectStatus(await call('GET', `/v1/uploads/${upload.metadata.id}`, opts), 200, 'get upload');
    assert.equal(consumed.info.status, 'UPLOAD_STATUS_CONSUMED');

    // The largest body an entry may hold (1 MiB), written while other requests read.
    const big = 'ab'.repeat(512 * 1024);
    const [bigEntry] = await Promise.all([
      call('POST', entries, { ...opts, body: { spec: { key: 'big', content: big } } }),
      call('GET', entries, opts),
      call('GET', `/v1/memory_layers/${state.layer}`, opts),
    ]);
    const read = expectStatus(await call('GET', `${entries}/${expectStatus(bigEntry, 200, 'big entry').metadata.id}`, opts), 200, 'read big');
    assert.equal(read.content, big);
  });

  it('builds an agent with variations (both path styles), tools, tool sets and assignments', async () => {
    const agent = expectStatus(
      await call('POST', `${ws()}/agents`, { body: { metadata: { name: 'billing-helper' }, spec: { description: 'Answers invoice questions' } } }),
      200,
      'create agent',
    );
    state.agent = agent.metadata.id;
    const helper = expectStatus(await call('POST', `${ws()}/agents`, { body: { metadata: { name: 'lookup-helper' } } }), 200, 'sub-agent');
    state.subAgent = helper.metadata.id;
    const variation = expectStatus(
      await call('POST', `${ws()}/agents/${state.agent}/variations`, {
        body: { metadata: { name: 'default' }, spec: { prompt: 'Help with invoices.', modelConfig: { modelId: 'builtin/scripted' } } },
      }),
      200,
      'create variation (workspace path)',
    );
    state.variation = variation.metadata.id;
    const flat = expectStatus(
      await call('POST', `/v1/agents/${state.agent}/variations`, {
        token: workspaceToken,
        body: { metadata: { name: 'terse' }, spec: { prompt: 'Be brief.', modelConfig: { modelId: 'builtin/scripted', temperature: 0.2 } } },
      }),
      200,
      'create variation (flat path)',
    );
    const flatList = expectStatus(await call('GET', `/v1/agents/${state.agent}/variations`, { token: workspaceToken }), 200, 'list (flat)');
    assert.deepEqual(names(flatList).sort(), ['default', 'terse']);
    expectStatus(
      await call('PATCH', `${ws()}/agents/${state.agent}/variations/${flat.metadata.id}`, { body: { spec: { modelConfig: { temperature: 0.9 } } } }),
      200,
      'patch variation',
    );

    const tool = expectStatus(
      await call('POST', `${ws()}/tools`, {
        body: { metadata: { name: 'invoice_lookup' }, spec: { description: 'Finds an invoice by number', http: { url: 'https://billing.example.com/invoices', method: 'GET' } } },
      }),
      200,
      'create tool',
    );
    state.tool = tool.metadata.id;
    const toolSet = expectStatus(await call('POST', `${ws()}/tool_sets`, { body: { metadata: { name: 'billing' } } }), 200, 'create tool set');
    state.toolSet = toolSet.metadata.id;
    const withTool = expectStatus(await call('POST', `${ws()}/tool_sets/${state.toolSet}/tools`, { body: { toolId: state.tool } }), 200, 'add tool');
    assert.equal(withTool.info.toolCount, 1);
    expectStatus(await call('DELETE', `${ws()}/tool_sets/${state.toolSet}/tools/${state.tool}`), 200, 'remove tool');
    expectStatus(await call('POST', `${ws()}/tool_sets/${state.toolSet}/tools`, { body: { toolId: state.tool } }), 200, 'add tool again');

    const assign = (body: unknown) => call('POST', `/v1/agent_variations/${state.variation}/assignments`, { token: workspaceToken, body });
    expectStatus(await assign({ toolId: state.tool }), 200, 'assign tool');
    expectStatus(await assign({ toolSetId: state.toolSet }), 200, 'assign tool set');
    expectStatus(await assign({ agentId: state.subAgent }), 200, 'assign sub-agent');
    expectStatus(
      await call('POST', `${ws()}/agents/${state.agent}/variations/${state.variation}/memory_layer_assignments`, { body: { memoryLayerId: state.layer } }),
      200,
      'assign memory layer',
    );
    const detail = expectStatus(await call('GET', `${ws()}/agents/${state.agent}/variations/${state.variation}`), 200, 'get variation');
    assert.equal(detail.info.model.name, 'builtin/scripted');
    assert.equal(detail.info.toolCount, 1);
    assert.equal(detail.info.toolSetCount, 1);
    assert.equal(detail.info.subAgentCount, 1);
    assert.equal(detail.info.memoryLayerAssignments.length, 1);
  });

  it('lists no feedback and no tenants yet', async () => {
    const feedback = expectStatus(await call('GET', `${ws()}/agents/${state.agent}/feedback`), 200, 'list feedback');
    assert.deepEqual(feedback.items, []);
    const tenants = expectStatus(await call('GET', `${ws()}/tenants?includeInfo=true`), 200, 'list tenants');
    assert.deepEqual(tenants.items, []);
  });

  it('finds the agent, the tool and the memory entry by search', async () => {
    const search = async (query: string) =>
      expectStatus(await call('GET', `${ws()}/search?query=${encodeURIComponent(query)}`), 200, `search ${query}`).items as Json[];
    assert.ok((await search('invoice questions')).some((hit) => hit.type === 'agents' && hit.metadata.id === state.agent));
    assert.ok((await search('invoice number')).some((hit) => hit.type === 'tools' && hit.metadata.id === state.tool));
    assert.ok((await search('refunds thirty days')).some((hit) => hit.type === 'memory_entries' && hit.metadata.id === state.entry));
  });

  const bundle = {
    tools: [{ metadata: { name: 'lookup_order' }, spec: { http: { url: 'https://api.example.com/orders', method: 'GET' } } }],
    toolSets: [{ metadata: { name: 'orders' }, spec: { description: 'Order tools' }, tools: ['lookup_order'] }],
    memoryLayers: [
      {
        metadata: { name: 'order-skills' },
        spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' },
        entries: [{ spec: { key: 'returns', content: 'Returns within 30 days.', title: 'Returns' } }],
      },
    ],
    agents: [
      {
        metadata: { name: 'triage' },
        spec: { status: 'AGENT_STATUS_PUBLISHED' },
        variations: [
          {
            metadata: { name: 'default' },
            spec: { prompt: 'Route it.', modelConfig: { modelId: 'builtin/scripted' } },
            tools: ['lookup_order'],
            toolSets: ['orders'],
            subAgents: ['billing-helper'],
            memoryLayers: ['order-skills'],
          },
        ],
      },
    ],
  };

  it('applies a bundle, re-applies it without change, dry-runs, reads and deletes it', async () => {
    const url = `${ws()}/bundles/orders`;
    const applied = expectStatus(await call('PUT', url, { body: bundle }), 200, 'apply');
    assert.equal(applied.created.length, 6);
    const again = expectStatus(await call('PUT', url, { body: bundle }), 200, 're-apply');
    assert.deepEqual([again.created, again.updated, again.deleted], [[], [], []]);
    assert.equal(again.unchanged.length, 6);
    const dry = expectStatus(
      await call('PUT', `${url}?dryRun=true`, { body: { ...bundle, tools: [...bundle.tools, { metadata: { name: 'cancel_order' }, spec: bundle.tools[0].spec }] } }),
      200,
      'dry run',
    );
    assert.equal(dry.dryRun, true);
    assert.deepEqual(dry.created, [{ type: 'tool', name: 'cancel_order' }]);
    const tools = expectStatus(await call('GET', `${ws()}/tools?prefix=cancel`), 200, 'tools after dry run');
    assert.deepEqual(tools.items, [], 'a dry run changes nothing');
    const document = expectStatus(await call('GET', url), 200, 'get bundle');
    assert.deepEqual(document.agents.map((agent: Json) => agent.metadata.name), ['triage']);
    expectStatus(await call('DELETE', url), 200, 'delete bundle');
    assert.equal((await call('GET', url)).status, 404);
    expectStatus(await call('PUT', url, { body: bundle }), 200, 'apply again for the restart check');
  });

  it('answers 20 parallel creates and lists, and a bundle apply among concurrent writes', async () => {
    const creates = Array.from({ length: 20 }, (_, index) =>
      call('POST', `${ws()}/agents`, { body: { metadata: { name: `parallel-${index}` } } }),
    );
    const lists = Array.from({ length: 20 }, () => call('GET', `${ws()}/agents?limit=100`));
    const replies = await Promise.all([...creates, ...lists]);
    for (const reply of replies) expectStatus(reply, 200, 'parallel request');
    const listed = expectStatus(await call('GET', `${ws()}/agents?prefix=parallel-&limit=100`), 200, 'list parallel');
    assert.equal(listed.items.length, 20);

    const changed = { ...bundle, tools: [...bundle.tools, { metadata: { name: 'refund_order' }, spec: bundle.tools[0].spec }] };
    const mixed = await Promise.all([
      call('PUT', `${ws()}/bundles/orders`, { body: changed }),
      call('PUT', `${ws()}/bundles/other`, { body: { tools: [{ metadata: { name: 'other_tool' }, spec: bundle.tools[0].spec }] } }),
      ...Array.from({ length: 5 }, (_, index) => call('POST', `${ws()}/tools`, { body: { metadata: { name: `side_${index}` }, spec: bundle.tools[0].spec } })),
      ...Array.from({ length: 5 }, (_, index) =>
        call('POST', `/v1/memory_layers/${state.layer}/entries`, { token: workspaceToken, body: { spec: { key: `side/${index}`, content: 'x' } } }),
      ),
      call('GET', `${ws()}/search?query=order`),
      call('GET', `${ws()}/bundles/orders`),
    ]);
    for (const reply of mixed) expectStatus(reply, 200, 'concurrent request');
    assert.deepEqual(mixed[0].body.created, [{ type: 'tool', name: 'refund_order', id: mixed[0].body.created[0].id }]);
  });

  it('keeps transactions, refused writes and reads apart when they all arrive at once', async () => {
    const spec = bundle.tools[0].spec;
    const storm = await Promise.all([
      // Transactions: workspaces seeded with the catalog, keys with profiles, assignments under a lock.
      ...Array.from({ length: 3 }, (_, index) => call('POST', '/v1/account/workspaces', { body: { metadata: { name: `storm-${index}` } } })),
      ...Array.from({ length: 3 }, (_, index) => call('POST', `${ws()}/api_keys`, { body: { metadata: { name: `storm-${index}` }, spec: { permissions: ['agents:read'] } } })),
      ...Array.from({ length: 3 }, (_, index) =>
        call('POST', `/v1/agents/${state.agent}/variations`, { token: workspaceToken, body: { metadata: { name: `storm-${index}` }, spec: { modelConfig: { modelId: 'builtin/scripted' } } } }),
      ),
      // The same bundle twice (applies of one bundle are serialised) and another one.
      call('PUT', `${ws()}/bundles/storm`, { body: { tools: [{ metadata: { name: 'storm_tool' }, spec }] } }),
      call('PUT', `${ws()}/bundles/storm`, { body: { tools: [{ metadata: { name: 'storm_tool' }, spec }] } }),
      // Refused writes: a duplicate key, a duplicate assignment, an unknown model.
      call('POST', `/v1/memory_layers/${state.layer}/entries`, { token: workspaceToken, body: { spec: { key: 'policies/refunds', content: 'dup' } } }),
      call('POST', `/v1/agent_variations/${state.variation}/assignments`, { token: workspaceToken, body: { toolId: state.tool } }),
      call('POST', `${ws()}/agents/${state.agent}/variations`, { body: { metadata: { name: 'bad' }, spec: { modelConfig: { modelId: 'no/such-model' } } } }),
      // Reads of every kind.
      ...['agents', 'tools', 'tool_sets', 'api_keys', 'ai_provider_keys', 'tenants'].map((kind) => call('GET', `${ws()}/${kind}?includeInfo=true`)),
      call('GET', '/v1/memory_layers?includeInfo=true', { token: workspaceToken }),
      call('GET', '/v1/models?limit=100', { token: workspaceToken }),
      call('GET', `${ws()}/search?query=refunds`),
    ]);
    const statuses = storm.map((reply) => reply.status);
    assert.deepEqual(statuses.slice(0, 11), Array(11).fill(200), JSON.stringify(storm.slice(0, 11).map((reply) => reply.body)));
    assert.deepEqual(statuses.slice(11, 14), [409, 409, 400], JSON.stringify(storm.slice(11, 14).map((reply) => reply.body)));
    for (const reply of storm.slice(14)) expectStatus(reply, 200, 'read during the storm');
    const stormTools = expectStatus(await call('GET', `${ws()}/tools?prefix=storm_`), 200, 'storm tools');
    assert.equal(stormTools.items.length, 1, 'two applies of one bundle create its tool once');
  });

  it('replays an Idempotency-Key, removes a member, deletes with cascades and rotates the global key', async () => {
    const opts = { token: workspaceToken, headers: { 'idempotency-key': 'journey-layer-1' } };
    const layerBody = { metadata: { name: 'scratch-layer' }, spec: { type: 'MEMORY_LAYER_TYPE_EPISODIC' } };
    const first = expectStatus(await call('POST', '/v1/memory_layers', { ...opts, body: layerBody }), 200, 'idempotent create');
    const replay = expectStatus(await call('POST', '/v1/memory_layers', { ...opts, body: layerBody }), 200, 'replay');
    assert.equal(replay.metadata.id, first.metadata.id);

    expectStatus(await call('DELETE', `/v1/account/workspaces/${state.workspace}/members/${state.memberProfile}`), 200, 'remove member');
    const members = expectStatus(await call('GET', `/v1/account/workspaces/${state.workspace}/members`), 200, 'members');
    assert.deepEqual(members.items, []);

    // A layer, a tool and a sub-agent on a throwaway variation, then deleted from under it.
    const variation = expectStatus(
      await call('POST', `${ws()}/agents/${state.agent}/variations`, { body: { metadata: { name: 'throwaway' }, spec: { modelConfig: { modelId: 'builtin/scripted' } } } }),
      200,
      'throwaway variation',
    );
    const base = `${ws()}/agents/${state.agent}/variations/${variation.metadata.id}`;
    const tool = expectStatus(await call('POST', `${ws()}/tools`, { body: { metadata: { name: 'throwaway_tool' }, spec: bundle.tools[0].spec } }), 200, 'tool');
    const agent = expectStatus(await call('POST', `${ws()}/agents`, { body: { metadata: { name: 'throwaway-agent' } } }), 200, 'agent');
    expectStatus(await call('POST', `${base}/assignments`, { body: { toolId: tool.metadata.id } }), 200, 'assign tool');
    expectStatus(await call('POST', `${base}/assignments`, { body: { agentId: agent.metadata.id } }), 200, 'assign agent');
    expectStatus(await call('POST', `${base}/memory_layer_assignments`, { body: { memoryLayerId: first.metadata.id } }), 200, 'assign layer');
    const refused = await call('DELETE', `/v1/memory_layers/${first.metadata.id}`, { token: workspaceToken });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 9);
    const deletions = await Promise.all([
      call('DELETE', `/v1/memory_layers/${first.metadata.id}?force=true`, { token: workspaceToken }),
      call('DELETE', `${ws()}/tools/${tool.metadata.id}`),
      call('DELETE', `${ws()}/agents/${agent.metadata.id}`),
      call('GET', base),
    ]);
    for (const reply of deletions) expectStatus(reply, 200, 'deletion');
    const after = expectStatus(await call('GET', base), 200, 'variation after deletions');
    assert.deepEqual([after.info.assignments, after.info.memoryLayerAssignments], [[], []]);
    expectStatus(await call('DELETE', base), 200, 'delete variation');
    assert.equal((await call('GET', `${ws()}/tenants/tenant_01ARZ3NDEKTSV4RRFFQ69G5FAV`)).status, 404);

    // Archive every other workspace at once; the last one left cannot be archived.
    const others = ids(expectStatus(await call('GET', '/v1/account/workspaces?limit=100'), 200, 'workspaces')).filter((id) => id !== state.workspace);
    for (const reply of await Promise.all(others.map((id) => call('DELETE', `/v1/account/workspaces/${id}`)))) expectStatus(reply, 200, 'archive');
    const last = await call('DELETE', `/v1/account/workspaces/${state.workspace}`);
    assert.equal(last.status, 400, JSON.stringify(last.body));
    assert.equal(last.body.code, 9);

    const rotated = expectStatus(await call('PUT', '/v1/account/global_api_key/rotate'), 200, 'rotate the global key');
    assert.equal((await call('GET', '/v1/account')).status, 401, 'the old global token is refused');
    token = rotated.spec.token;
    expectStatus(await call('GET', '/v1/account'), 200, 'the new global token works');
  });

  it('exits 0 on SIGTERM and, after a master key rotation, serves everything again on the same data folder', async () => {
    const stopped = await node.stop('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null });
    // The operator rotates the master key while the node is down.
    const rotation = await runCli(['rotate-master-key', '--new-key', randomBytes(32).toString('base64')], env);
    assert.equal(rotation.code, 0, rotation.stderr);
    node = await startServe(env);
    expectStatus(await call('GET', `/v1/account/workspaces/${state.workspace}`), 200, 'workspace');
    expectStatus(await call('GET', `/v1/api_keys/${state.apiKey}`, { token: workspaceToken }), 200, 'api key with its token');
    expectStatus(await call('GET', `/v1/workspace_secrets/${state.secret}`, { token: workspaceToken }), 200, 'secret');
    expectStatus(await call('GET', `${ws()}/ai_provider_keys/${state.providerKey}`), 200, 'provider key');
    const entry = expectStatus(await call('GET', `/v1/memory_layers/${state.layer}/entries/${state.entry}`, { token: workspaceToken }), 200, 'entry');
    assert.equal(entry.spec.title, 'Refund policy');
    const variation = expectStatus(await call('GET', `${ws()}/agents/${state.agent}/variations/${state.variation}`), 200, 'variation');
    assert.equal(variation.info.assignments.length, 3);
    expectStatus(await call('GET', `${ws()}/tool_sets/${state.toolSet}`), 200, 'tool set');
    const document = expectStatus(await call('GET', `${ws()}/bundles/orders`), 200, 'bundle');
    assert.deepEqual(document.tools.map((tool: Json) => tool.metadata.name), ['lookup_order', 'refund_order']);
    const members = expectStatus(await call('GET', `/v1/account/workspaces/${state.workspace}/members`), 200, 'members');
    assert.deepEqual(members.items, []);
    const hits = expectStatus(await call('GET', `${ws()}/search?query=invoice`), 200, 'search').items as Json[];
    assert.ok(hits.some((hit) => hit.metadata.id === state.agent));
    assert.deepEqual(await node.stop('SIGTERM'), { code: 0, signal: null });
  });
});
