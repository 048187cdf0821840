import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import type { BootstrapResult } from '../../src/accounts/account.service';

interface PlanItem { type: string; name: string; id?: string }
interface Plan { bundleKey: string; dryRun: boolean; created: PlanItem[]; updated: PlanItem[]; deleted: PlanItem[]; unchanged: PlanItem[] }

interface TestVariation {
  metadata: { name: string };
  spec?: Record<string, unknown>;
  tools?: string[];
  toolSets?: string[];
  subAgents?: string[];
  memoryLayers?: string[];
}
interface TestAgent {
  metadata: { name: string };
  spec?: Record<string, unknown>;
  variations?: TestVariation[];
  schedules?: unknown[];
}

/** A complete bundle: tools, a tool set, a skills layer with an entry, two agents with variations. */
function supportBundle() {
  const agents: TestAgent[] = [
    {
      metadata: { name: 'triage' },
      spec: { description: 'Routes requests' },
      variations: [{ metadata: { name: 'default' }, spec: { prompt: 'Route it.', modelConfig: { modelId: 'builtin/scripted' } }, subAgents: ['refunder'], memoryLayers: ['support-skills'] }],
      schedules: [],
    },
    {
      metadata: { name: 'refunder' },
      spec: { status: 'AGENT_STATUS_PUBLISHED' },
      variations: [{ metadata: { name: 'v1' }, spec: { prompt: 'Refund.', weight: 2 }, tools: ['lookup_order'], toolSets: ['orders'] }],
    },
  ];
  return {
    tools: [
      { metadata: { name: 'lookup_order', labels: { team: 'support' } }, spec: { description: 'Looks up an order', http: { url: 'https://api.example.com/orders', method: 'GET' } } },
      {
        metadata: { name: 'refund_order' },
        spec: { description: 'Refunds an order', requiresApproval: true, http: { url: 'https://api.example.com/refunds', method: 'POST', headers: { Authorization: 'Bearer {{secrets.SHOP}}' } } },
      },
    ],
    toolSets: [{ metadata: { name: 'orders' }, spec: { description: 'Order tools' }, tools: ['lookup_order', 'refund_order'] }],
    memoryLayers: [
      {
        metadata: { name: 'support-skills' },
        spec: { type: 'MEMORY_LAYER_TYPE_SKILLS', description: 'How we do support' },
        entries: [{ spec: { key: 'refunds', content: 'Refund within 30 days.', title: 'Refunds' } }],
      },
    ],
    agents,
  };
}

const names = (items: PlanItem[]) => items.map((item) => `${item.type}:${item.name}`).sort();
const ALL = ['agent:refunder', 'agent:triage', 'memoryEntry:support-skills/refunds', 'memoryLayer:support-skills', 'tool:lookup_order', 'tool:refund_order', 'toolSet:orders', 'variation:refunder/v1', 'variation:triage/default'];

