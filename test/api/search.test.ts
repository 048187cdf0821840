import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import type { BootstrapResult } from '../../src/accounts/account.service';
import { newId } from '../../src/ids';
import type { ObjectiveChange } from '../../src/objectives/objective-events';
import { createObjectivesStore } from '../../persistence/repositories/objectives.store';

interface Hit {
  type: string;
  metadata: { id: string; name: string; workspaceId: string; bundleKey?: string };
  snippet: string;
  score: number;
}

describe('GET /v1/workspaces/{workspaceId}/search', () => {
  let api: TestApi;
  let account: BootstrapResult;
  let token: string;
  let layerId: string;

  const flat = (extra: Record<string, string> = {}) => ({ 'x-workspace-id': account.workspaceId, ...extra });
  const search = (params: string, as = token, workspaceId = account.workspaceId) =>
    api.request<{ items: Hit[] }>('GET', `/v1/workspaces/${workspaceId}/search?${params}`, { token: as });

  async function createKey(permissions: string[]): Promise<string> {
    const response = await api.request('POST', `/v1/workspaces/${account.workspaceId}/api_keys`, { token, body: { metadata: { name: 'narrow' }, spec: { permissions } } });
    return response.body.spec.token;
  }

  async function entry(key: string, spec: { content?: string; title?: string; description?: string }, layer = layerId, headers = flat()) {
    const response = await api.request('POST', `/v1/memory_layers/${layer}/entries`, { token, headers, body: { spec: { key, content: '', ...spec } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id as string;
  }

  async function layer(name: string, headers = flat()): Promise<string> {
    const response = await api.request('POST', '/v1/memory_layers', { token, headers, body: { metadata: { name }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id;
  }

  before(async () => {
    api = await startTestApi();
    account = await api.bootstrap();
    token = account.globalApiKey.token;
    layerId = await layer('skills');
  });
  after(async () => api.close());

  describe('memory entries', () => {
    it('ranks a match in the key above a match in the content, with snippets and metadata', async () => {
      const inKey = await entry('billing/refund-policy', { content: 'How we handle money back.' });
      const inContent = await entry('support/escalation', { content: 'Escalate to a manager when a refund exceeds the limit.' });
      const response = await search('query=refund');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const ids = response.body.items.map((item) => item.metadata.id);
      assert.deepEqual(ids, [inKey, inContent]);
      const [first, second] = response.body.items;
      assert.equal(first.type, 'memory_entries');
      assert.equal(first.metadata.name, 'billing/refund-policy');
      assert.equal(first.metadata.workspaceId, account.workspaceId);
      assert.ok(first.score > second.score && second.score > 0 && first.score < 1, `${first.score} ${second.score}`);
      assert.match(second.snippet, /\*\*refund\*\*/);
    });

    it('matches stemmed words, title and description', async () => {
      const id = await entry('greeting', { title: 'Welcoming customers', description: 'Use when a visitor arrives', content: 'Say hello.' });
      const response = await search('query=welcome%20visitors');
      assert.deepEqual(response.body.items.map((item) => item.metadata.id), [id]);
    });

    it('follows updates and deletions of the indexed rows', async () => {
      const id = await entry('volatile', { content: 'The zeppelin departs at noon.' });
      assert.deepEqual((await search('query=zeppelin')).body.items.map((item) => item.metadata.id), [id]);
      const patched = await api.request('PATCH', `/v1/memory_layers/${layerId}/entries/${id}`, { token, headers: flat(), body: { spec: { content: 'The submarine departs at noon.' } } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual((await search('query=zeppelin')).body.items, []);
      assert.deepEqual((await search('query=submarine')).body.items.map((item) => item.metadata.id), [id]);
      await api.request('DELETE', `/v1/memory_layers/${layerId}/entries/${id}`, { token, headers: flat() });
      assert.deepEqual((await search('query=submarine')).body.items, []);
    });

    it('supports quoted phrases, OR and excluded words', async () => {
      const red = await entry('colors/red-apple', { content: 'a crunchy red apple' });
      const green = await entry('colors/green-apple', { content: 'a sour green apple' });
      assert.deepEqual((await search(`query=${encodeURIComponent('"green apple"')}`)).body.items.map((item) => item.metadata.id), [green]);
      assert.deepEqual((await search(`query=${encodeURIComponent('apple -sour')}`)).body.items.map((item) => item.metadata.id), [red]);
      const either = (await search(`query=${encodeURIComponent('crunchy or sour')}`)).body.items.map((item) => item.metadata.id);
      assert.deepEqual(either.sort(), [red, green].sort());
    });

    it('indexes the start of very long content and still stores it', async () => {
      const id = await entry('long', { content: `aardvark ${'lorem ipsum dolor sit amet '.repeat(20_000)}` });
      assert.deepEqual((await search('query=aardvark')).body.items.map((item) => item.metadata.id), [id]);
    });

    it('never returns another workspace\'s resources', async () => {
      const other = await api.request('POST', '/v1/account/workspaces', { token, body: { metadata: { name: 'elsewhere' } } });
      const headers = flat({ 'x-workspace-id': other.body.metadata.id });
      const foreign = await entry('quokka', { content: 'quokka' }, await layer('foreign', headers), headers);
      assert.deepEqual((await search('query=quokka')).body.items, []);
      const theirs = await search('query=quokka', token, other.body.metadata.id);
      assert.deepEqual(theirs.body.items.map((item) => item.metadata.id), [foreign]);
    });
  });

  describe('agents, tools and tool sets', () => {
    const create = async (kind: 'agents' | 'tools' | 'tool_sets', body: unknown, workspaceId = account.workspaceId) => {
      const response = await api.request('POST', `/v1/workspaces/${workspaceId}/${kind}`, { token, body });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.metadata.id as string;
    };
    const httpSpec = (description: string) => ({ description, http: { url: 'https://api.example.com/run', method: 'POST' } });

    it('finds each type by name and description, typed, with its metadata', async () => {
      const agent = await create('agents', { metadata: { name: 'meteorologist' }, spec: { description: 'Answers questions about rainfall' } });
      const tool = await create('tools', { metadata: { name: 'rainfall_lookup', labels: { team: 'ops' } }, spec: httpSpec('Returns the rainfall of a city') });
      const toolSet = await create('tool_sets', { metadata: { name: 'weather-kit' }, spec: { description: 'Rainfall and wind tools' } });
      const response = await search('query=rainfall');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const found = new Map(response.body.items.map((item) => [item.metadata.id, item]));
      assert.equal(found.get(agent)?.type, 'agents');
      assert.equal(found.get(tool)?.type, 'tools');
      assert.equal(found.get(toolSet)?.type, 'tool_sets');
      assert.deepEqual((found.get(tool)?.metadata as { labels?: Record<string, string> }).labels, { team: 'ops' });
      // The tool's name holds the word (weight A), so it outranks the others.
      assert.equal(response.body.items[0].metadata.id, tool);
      const onlyTools = await search('query=rainfall&types=tools');
      assert.deepEqual(onlyTools.body.items.map((item) => item.metadata.id), [tool]);
    });

    it('splits names on underscores, slashes and dots', async () => {
      const tool = await create('tools', { metadata: { name: 'crm.contacts/find_by_email' }, spec: httpSpec('Looks a person up') });
      assert.deepEqual((await search('query=contacts&types=tools')).body.items.map((item) => item.metadata.id), [tool]);
    });

    it('drops deleted tools from the results', async () => {
      const tool = await create('tools', { metadata: { name: 'ephemeral-gizmo' }, spec: httpSpec('Short lived') });
      await api.request('DELETE', `/v1/workspaces/${account.workspaceId}/tools/${tool}`, { token });
      assert.deepEqual((await search('query=gizmo')).body.items, []);
    });
  });

  describe('objectives', () => {
    // Objective rows are written only by the objective actor's projector: the
    // test projects one directly, as the actor's start turn would.
    async function projectObjective(metadata: { externalId?: string; labels?: Record<string, string> }, spec: { data?: unknown; initialMessage?: string | null }) {
      const id = newId('objective');
      const createdAt = new Date().toISOString();
      const change: ObjectiveChange = {
        type: 'objective_created', objectiveId: id, workspaceId: account.workspaceId, accountId: account.accountId,
        start: {
          metadata: { id, accountId: account.accountId, workspaceId: account.workspaceId, profileId: account.profileId, createdAt, ...metadata },
          spec: {
            agentId: 'agt_searched', variationId: 'agtvar_searched', data: spec.data ?? null, initialMessage: spec.initialMessage ?? null, episodicKey: null,
            memoryLayerIds: [], tenantId: null, subjectId: null, parentObjectiveId: null, scheduleId: null,
          },
          startKey: null,
        },
      };
      await createObjectivesStore(api.dataSource).project({ query: (sql, parameters) => api.dataSource.query(sql, parameters) }, [{ actorId: id, change }]);
      return id;
    }

    it('finds objectives by external id, label values and first message, named by their id', async () => {
      const byExternalId = await projectObjective({ externalId: 'invoice/quokka-7' }, { initialMessage: 'Check the invoice' });
      const byLabel = await projectObjective({ labels: { animal: 'quokka' } }, { data: { order: 1 } });
      const byMessage = await projectObjective({}, { initialMessage: 'Find the quokka in the report' });
      const byData = await projectObjective({}, { data: { animal: 'quokka' } });
      const response = await search('query=quokka');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      // Weights: external id (A) above label values (B) above the first message (C, data as JSON when no initialMessage).
      assert.deepEqual(response.body.items.map((item) => item.metadata.id).slice(0, 2), [byExternalId, byLabel]);
      assert.deepEqual(response.body.items.map((item) => item.metadata.id).slice(2).sort(), [byMessage, byData].sort());
      const [first] = response.body.items;
      assert.equal(first.type, 'objectives');
      assert.equal(first.metadata.name, byExternalId);
      assert.equal((first.metadata as { externalId?: string }).externalId, 'invoice/quokka-7');
      assert.equal(first.metadata.workspaceId, account.workspaceId);
      assert.equal(first.metadata.bundleKey, undefined);
      assert.match(first.snippet, /\*\*quokka\*\*/);
      assert.deepEqual((await search('query=quokka&types=agents,tools,tool_sets,memory_entries')).body.items, []);
      assert.equal((await search('query=quokka&types=objectives')).body.items.length, 4);
    });
  });

  describe('SearchService.discoverTools', () => {
    let workspaceId: string;
    const ids: Record<string, string> = {};

    before(async () => {
      const other = await api.request('POST', '/v1/account/workspaces', { token, body: { metadata: { name: 'discovery' } } });
      workspaceId = other.body.metadata.id;
      const tool = async (name: string, description: string) => {
        const response = await api.request('POST', `/v1/workspaces/${workspaceId}/tools`, {
          token, body: { metadata: { name }, spec: { description, http: { url: 'https://api.example.com/x', method: 'POST' } } },
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        ids[name] = response.body.metadata.id;
      };
      await tool('send_invoice', 'Sends an invoice to a customer by email');
      await tool('refund_payment', 'Refunds a payment of a customer');
      await tool('weather_forecast', 'Forecast for a city');
    });

    it('ranks tools matching any word of the query or the hints, best first', async () => {
      const found = await api.services.search.discoverTools(workspaceId, { query: 'invoice', hints: ['payment refunds'] });
      assert.deepEqual(found.map((tool) => tool.id).sort(), [ids.send_invoice, ids.refund_payment].sort());
      assert.ok(found.every((tool) => tool.score > 0 && tool.score < 1));
      assert.ok(found[0].score >= found[1].score);
      assert.equal(found.find((tool) => tool.id === ids.send_invoice)?.description, 'Sends an invoice to a customer by email');
    });

    it('returns at most maxTools tools', async () => {
      const found = await api.services.search.discoverTools(workspaceId, { query: 'customer', maxTools: 1 });
      assert.equal(found.length, 1);
    });

    it('keeps only tools scoring at least rerankThreshold', async () => {
      const all = await api.services.search.discoverTools(workspaceId, { query: 'customer invoice email' });
      assert.equal(all[0].id, ids.send_invoice);
      const threshold = (all[0].score + all[all.length - 1].score) / 2;
      const strict = await api.services.search.discoverTools(workspaceId, { query: 'customer invoice email', rerankThreshold: threshold });
      assert.ok(strict.length >= 1 && strict.length < all.length, `${strict.length} of ${all.length}`);
      assert.ok(strict.every((tool) => tool.score >= threshold));
      assert.deepEqual(await api.services.search.discoverTools(workspaceId, { query: 'customer', rerankThreshold: 1 }), []);
    });

    it('finds nothing without words and never another workspace\'s tools', async () => {
      assert.deepEqual(await api.services.search.discoverTools(workspaceId, { query: '  ', hints: ['!!'] }), []);
      assert.deepEqual(await api.services.search.discoverTools(account.workspaceId, { query: 'invoice refund forecast' }), []);
    });

    it('rejects maxTools below 1 and a negative rerankThreshold', async () => {
      await assert.rejects(api.services.search.discoverTools(workspaceId, { query: 'x', maxTools: 0 }), { code: 'INVALID_ARGUMENT', message: 'maxTools: must be a positive integer' });
      await assert.rejects(api.services.search.discoverTools(workspaceId, { query: 'x', rerankThreshold: -0.1 }), {
        code: 'INVALID_ARGUMENT',
        message: 'rerankThreshold: must be a number of at least 0',
      });
    });
  });

  describe('parameters', () => {
    it('limits the number of results, clamping large limits', async () => {
      for (const index of [1, 2, 3]) await entry(`limit-${index}`, { content: 'wombat' });
      assert.equal((await search('query=wombat&limit=2')).body.items.length, 2);
      const clamped = await search('query=wombat&limit=100000');
      assert.equal(clamped.status, 200);
      assert.equal(clamped.body.items.length, 3);
    });

    it('restricts results to the listed types', async () => {
      await entry('typed', { content: 'platypus' });
      assert.equal((await search('query=platypus&types=memory_entries')).body.items.length, 1);
      assert.deepEqual((await search('query=platypus&types=agents,tools,tool_sets')).body.items, []);
    });

    it('returns INVALID_ARGUMENT naming types for an unknown type', async () => {
      const response = await search('query=x&types=agents,widgets');
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { code: number }).code, 3);
      assert.equal((response.body as unknown as { message: string }).message, 'types: unknown type "widgets" (one of agents, tools, tool_sets, memory_entries, objectives)');
    });

    it('accepts every type of api-decisions.md, objectives included', async () => {
      await entry('all-types', { content: 'echidna' });
      const all = await search('query=echidna&types=agents,tools,tool_sets,memory_entries,objectives');
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.deepEqual(all.body.items.map((item) => item.type), ['memory_entries']);
      const objectivesOnly = await search('query=echidna&types=objectives');
      assert.equal(objectivesOnly.status, 200, JSON.stringify(objectivesOnly.body));
      assert.deepEqual(objectivesOnly.body.items, []);
    });

    it('returns INVALID_ARGUMENT for an empty, blank or missing query', async () => {
      for (const params of ['query=', 'query=%20%20', 'types=tools']) {
        const response = await search(params);
        assert.equal(response.status, 400, params);
        assert.equal((response.body as unknown as { message: string }).message, 'query: must not be empty');
      }
    });

    it('returns INVALID_ARGUMENT for a limit below 1 and unknown parameters', async () => {
      const zero = await search('query=x&limit=0');
      assert.equal(zero.status, 400);
      assert.match((zero.body as unknown as { message: string }).message, /^limit: /);
      const unknown = await search('query=x&sort=asc');
      assert.equal(unknown.status, 400);
      assert.equal((unknown.body as unknown as { message: string }).message, 'sort: is not a known field');
    });

    it('returns INVALID_ARGUMENT for a NUL character in the query', async () => {
      const response = await search('query=a%00b');
      assert.equal(response.status, 400);
      assert.equal((response.body as unknown as { message: string }).message, 'query: must not contain NUL characters');
    });

    it('answers an empty list for a query of stop words only', async () => {
      const response = await search('query=the');
      assert.equal(response.status, 200);
      assert.deepEqual(response.body.items, []);
    });

    it('treats query syntax characters as text', async () => {
      const response = await search(`query=${encodeURIComponent("a & b | !c :* (d <-> e) '")}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
    });
  });

  describe('access', () => {
    it('requires authentication', async () => {
      const response = await api.request('GET', `/v1/workspaces/${account.workspaceId}/search?query=x`);
      assert.equal(response.status, 401);
    });

    it('returns PERMISSION_DENIED without workspaces:read', async () => {
      const response = await search('query=x', await createKey(['agents:read', 'tools:read', 'memory:read']));
      assert.equal(response.status, 403);
      assert.equal((response.body as unknown as { message: string }).message, 'this credential lacks the workspaces:read scope');
    });

    it('allows a key with workspaces:read', async () => {
      const response = await search('query=x', await createKey(['workspaces:read']));
      assert.equal(response.status, 200);
    });

    it('returns NOT_FOUND for another account\'s workspace and INVALID_ARGUMENT for a malformed one', async () => {
      const stranger = await api.bootstrap();
      const response = await search('query=x', token, stranger.workspaceId);
      assert.equal(response.status, 404);
      assert.equal((response.body as unknown as { message: string }).message, `workspace ${stranger.workspaceId} not found`);
      assert.equal((await search('query=x', token, 'ws_bad')).status, 400);
    });
  });
});
