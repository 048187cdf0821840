// An objective's memory stack and its skills (issue 25 items 1 and 2), end
// to end through the API with the embedded runtime: the variation's SKILLS
// layers by position with the objective's memoryLayerIds on top, a key
// resolving in the topmost layer holding it, the skills manifest in the
// system prompt the model gets (seen by the fake OpenRouter), load_skill's
// MEMORY_READ before its TOOL_RESULT, an unknown key as a TOOL_ERROR the
// model reads, a sub-objective on its own variation's stack, memory_read over
// the stack and memory_write's key check, info.lastUsedAt (written once per
// slack interval, never backwards), memoryLayerIds refused with the field
// named, and the manifest's bound with unlisted skills still loadable.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { runObjective } from '../support/objective-runs';
import { MemoryLayerType } from '../../src/memory/records';
import { newId } from '../../src/ids';
import { createMemoryStore } from '../../persistence/repositories/memory.store';

/* eslint-disable @typescript-eslint/no-explicit-any */

const OPENROUTER_MODEL = 'openai/gpt-4o-mini';
const INSTRUCTION = 'Before you do what a skill describes, call load_skill with its key (exactly as listed; keys are case-sensitive) to get its full instructions.';

describe('objective memory stacks and skills', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let openRouter: FakeOpenRouter;
  /** Skills layers: `upper` at position 7 (assigned first), `lower` at position 2, `extra` only through memoryLayerIds. */
  const layers: Record<'upper' | 'lower' | 'extra', string> = { upper: '', lower: '', extra: '' };
  const entries: Record<string, string> = {};
  let scriptedAgentId: string;
  let openRouterAgentId: string;
  let episodicAgentId: string;

  const base = () => `/v1/workspaces/${ws.workspaceId}/objectives`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const layer = async (name: string) => (await created(api, ws.token, '/v1/memory_layers', { metadata: { name }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id as string;
  const entry = async (layerId: string, spec: Record<string, unknown>) => (await created(api, ws.token, `/v1/memory_layers/${layerId}/entries`, { spec })).metadata.id as string;
  const assignLayers = async (variationId: string) => {
    await created(api, ws.token, `/v1/agent_variations/${variationId}/memory_layer_assignments`, { memoryLayerId: layers.upper, position: 7 });
    await created(api, ws.token, `/v1/agent_variations/${variationId}/memory_layer_assignments`, { memoryLayerId: layers.lower, position: 2 });
  };
  /** Runs an objective to a terminal status; returns it with its events. */
  const run = (body: Record<string, unknown>) => runObjective(api, ws, body);
  const loadSkill = (key: string, body: Record<string, unknown> = {}) =>
    run({ agentId: scriptedAgentId, initialMessage: `CALL load_skill ${JSON.stringify({ key })}\nSAY loaded`, ...body });

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    openRouter = await startFakeOpenRouter();
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
    layers.upper = await layer('upper');
    layers.lower = await layer('lower');
    layers.extra = await layer('extra');
    entries.upperRefunds = await entry(layers.upper, { key: 'refunds', title: 'Refunds', description: 'How to refund an order\nstep by step', content: 'upper: refund within 30 days' });
    entries.upperTone = await entry(layers.upper, { key: 'tone', title: 'Tone of voice', content: 'be kind' });
    entries.lowerRefunds = await entry(layers.lower, { key: 'refunds', title: 'Old refunds', description: 'Outdated', content: 'lower: refund within 14 days' });
    entries.lowerShipping = await entry(layers.lower, { key: 'shipping', description: 'Carriers and delays', content: 'ship with care' });
    entries.extraRefunds = await entry(layers.extra, { key: 'refunds', title: 'Refunds for this customer', content: 'extra: refund at once' });
    scriptedAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'scripted-skills' } })).metadata.id;
    const scripted = await createVariation(api, ws.token, ws.workspaceId, scriptedAgentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    await assignLayers(scripted.metadata.id);
    openRouterAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'provider-skills' } })).metadata.id;
    const provider = await createVariation(api, ws.token, ws.workspaceId, openRouterAgentId, { spec: { prompt: 'You help.', modelConfig: { modelId: OPENROUTER_MODEL } } });
    await assignLayers(provider.metadata.id);
    episodicAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'episodic-skills' } })).metadata.id;
    const episodic = await createVariation(api, ws.token, ws.workspaceId, episodicAgentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID }, enableEpisodicMemory: true } });
    await assignLayers(episodic.metadata.id);
  });

  after(async () => {
    await api?.close();
    await openRouter?.close();
  });

  describe('load_skill', () => {
    it('returns the topmost layer\'s content with a MEMORY_READ before the TOOL_RESULT, and sets that layer\'s lastUsedAt', async () => {
      const before = await get(`/v1/memory_layers/${layers.upper}`);
      assert.equal(before.info.lastUsedAt, undefined, 'never resolved yet');
      const { objective, events, of } = await loadSkill('refunds');
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      const [read] = of('MEMORY_READ');
      assert.deepEqual(read.data.memoryRead, { key: 'refunds', memoryLayerId: layers.upper, memoryEntryId: entries.upperRefunds });
      const [result] = of('TOOL_RESULT');
      assert.equal(result.data.toolResult.content, 'upper: refund within 30 days');
      assert.ok(read.sequence < result.sequence, 'MEMORY_READ precedes the TOOL_RESULT');
      assert.equal(events.filter((event) => event.sequence > read.sequence && event.sequence < result.sequence).length, 0, 'nothing comes between them');
      assert.equal(objective.info.lastMessage, 'loaded');
      const after = await get(`/v1/memory_layers/${layers.upper}`);
      assert.ok(Date.parse(after.info.lastUsedAt) >= Date.parse(objective.info.createdAt), JSON.stringify(after.info));
      assert.equal((await get(`/v1/memory_layers/${layers.lower}`)).info.lastUsedAt, undefined, 'the layer below was not used');
    });

    it('falls through to a lower layer for a key the upper ones lack', async () => {
      const { of } = await loadSkill('shipping');
      assert.deepEqual(of('MEMORY_READ')[0].data.memoryRead, { key: 'shipping', memoryLayerId: layers.lower, memoryEntryId: entries.lowerShipping });
      assert.equal(of('TOOL_RESULT')[0].data.toolResult.content, 'ship with care');
    });

    it("puts the objective's memoryLayerIds on top of the variation's layers", async () => {
      const { objective, of } = await loadSkill('refunds', { memoryLayerIds: [layers.extra] });
      assert.deepEqual(objective.spec.memoryLayerIds, [layers.extra]);
      assert.deepEqual(of('MEMORY_READ')[0].data.memoryRead, { key: 'refunds', memoryLayerId: layers.extra, memoryEntryId: entries.extraRefunds });
      assert.equal(of('TOOL_RESULT')[0].data.toolResult.content, 'extra: refund at once');
    });

    it('moves a variation layer named in memoryLayerIds up to its place there', async () => {
      const { of } = await loadSkill('refunds', { memoryLayerIds: [layers.lower] });
      assert.deepEqual(of('MEMORY_READ')[0].data.memoryRead, { key: 'refunds', memoryLayerId: layers.lower, memoryEntryId: entries.lowerRefunds });
    });

    it("gives a sub-objective its own variation's stack, without the parent's memoryLayerIds", async () => {
      const childAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'skill-child' } })).metadata.id;
      const childVariation = await createVariation(api, ws.token, ws.workspaceId, childAgentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
      await created(api, ws.token, `/v1/agent_variations/${childVariation.metadata.id}/memory_layer_assignments`, { memoryLayerId: layers.lower, position: 1 });
      const parentAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'skill-parent' } })).metadata.id;
      const parentVariation = await createVariation(api, ws.token, ws.workspaceId, parentAgentId, { spec: { prompt: 'You delegate.', modelConfig: { modelId: MODEL_ID } } });
      await created(api, ws.token, `/v1/agent_variations/${parentVariation.metadata.id}/assignments`, { agentId: childAgentId });
      const childScript = 'CALL load_skill {"key":"refunds"}\nSAY child loaded';
      const parent = await run({ agentId: parentAgentId, memoryLayerIds: [layers.extra], initialMessage: `CALL skill-child ${JSON.stringify({ prompt: childScript })}\nSAY parent done` });
      assert.equal(parent.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(parent.objective.info));
      assert.equal(parent.of('MEMORY_READ').length, 0);
      const children = (await get(`${base()}?parentObjectiveId=${parent.objective.metadata.id}`)).items as any[];
      assert.equal(children.length, 1);
      assert.deepEqual(children[0].spec.memoryLayerIds, []);
      const childEvents = (await get(`${base()}/${children[0].metadata.id}/events?limit=100`)).items as any[];
      const reads = childEvents.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_MEMORY_READ');
      assert.deepEqual(reads.map((event) => event.data.memoryRead), [{ key: 'refunds', memoryLayerId: layers.lower, memoryEntryId: entries.lowerRefunds }]);
    });

    it('answers an unknown key with a TOOL_ERROR the model reads, and the objective completes', async () => {
      const { objective, of } = await loadSkill('Refunds');
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(of('MEMORY_READ').length, 0);
      const [error] = of('TOOL_ERROR');
      assert.equal(error.data.toolError.message, 'no skill with key "Refunds" (keys are case-sensitive; the skills manifest in the system prompt lists them)');
      assert.equal(error.data.toolError.type, 'NOT_FOUND');
      assert.equal(of('TOOL_RESULT').length, 0);
      assert.equal(objective.info.lastMessage, 'loaded');
    });
  });

  describe('memory_read and memory_write (the stack part)', () => {
    const episodicRun = (script: string, body: Record<string, unknown> = {}) => run({ agentId: episodicAgentId, initialMessage: script, episodicKey: `episode-${newId('memoryLayer')}`, ...body });

    it('reads a key the episodic layer lacks from the whole stack, top down, with a MEMORY_READ', async () => {
      const { objective, of } = await episodicRun('CALL memory_read {"key":"refunds"}\nSAY read', { memoryLayerIds: [layers.extra] });
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      assert.deepEqual(of('MEMORY_READ')[0].data.memoryRead, { key: 'refunds', memoryLayerId: layers.extra, memoryEntryId: entries.extraRefunds });
      assert.equal(of('TOOL_RESULT')[0].data.toolResult.content, 'extra: refund at once');
    });

    it('answers a key no layer holds with a TOOL_ERROR the model reads', async () => {
      const { objective, of } = await episodicRun('CALL memory_read {"key":"nowhere"}\nSAY nothing');
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
      assert.equal(of('TOOL_ERROR')[0].data.toolError.message, 'nothing is stored under the key "nowhere" (keys are case-sensitive)');
      assert.equal(objective.info.lastMessage, 'nothing');
    });

    it('refuses a key that breaks the key rules before anything is stored', async () => {
      const { objective, of } = await episodicRun('CALL memory_write {"key":"system/notes","content":"x"}\nSAY refused');
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
      const [error] = of('TOOL_ERROR');
      assert.equal(error.data.toolError.message, 'key: must not begin with the reserved prefix "system/"');
      assert.equal(error.data.toolError.type, 'INVALID_ARGUMENTS');
    });

    it('is not offered without an episodicKey (memory_read is then an unknown tool)', async () => {
      const { of } = await run({ agentId: episodicAgentId, initialMessage: 'CALL memory_read {"key":"refunds"}\nSAY read' });
      assert.equal(of('MEMORY_READ').length, 0);
      assert.equal(of('TOOL_RESULT').length, 0);
      assert.match(of('TOOL_ERROR')[0].data.toolError.message, /unknown tool: memory_read/);
    });
  });

  describe('the skills manifest', () => {
    it('follows the variation prompt in the system prompt: each key once, the topmost entry\'s title and description, by key', async () => {
      openRouter.reset();
      openRouter.answer(
        fakeAnswers.completion({ toolCalls: [{ id: 'call_a', name: 'load_skill', arguments: '{"key":"tone"}' }] }),
        fakeAnswers.completion({ content: 'done' }),
      );
      const { objective, of } = await run({ agentId: openRouterAgentId, initialMessage: 'Hello', memoryLayerIds: [layers.extra] });
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      const [first, second] = openRouter.requests.map((request) => request.body as any);
      assert.equal(first.messages[0].role, 'system');
      assert.equal(first.messages[0].content, [
        'You help.',
        '',
        '## Skills',
        INSTRUCTION,
        '- refunds: Refunds for this customer',
        '- shipping — Carriers and delays',
        '- tone: Tone of voice',
      ].join('\n'));
      assert.ok(first.tools.some((tool: any) => tool.function.name === 'load_skill'), JSON.stringify(first.tools));
      const toolMessage = second.messages.find((message: any) => message.role === 'tool');
      assert.equal(toolMessage.content, 'be kind');
      assert.deepEqual(of('MEMORY_READ')[0].data.memoryRead, { key: 'tone', memoryLayerId: layers.upper, memoryEntryId: entries.upperTone });
    });

    it('lists at most 100 skills, says how many more exist, and load_skill still finds an unlisted one', async () => {
      const big = await layer('big');
      const keys = Array.from({ length: 300 }, (_, index) => `bulk/${String(index).padStart(3, '0')}`);
      const now = new Date();
      await api.dataSource.query(
        `INSERT INTO memory_entries (id, account_id, workspace_id, memory_layer_id, name, key, title, content, created_at, updated_at)
         SELECT id, $2, $3, $4, key, key, 'Bulk ' || key, 'content of ' || key, $5, $5 FROM unnest($1::text[], $6::text[]) AS t(id, key)`,
        [keys.map(() => newId('memoryEntry')), ws.account.accountId, ws.workspaceId, big, now, keys],
      );
      openRouter.reset();
      const { objective } = await run({ agentId: openRouterAgentId, initialMessage: 'Hello', memoryLayerIds: [big] });
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      const system = (openRouter.requests[0].body as any).messages[0].content as string;
      const listed = system.split('\n').filter((line) => line.startsWith('- '));
      assert.equal(listed.length, 100);
      // 300 bulk keys and the three of the variation's layers; "bulk/..." sorts first bytewise.
      assert.equal(listed[0], '- bulk/000: Bulk bulk/000');
      assert.equal(listed[99], '- bulk/099: Bulk bulk/099');
      assert.equal(system.split('\n').at(-1), '203 more skills are not listed here; load_skill takes any skill key, listed or not.');
      const { of } = await loadSkill('bulk/250', { memoryLayerIds: [big] });
      assert.equal(of('TOOL_RESULT')[0].data.toolResult.content, 'content of bulk/250');
      assert.equal(of('MEMORY_READ')[0].data.memoryRead.memoryLayerId, big);
    });
  });

  describe('MemoryStore.stacks.read', () => {
    it('lists the first keys bytewise with the topmost entry of each, counting every distinct key, and returns the checked layers', async () => {
      const stacks = createMemoryStore(api.dataSource).stacks;
      const read = await stacks.read({ workspaceId: ws.workspaceId, layerIds: [layers.lower, layers.upper], checkIds: [layers.extra, 'memlayer_unknown'], skillsLimit: 2 });
      assert.deepEqual(read.skills, [
        { key: 'refunds', title: 'Refunds', description: 'How to refund an order\nstep by step' },
        { key: 'shipping', title: null, description: 'Carriers and delays' },
      ]);
      assert.equal(read.skillCount, 3);
      assert.deepEqual(read.checked.map((layer) => layer.id), [layers.extra]);
      const reversed = await stacks.read({ workspaceId: ws.workspaceId, layerIds: [layers.upper, layers.lower], checkIds: [], skillsLimit: 100 });
      assert.deepEqual(reversed.skills.map((skill) => [skill.key, skill.title]), [['refunds', 'Old refunds'], ['shipping', null], ['tone', 'Tone of voice']]);
      assert.equal(reversed.skillCount, 3);
      const elsewhere = await stacks.read({ workspaceId: 'ws_other', layerIds: [layers.upper], checkIds: [], skillsLimit: 100 });
      assert.deepEqual([elsewhere.skills, elsewhere.skillCount], [[], 0], "another workspace's layers list nothing");
    });
  });

  describe('lastUsedAt of a resolved key\'s layer (MemoryStore.stacks.resolveKey)', () => {
    it('is written once per slack interval and never moves backwards', async () => {
      const stacks = createMemoryStore(api.dataSource).stacks;
      const marked = await layer('marked');
      await entry(marked, { key: 'k', content: 'c' });
      const lastUsedAt = async () => (await get(`/v1/memory_layers/${marked}`)).info.lastUsedAt as string | undefined;
      const setLastUsedAt = (at: Date) => api.dataSource.query('UPDATE memory_layers SET last_used_at = $2 WHERE id = $1', [marked, at]);
      assert.equal((await stacks.resolveKey([marked], 'k', { slackMs: 60_000 }))?.content, 'c');
      const first = await lastUsedAt();
      assert.ok(first);
      await stacks.resolveKey([marked], 'k', { slackMs: 60_000 });
      assert.equal(await lastUsedAt(), first, 'within the slack: not written again');
      const future = new Date(Date.now() + 3_600_000);
      await setLastUsedAt(future);
      await stacks.resolveKey([marked], 'k', { slackMs: 0 });
      assert.equal(await lastUsedAt(), future.toISOString(), 'never backwards');
      const past = new Date(Date.now() - 3_600_000);
      await setLastUsedAt(past);
      await stacks.resolveKey([marked], 'k', { slackMs: 0 });
      assert.ok(Date.parse((await lastUsedAt())!) > past.getTime(), 'moved forward');
      await setLastUsedAt(past);
      assert.equal(await stacks.resolveKey([marked], 'missing', { slackMs: 0 }), null);
      assert.equal(await lastUsedAt(), past.toISOString(), 'a key found nowhere marks nothing');
    });
  });

  describe('POST /objectives with memoryLayerIds', () => {
    const start = (memoryLayerIds: string[]) => api.request('POST', base(), { token: ws.token, body: { agentId: scriptedAgentId, initialMessage: 'SAY hi', memoryLayerIds } });

    it('answers NOT_FOUND naming the field for an unknown layer', async () => {
      const unknown = newId('memoryLayer');
      assertError(await start([layers.extra, unknown]), 404, 5, `memoryLayerIds[1]: memory layer ${unknown} not found`);
    });

    it("answers NOT_FOUND naming the field for another workspace's layer", async () => {
      const other = await ws.otherWorkspace();
      const foreign = (await created(api, other.token, '/v1/memory_layers', { metadata: { name: 'foreign' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id as string;
      assertError(await start([foreign]), 404, 5, `memoryLayerIds[0]: memory layer ${foreign} not found`);
    });

    it('answers INVALID_ARGUMENT naming the field for a system-managed layer (spec 7 rule 6)', async () => {
      const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: 'default', status: 'STATUS_ENABLED' as const };
      const system = await api.services.memoryLayers.createSystemManaged(workspace, { name: 'episodic-x', type: MemoryLayerType.EPISODIC });
      const response = await start([layers.extra, layers.lower, system.metadata.id]);
      assertError(response, 400, 3, `memoryLayerIds[2]: memory layer ${system.metadata.id} is system-managed and cannot be put in an objective's stack`);
      assert.equal(response.body.details[0].fieldViolations[0].field, 'memoryLayerIds[2]');
    });

    it('answers INVALID_ARGUMENT naming the field for a layer named twice', async () => {
      assertError(await start([layers.extra, layers.lower, layers.extra]), 400, 3, `memoryLayerIds[2]: repeats memoryLayerIds[0] (memory layer ${layers.extra}); name each layer once`);
    });

    it('creates nothing when it refuses', async () => {
      const before = (await get(`${base()}?limit=100`)).items.length;
      await start([newId('memoryLayer')]);
      assert.equal((await get(`${base()}?limit=100`)).items.length, before);
    });
  });
});