describe('bundles API', () => {
  let api: TestApi;
  let account: BootstrapResult;
  let token: string;

  const base = (workspaceId = account.workspaceId) => `/v1/workspaces/${workspaceId}`;
  const apply = (key: string, body: unknown, query = '', as = token, workspaceId = account.workspaceId) =>
    api.request<Plan>('PUT', `${base(workspaceId)}/bundles/${key}${query}`, { token: as, body });
  const list = async (kind: string, workspaceId = account.workspaceId) =>
    (await api.request('GET', `${base(workspaceId)}/${kind}?limit=1000&includeInfo=true`, { token })).body.items as Array<{ metadata: { id: string; name: string; bundleKey?: string; updatedAt: string }; spec: Record<string, unknown>; info?: Record<string, unknown> }>;
  const flat = { 'x-workspace-id': '' };
  const layers = async () => (await api.request('GET', '/v1/memory_layers?limit=1000', { token, headers: { ...flat, 'x-workspace-id': account.workspaceId } })).body.items as Array<{ metadata: { id: string; name: string; bundleKey?: string; updatedAt: string } }>;

  async function createKey(permissions: string[]): Promise<string> {
    const response = await api.request('POST', `${base()}/api_keys`, { token, body: { metadata: { name: 'narrow' }, spec: { permissions } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.spec.token;
  }

  /** Every resource of the workspace with its updatedAt, to prove a re-apply touched nothing. */
  async function snapshot(): Promise<Record<string, string>> {
    const result: Record<string, string> = {};
    for (const kind of ['tools', 'tool_sets', 'agents']) for (const item of await list(kind)) result[item.metadata.id] = item.metadata.updatedAt;
    for (const layer of await layers()) {
      result[layer.metadata.id] = layer.metadata.updatedAt;
      const entries = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}/entries`, { token, headers: { 'x-workspace-id': account.workspaceId } });
      for (const entry of entries.body.items) result[entry.metadata.id] = entry.metadata.updatedAt;
    }
    for (const agent of await list('agents')) {
      const variations = (await api.request('GET', `${base()}/agents/${agent.metadata.id}/variations`, { token })).body.items;
      for (const variation of variations) result[variation.metadata.id] = variation.metadata.updatedAt;
    }
    return result;
  }

  beforeEach(async () => {
    api ??= await startTestApi();
    account = await api.bootstrap();
    token = account.globalApiKey.token;
  });
  after(async () => api?.close());

  describe('PUT /v1/workspaces/{workspaceId}/bundles/{bundleKey}', () => {
    it('creates every resource of the document and marks it with the bundle key', async () => {
      const response = await apply('support', supportBundle());
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.bundleKey, 'support');
      assert.equal(response.body.dryRun, false);
      assert.deepEqual(names(response.body.created), ALL);
      assert.deepEqual([response.body.updated, response.body.deleted, response.body.unchanged], [[], [], []]);
      assert.ok(response.body.created.every((item) => item.id));

      const tools = await list('tools');
      assert.deepEqual(tools.map((tool) => [tool.metadata.name, tool.metadata.bundleKey]).sort(), [['lookup_order', 'support'], ['refund_order', 'support']]);
      const [set] = await list('tool_sets');
      assert.equal(set.metadata.bundleKey, 'support');
      assert.deepEqual((set.info!.tools as Array<{ name: string }>).map((tool) => tool.name).sort(), ['lookup_order', 'refund_order']);
      const [layer] = await layers();
      assert.equal(layer.metadata.bundleKey, 'support');
      const entries = await api.request('GET', `/v1/memory_layers/${layer.metadata.id}/entries`, { token, headers: { 'x-workspace-id': account.workspaceId } });
      assert.deepEqual(entries.body.items.map((entry: { spec: { key: string } }) => entry.spec.key), ['refunds']);

      const agents = new Map((await list('agents')).map((agent) => [agent.metadata.name, agent]));
      assert.equal(agents.get('refunder')!.spec.status, 'AGENT_STATUS_PUBLISHED');
      assert.equal(agents.get('triage')!.metadata.bundleKey, 'support');
      const triage = (await api.request('GET', `${base()}/agents/${agents.get('triage')!.metadata.id}/variations?includeInfo=true`, { token })).body.items[0];
      assert.equal(triage.metadata.bundleKey, 'support');
      assert.equal(triage.info.subAgentCount, 1);
      assert.equal(triage.info.assignments[0].agent.name, 'refunder');
      assert.deepEqual(triage.info.memoryLayerAssignments.map((row: { memoryLayer: { name: string } }) => row.memoryLayer.name), ['support-skills']);
      const refunder = (await api.request('GET', `${base()}/agents/${agents.get('refunder')!.metadata.id}/variations?includeInfo=true`, { token })).body.items[0];
      assert.deepEqual([refunder.info.toolCount, refunder.info.toolSetCount, refunder.spec.weight], [1, 1, 2]);
    });

    it('plans no change and touches no updatedAt when the same document is applied again', async () => {
      await apply('support', supportBundle());
      const before = await snapshot();
      const again = await apply('support', supportBundle());
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual([again.body.created, again.body.updated, again.body.deleted], [[], [], []]);
      assert.deepEqual(names(again.body.unchanged), ALL);
      assert.deepEqual(await snapshot(), before);
    });

    it('updates only what changed', async () => {
      await apply('support', supportBundle());
      const before = await snapshot();
      const changed = supportBundle();
      changed.tools[0].spec.description = 'Finds an order by number';
      changed.memoryLayers[0].entries[0].spec.content = 'Refund within 60 days.';
      const response = await apply('support', changed);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(names(response.body.updated), ['memoryEntry:support-skills/refunds', 'tool:lookup_order']);
      assert.deepEqual([response.body.created, response.body.deleted], [[], []]);
      const after = await snapshot();
      const tool = (await list('tools')).find((item) => item.metadata.name === 'lookup_order')!;
      const entryId = response.body.updated.find((item) => item.type === 'memoryEntry')!.id!;
      assert.notEqual(after[tool.metadata.id], before[tool.metadata.id]);
      assert.notEqual(after[entryId], before[entryId]);
      assert.equal(tool.spec.description, 'Finds an order by number');
      const others = Object.keys(before).filter((id) => id !== tool.metadata.id && id !== entryId);
      assert.deepEqual(others.map((id) => after[id]), others.map((id) => before[id]));
    });

    it('deletes what the document no longer holds, and reports membership and assignment changes as updates', async () => {
      await apply('support', supportBundle());
      const smaller = supportBundle();
      smaller.toolSets[0].tools = ['lookup_order'];
      smaller.memoryLayers[0].entries = [];
      smaller.agents[0].variations![0].subAgents = [];
      const response = await apply('support', smaller);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(names(response.body.deleted), ['memoryEntry:support-skills/refunds']);
      assert.deepEqual(names(response.body.updated), ['toolSet:orders', 'variation:triage/default']);
      assert.deepEqual(response.body.created, []);
      const fewer = supportBundle();
      fewer.tools = fewer.tools.slice(0, 1);
      fewer.toolSets[0].tools = ['lookup_order'];
      fewer.agents = [{ ...fewer.agents[0], variations: [] }];
      const dropped = await apply('support', fewer);
      assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
      assert.deepEqual(names(dropped.body.deleted), ['agent:refunder', 'tool:refund_order', 'variation:triage/default']);
      assert.deepEqual(names(dropped.body.created), ['memoryEntry:support-skills/refunds']);
      assert.deepEqual((await list('tools')).map((tool) => tool.metadata.name), ['lookup_order']);
      assert.deepEqual((await list('agents')).map((agent) => agent.metadata.name), ['triage']);
    });

    it('deletes a memory layer the document dropped together with its place in a variation\'s stack', async () => {
      await apply('support', supportBundle());
      const without = supportBundle();
      without.memoryLayers = [];
      without.agents[0].variations![0].memoryLayers = [];
      const response = await apply('support', without);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(names(response.body.deleted), ['memoryLayer:support-skills']);
      assert.deepEqual(names(response.body.updated), ['variation:triage/default']);
      assert.deepEqual(await layers(), []);
    });

    it('refuses to delete a dropped memory layer still used by a variation outside the bundle, changing nothing', async () => {
      await apply('support', supportBundle());
      const [layer] = await layers();
      const agent = await api.request('POST', `${base()}/agents`, { token, body: { metadata: { name: 'outsider' } } });
      const variation = await api.request('POST', `${base()}/agents/${agent.body.metadata.id}/variations`, { token, body: { metadata: { name: 'v' } } });
      const assigned = await api.request('POST', `${base()}/agents/${agent.body.metadata.id}/variations/${variation.body.metadata.id}/memory_layer_assignments`, {
        token, body: { memoryLayerId: layer.metadata.id },
      });
      assert.equal(assigned.status, 200, JSON.stringify(assigned.body));
      const without = supportBundle();
      without.memoryLayers = [];
      without.agents[0].variations![0].memoryLayers = [];
      const response = await apply('support', without);
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { code: number }).code, 9);
      assert.match((response.body as unknown as { message: string }).message, new RegExp(`^memory layer ${layer.metadata.id} is assigned to 1 variation`));
      assert.equal((await layers()).length, 1);
    });

    it('serialises concurrent applies of one bundle', async () => {
      const [first, second] = await Promise.all([apply('support', supportBundle()), apply('support', supportBundle())]);
      assert.deepEqual([first.status, second.status], [200, 200]);
      assert.deepEqual([first.body.created.length + second.body.created.length, first.body.unchanged.length + second.body.unchanged.length], [ALL.length, ALL.length]);
      assert.equal((await list('tools')).length, 2);
    });

    it('answers the plan of a dry run and changes nothing', async () => {
      const response = await apply('support', supportBundle(), '?dryRun=true');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.dryRun, true);
      assert.deepEqual(names(response.body.created), ALL);
      assert.ok(response.body.created.every((item) => item.id === undefined));
      assert.deepEqual([await list('tools'), await list('agents'), await list('tool_sets')], [[], [], []]);
      await apply('support', supportBundle());
      const before = await snapshot();
      const changed = supportBundle();
      changed.agents[1].spec!.status = 'AGENT_STATUS_ARCHIVED';
      const dry = await apply('support', changed, '?dryRun=true');
      assert.deepEqual(names(dry.body.updated), ['agent:refunder']);
      assert.deepEqual(await snapshot(), before);
      assert.equal((await list('agents')).find((agent) => agent.metadata.name === 'refunder')!.spec.status, 'AGENT_STATUS_PUBLISHED');
    });

    it('refuses a same-named resource of no bundle with FAILED_PRECONDITION naming it, and adopts it when told', async () => {
      const existing = await api.request('POST', `${base()}/tools`, { token, body: { metadata: { name: 'lookup_order' }, spec: { http: { url: 'https://old.example.com', method: 'GET' } } } });
      const id = existing.body.metadata.id;
      const refused = await apply('support', supportBundle());
      assert.equal(refused.status, 400);
      assert.equal((refused.body as unknown as { code: number }).code, 9);
      assert.equal((refused.body as unknown as { message: string }).message, `tool "lookup_order" (${id}) is not owned by any bundle; apply with adopt=true to take it over`);
      assert.deepEqual((await list('agents')), []);
      const adopted = await apply('support', supportBundle(), '?adopt=true');
      assert.equal(adopted.status, 200, JSON.stringify(adopted.body));
      assert.deepEqual(adopted.body.updated, [{ type: 'tool', name: 'lookup_order', id }]);
      const tool = (await list('tools')).find((item) => item.metadata.id === id)!;
      assert.equal(tool.metadata.bundleKey, 'support');
      assert.equal((tool.spec.http as { url: string }).url, 'https://api.example.com/orders');
    });

    it('refuses resources of another bundle unless adopted', async () => {
      await apply('first', { tools: supportBundle().tools.slice(0, 1) });
      const refused = await apply('second', { tools: supportBundle().tools.slice(0, 1) });
      assert.equal(refused.status, 400);
      assert.match((refused.body as unknown as { message: string }).message, /^tool "lookup_order" \(tool_[0-9A-Z]+\) is owned by bundle "first"; apply with adopt=true to take it over$/);
      const adopted = await apply('second', { tools: supportBundle().tools.slice(0, 1) }, '?adopt=true');
      assert.equal(adopted.status, 200);
      assert.equal((await list('tools'))[0].metadata.bundleKey, 'second');
      assert.equal((await api.request('GET', `${base()}/bundles/first`, { token })).status, 404);
    });

    it('lets references name resources of the workspace outside the bundle', async () => {
      await api.request('POST', `${base()}/tools`, { token, body: { metadata: { name: 'shared_tool' }, spec: { http: { url: 'https://api.example.com/shared', method: 'GET' } } } });
      const response = await apply('refs', { agents: [{ metadata: { name: 'user' }, variations: [{ metadata: { name: 'v' }, tools: ['shared_tool'] }] }] });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const shared = (await list('tools'))[0];
      assert.equal(shared.metadata.bundleKey, undefined);
      const unknown = await apply('refs', { agents: [{ metadata: { name: 'user' }, variations: [{ metadata: { name: 'v' }, tools: ['missing_tool'] }] }] });
      assert.equal(unknown.status, 400);
      assert.equal((unknown.body as unknown as { message: string }).message, 'agents[0].variations[0].tools[0]: no tool named "missing_tool" in the bundle or the workspace');
    });

    it('rolls everything back when a resource is invalid, naming its document field', async () => {
      const bad = supportBundle();
      bad.agents[1].spec = { status: 'AGENT_STATUS_PUBLISHED', webhookEventsUrl: 'ftp://nowhere' } as never;
      const response = await apply('support', bad);
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { message: string }).message, 'agents[1].spec.webhookEventsUrl: must be an absolute http or https URL');
      assert.deepEqual([await list('tools'), await list('agents'), await layers()], [[], [], []]);
    });

    it('refuses a sub-agent cycle with FAILED_PRECONDITION', async () => {
      const response = await apply('cycle', {
        agents: [
          { metadata: { name: 'a' }, variations: [{ metadata: { name: 'v' }, subAgents: ['b'] }] },
          { metadata: { name: 'b' }, variations: [{ metadata: { name: 'v' }, subAgents: ['a'] }] },
        ],
      });
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { code: number }).code, 9);
      assert.match((response.body as unknown as { message: string }).message, /would create a cycle/);
      assert.deepEqual(await list('agents'), []);
    });

    it('returns INVALID_ARGUMENT for duplicate names, naming the duplicate', async () => {
      const doubled = { tools: [supportBundle().tools[0], supportBundle().tools[0]] };
      const response = await apply('dup', doubled);
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { message: string }).message, 'tools[1]: the tool name "lookup_order" appears more than once');
      const layersTwice = await apply('dup', { agents: [{ metadata: { name: 'a' }, variations: [{ metadata: { name: 'v' }, memoryLayers: ['m', 'm'] }] }] });
      assert.equal((layersTwice.body as unknown as { message: string }).message, 'agents[0].variations[0].memoryLayers[1]: the memory layer "m" appears more than once');
      const variations = await apply('dup', { agents: [{ metadata: { name: 'a' }, variations: [{ metadata: { name: 'v' } }, { metadata: { name: 'v' } }] }] });
      assert.equal((variations.body as unknown as { message: string }).message, 'agents[0].variations[1]: the variation name "v" appears more than once');
    });

    it('accepts empty schedules, and schedules only under their agent (test/api/bundles-schedules.test.ts applies them)', async () => {
      const empty = await apply('sched', { agents: [{ metadata: { name: 'a' }, schedules: [] }], schedules: [] });
      assert.equal(empty.status, 200, JSON.stringify(empty.body));
      const schedule = { metadata: { name: 'nightly' }, spec: { initialMessage: 'Run', schedule: { intervals: [{ every: '1d' }], timezone: 'UTC' } } };
      const topLevel = await apply('sched', { agents: [{ metadata: { name: 'a' } }], schedules: [schedule] });
      assert.equal(topLevel.status, 400);
      assert.equal((topLevel.body as unknown as { message: string }).message, 'schedules: a schedule belongs to its agent: declare it under agents[].schedules');
      const twice = await apply('sched', { agents: [{ metadata: { name: 'a' }, schedules: [schedule, schedule] }] });
      assert.equal(twice.status, 400);
      assert.equal((twice.body as unknown as { message: string }).message, 'agents[0].schedules[1]: the schedule name "nightly" appears more than once');
    });

    it('returns INVALID_ARGUMENT for a malformed bundle key and unknown fields', async () => {
      for (const key of ['Upper', '-lead', 'a'.repeat(64), 'sp%20ace']) {
        const response = await apply(key, {});
        assert.equal(response.status, 400, key);
        assert.match((response.body as unknown as { message: string }).message, /^bundleKey: has an invalid format/);
      }
      assert.equal((await apply('a'.repeat(63), {})).status, 200);
      const nul = await apply('ok', { agents: [{ metadata: { name: 'a', labels: { k: 'v' } }, spec: { description: 'x\u0000y' } }] });
      assert.equal(nul.status, 400);
      assert.equal((nul.body as unknown as { message: string }).message, 'agents[0].spec.description: must not contain NUL characters');
      const unknown = await apply('ok', { widgets: [] });
      assert.equal(unknown.status, 400);
      assert.equal((unknown.body as unknown as { message: string }).message, 'widgets: is not a known field');
    });

    it('keeps bundles of different workspaces apart', async () => {
      const other = await api.request('POST', '/v1/account/workspaces', { token, body: { metadata: { name: 'other' } } });
      const otherId = other.body.metadata.id;
      assert.equal((await apply('support', supportBundle())).status, 200);
      assert.equal((await api.request('GET', `${base(otherId)}/bundles/support`, { token })).status, 404);
      assert.equal((await api.request('DELETE', `${base(otherId)}/bundles/support`, { token })).status, 404);
      const there = await apply('support', supportBundle(), '', token, otherId);
      assert.equal(there.status, 200, JSON.stringify(there.body));
      assert.deepEqual(names(there.body.created), ALL);
      assert.equal((await list('tools')).length, 2);
    });

    it('requires authentication, agents:manage, and tools:manage and memory:manage when the bundle holds those', async () => {
      assert.equal((await api.request('PUT', `${base()}/bundles/support`, { body: {} })).status, 401);
      const agentsOnly = await createKey(['agents:manage']);
      const denied = await apply('support', supportBundle(), '', agentsOnly);
      assert.equal(denied.status, 403);
      assert.equal((denied.body as unknown as { message: string }).message, 'this credential lacks the tools:manage scope (the bundle holds tools or tool sets)');
      const noMemory = await apply('support', supportBundle(), '', await createKey(['agents:manage', 'tools:manage']));
      assert.equal((noMemory.body as unknown as { message: string }).message, 'this credential lacks the memory:manage scope (the bundle holds memory layers)');
      const reader = await apply('support', supportBundle(), '', await createKey(['agents:read', 'tools:manage', 'memory:manage']));
      assert.equal(reader.status, 403);
      assert.equal((reader.body as unknown as { message: string }).message, 'this credential lacks the agents:manage scope');
      const agentsOnlyBundle = await apply('agents-only', { agents: [{ metadata: { name: 'solo' } }] }, '', agentsOnly);
      assert.equal(agentsOnlyBundle.status, 200, JSON.stringify(agentsOnlyBundle.body));
      const full = await apply('support', supportBundle(), '', await createKey(['agents:manage', 'tools:manage', 'memory:manage']));
      assert.equal(full.status, 200, JSON.stringify(full.body));
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/bundles/{bundleKey}', () => {
    it('returns a document that re-applies with no change', async () => {
      await apply('support', supportBundle());
      const response = await api.request('GET', `${base()}/bundles/support`, { token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const document = response.body;
      assert.deepEqual(document.tools.map((tool: { metadata: { name: string } }) => tool.metadata.name), ['lookup_order', 'refund_order']);
      assert.deepEqual(document.tools[0].metadata.labels, { team: 'support' });
      assert.deepEqual(document.toolSets[0].tools.sort(), ['lookup_order', 'refund_order']);
      assert.deepEqual(document.memoryLayers[0].entries, [{ spec: { key: 'refunds', content: 'Refund within 30 days.', title: 'Refunds' } }]);
      const triage = document.agents.find((agent: { metadata: { name: string } }) => agent.metadata.name === 'triage');
      assert.deepEqual(triage.variations[0].subAgents, ['refunder']);
      assert.deepEqual(triage.variations[0].memoryLayers, ['support-skills']);
      const before = await snapshot();
      const again = await apply('support', document);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual([again.body.created, again.body.updated, again.body.deleted], [[], [], []]);
      assert.deepEqual(await snapshot(), before);
    });

    it('keeps null values inside JSON Schemas, so the document re-applies with no change', async () => {
      const schema = { type: 'object', properties: { note: { type: ['string', 'null'], default: null } } };
      const document = {
        tools: [{ metadata: { name: 'nullable' }, spec: { inputSchema: schema, http: { url: 'https://api.example.com/n', method: 'POST' } } }],
        agents: [{ metadata: { name: 'schemas' }, spec: { inputDataSchema: schema, outputDefinition: { type: 'object', properties: { x: { const: null } } } } }],
      };
      await apply('schemas', document);
      const response = await api.request('GET', `${base()}/bundles/schemas`, { token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.tools[0].spec.inputSchema, schema);
      assert.deepEqual(response.body.agents[0].spec.inputDataSchema, schema);
      assert.deepEqual(response.body.agents[0].spec.outputDefinition, { type: 'object', properties: { x: { const: null } } });
      const again = await apply('schemas', response.body);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual([again.body.created, again.body.updated, again.body.deleted], [[], [], []]);
    });

    it('returns NOT_FOUND for a bundle that owns nothing', async () => {
      const response = await api.request('GET', `${base()}/bundles/nothing`, { token });
      assert.equal(response.status, 404);
      assert.equal(response.body.message, 'bundle "nothing" not found');
    });

    it('requires agents:read, and tools:read and memory:read for bundles holding those', async () => {
      await apply('support', supportBundle());
      assert.equal((await api.request('GET', `${base()}/bundles/support`)).status, 401);
      const noAgents = await api.request('GET', `${base()}/bundles/support`, { token: await createKey(['tools:read', 'memory:read']) });
      assert.equal(noAgents.status, 403);
      assert.equal(noAgents.body.message, 'this credential lacks the agents:read scope');
      const noTools = await api.request('GET', `${base()}/bundles/support`, { token: await createKey(['agents:read', 'memory:read']) });
      assert.equal(noTools.body.message, 'this credential lacks the tools:read scope (the bundle holds tools or tool sets)');
      const readers = await api.request('GET', `${base()}/bundles/support`, { token: await createKey(['agents:read', 'tools:read', 'memory:read']) });
      assert.equal(readers.status, 200);
    });

    it('returns INVALID_ARGUMENT for a malformed workspace id or bundle key', async () => {
      assert.equal((await api.request('GET', '/v1/workspaces/ws_nope/bundles/support', { token })).status, 400);
      assert.equal((await api.request('GET', `${base()}/bundles/UPPER`, { token })).status, 400);
    });
  });

  describe('DELETE /v1/workspaces/{workspaceId}/bundles/{bundleKey}', () => {
    it('removes every resource of the bundle and leaves the others', async () => {
      await apply('support', supportBundle());
      await apply('keep', { tools: [{ metadata: { name: 'kept' }, spec: { http: { url: 'https://api.example.com/k', method: 'GET' } } }] });
      const response = await api.request('DELETE', `${base()}/bundles/support`, { token });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body, {});
      assert.deepEqual((await list('tools')).map((tool) => tool.metadata.name), ['kept']);
      assert.deepEqual([await list('agents'), await list('tool_sets'), await layers()], [[], [], []]);
      const again = await api.request('DELETE', `${base()}/bundles/support`, { token });
      assert.equal(again.status, 404);
      assert.equal(again.body.message, 'bundle "support" not found');
    });

    it('requires authentication and agents:manage plus the scopes of what the bundle holds', async () => {
      await apply('support', supportBundle());
      assert.equal((await api.request('DELETE', `${base()}/bundles/support`)).status, 401);
      const reader = await api.request('DELETE', `${base()}/bundles/support`, { token: await createKey(['agents:read']) });
      assert.equal(reader.status, 403);
      const noMemory = await api.request('DELETE', `${base()}/bundles/support`, { token: await createKey(['agents:manage', 'tools:manage']) });
      assert.equal(noMemory.status, 403);
      assert.equal(noMemory.body.message, 'this credential lacks the memory:manage scope (the bundle holds memory layers)');
      assert.equal((await list('agents')).length, 2);
    });
  });
});
