// Episodic memory (issue 25 item 3), end to end through the API on a
// cluster-mode node (real NATS and Postgres) with builtin/scripted: objectives
// sharing an episodic key share one system-managed EPISODIC layer (created
// when the first is created, found by its key), another key sees nothing, a
// use moves expiresAt to now + TTL, concurrent writers of one key and
// objectives created together with a new key never fail and leave one layer
// and one entry, the sweeper removes expired layers with their entries and
// keeps one a use refreshed (and one a writer holds), one node sweeping at a
// time, and clients can read the layer but not change, delete or assign it.
// A second node with a fast sweeper shows expiry happening by itself.
import assert from 'node:assert/strict';
import type { QueryRunner } from 'typeorm';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, eventually, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';
import { EpisodicMemorySweeper } from '../../actors/kinds/episodic-memory-sweeper';
import { newId } from '../../src/ids';
import type { ServiceToolContext } from '../../src/ports/service-tools';

/* eslint-disable @typescript-eslint/no-explicit-any */

const HOUR_S = 3600;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The API calls and objective runs every suite here makes. */
function episodicWorld(apiOf: () => TestApi, wsOf: () => WorkspaceFixture) {
  const base = () => `/v1/workspaces/${wsOf().workspaceId}/objectives`;
  const get = async (path: string) => {
    const response = await apiOf().request('GET', path, { token: wsOf().token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  const start = async (agentId: string, episodicKey: string, script: string) => {
    const response = await apiOf().request('POST', base(), { token: wsOf().token, body: { agentId, episodicKey, initialMessage: script } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id as string;
  };
  const finish = async (id: string) => {
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base()}/${id}`);
      return TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status);
    }, 'objective finished', 30_000);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    const events = (await get(`${base()}/${id}/events?limit=1000`)).items as any[];
    return { objective, events, of: (type: string) => events.filter((event) => event.data.type === `OBJECTIVE_EVENT_TYPE_${type}`) };
  };
  /** Runs an objective with `episodicKey` to its end; returns it with its events. */
  const run = async (agentId: string, episodicKey: string, script: string) => finish(await start(agentId, episodicKey, script));
  /** The workspace's layers named `episodic/<key>`. */
  const layersOf = async (key: string) => (await get(`/v1/memory_layers?prefix=${encodeURIComponent(`episodic/${key}`)}&includeInfo=true`)).items.filter((layer: any) => layer.metadata.name === `episodic/${key}`);
  const layerOf = async (key: string) => {
    const layers = await layersOf(key);
    assert.equal(layers.length, 1, JSON.stringify(layers));
    return layers[0];
  };
  const entryRows = async (layerId: string) =>
    (await apiOf().dataSource.query('SELECT key, content FROM memory_entries WHERE memory_layer_id = $1 ORDER BY key', [layerId])) as Array<{ key: string; content: string }>;
  return { base, get, start, finish, run, layersOf, layerOf, entryRows };
}

const write = (key: string, content: string) => `CALL memory_write ${JSON.stringify({ key, content })}`;
const read = (key: string) => `CALL memory_read ${JSON.stringify({ key })}`;
const episodeKey = () => `episode-${newId('memoryLayer')}`;

describe('episodic memory (cluster mode)', function () {
  this.timeout(120_000);
  const busNames = uniqueBusNames();
  let api: TestApi;
  let ws: WorkspaceFixture;
  /** Episodic memory without a TTL, and with a TTL of an hour. */
  let keptAgentId: string;
  let hourAgentId: string;
  const world = episodicWorld(() => api, () => ws);
  const context = (key: string, ttlSeconds: number | null = HOUR_S): ServiceToolContext => ({
    accountId: ws.account.accountId,
    workspaceId: ws.workspaceId,
    objectiveId: newId('objective'),
    memory: { layerIds: [], skillsLayerIds: [], episodic: { key, ttlSeconds } },
    discovery: null,
  });

  before(async () => {
    // The node's own sweeper never fires during the suite: the sweeps here are the test's, at chosen moments.
    api = await startTestApi({ runtime: busNames, natsUrl: TEST_NATS_URL, env: { AGENTRT_EPISODIC_SWEEP_INTERVAL_MS: String(24 * 3_600_000) } });
    ws = await workspaceFixture(api);
    keptAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'kept' } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, keptAgentId, { spec: { prompt: 'You remember.', modelConfig: { modelId: MODEL_ID }, enableEpisodicMemory: true } });
    hourAgentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'hourly' } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, hourAgentId, {
      spec: { prompt: 'You remember for an hour.', modelConfig: { modelId: MODEL_ID }, enableEpisodicMemory: true, episodicMemoryTtl: HOUR_S },
    });
  });

  after(async () => {
    await api?.close();
    await deleteStream(busNames.eventStream).catch(() => undefined);
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
  });

  describe('sharing a key', () => {
    it('gives objectives with one key one layer: the second reads what the first wrote, and MEMORY_READ names the layer', async () => {
      const key = episodeKey();
      const first = await world.run(hourAgentId, key, `${write('prefs/color', 'blue')}\nSAY saved`);
      assert.equal(first.of('TOOL_RESULT')[0].data.toolResult.content, 'saved under "prefs/color"');
      const layer = await world.layerOf(key);
      const second = await world.run(hourAgentId, key, `${read('prefs/color')}\nSAY read`);
      assert.equal(second.of('TOOL_RESULT')[0].data.toolResult.content, 'blue');
      const [memoryRead] = second.of('MEMORY_READ');
      assert.equal(memoryRead.data.memoryRead.memoryLayerId, layer.metadata.id);
      assert.equal(memoryRead.data.memoryRead.key, 'prefs/color');
      const entries = await world.get(`/v1/memory_layers/${layer.metadata.id}/entries`);
      assert.deepEqual(entries.items.map((entry: any) => [entry.spec.key, entry.metadata.name, entry.metadata.id]), [['prefs/color', 'prefs/color', memoryRead.data.memoryRead.memoryEntryId]]);
      assert.equal((await world.layersOf(key)).length, 1, 'still one layer');
      assert.ok((await world.layerOf(key)).info.lastUsedAt, 'the read marked the layer used');
    });

    it('keeps one key\'s memory from an objective with another key', async () => {
      const key = episodeKey();
      await world.run(keptAgentId, key, `${write('secret', 'for this episode only')}\nSAY saved`);
      const other = await world.run(keptAgentId, episodeKey(), `${read('secret')}\nSAY nothing`);
      assert.equal(other.of('MEMORY_READ').length, 0);
      assert.equal(other.of('TOOL_ERROR')[0].data.toolError.message, 'nothing is stored under the key "secret" (keys are case-sensitive)');
    });

    it('replaces what a key held: the last write wins', async () => {
      const key = episodeKey();
      await world.run(keptAgentId, key, `${write('plan', 'draft')}\nSAY saved`);
      await world.run(keptAgentId, key, `${write('plan', 'final')}\nSAY saved`);
      const layer = await world.layerOf(key);
      assert.deepEqual(await world.entryRows(layer.metadata.id), [{ key: 'plan', content: 'final' }]);
    });
  });

  describe('the layer', () => {
    it('exists as soon as the objective is created: system-managed, EPISODIC, named episodic/<key>, expiring after the TTL', async () => {
      const key = episodeKey();
      const before = Date.now();
      const id = await world.start(hourAgentId, key, 'SAY nothing to remember');
      const layer = await world.layerOf(key);
      assert.equal(layer.spec.type, 'MEMORY_LAYER_TYPE_EPISODIC');
      assert.equal(layer.spec.systemManaged, true);
      assert.equal(layer.metadata.profileId, '');
      assert.equal(layer.info.entryCount, 0);
      const expiresAt = Date.parse(layer.spec.expiresAt);
      // The database's clock sets it: compared with a minute's slack either side.
      assert.ok(expiresAt > before + (HOUR_S - 60) * 1000 && expiresAt < Date.now() + (HOUR_S + 60) * 1000, layer.spec.expiresAt);
      await world.finish(id);
    });

    it('has no expiresAt when the variation sets no TTL', async () => {
      const key = episodeKey();
      await world.run(keptAgentId, key, `${write('k', 'v')}\nSAY saved`);
      const layer = await world.layerOf(key);
      assert.equal(layer.spec.expiresAt, undefined);
    });

    it('moves expiresAt forward on every use: creation, memory_write and memory_read', async () => {
      const key = episodeKey();
      const expiries: number[] = [];
      const expiry = async () => expiries.push(Date.parse((await world.layerOf(key)).spec.expiresAt));
      // An expiry an hour ago stands for time passing between the uses.
      const age = async () => {
        await api.dataSource.query("UPDATE memory_layers SET expires_at = now() - interval '1 hour' WHERE workspace_id = $1 AND episodic_key = $2", [ws.workspaceId, key]);
        await expiry();
      };
      const id = await world.start(hourAgentId, key, 'SAY hello');
      await expiry();
      await age();
      // The two tools' side, as the objective's memory_write and memory_read call it.
      assert.deepEqual(await api.services.episodicMemory.write(context(key), 'k', 'v'), { ok: true, content: 'saved under "k"' });
      await expiry();
      await age();
      assert.equal((await api.services.episodicMemory.read(context(key), 'k'))?.content, 'v');
      await expiry();
      const [created, aged, written, agedAgain, readAt] = expiries;
      assert.ok(created > Date.now() && aged < created && written > aged && agedAgain < written && readAt > agedAgain && readAt > Date.now(), JSON.stringify(expiries));
      await world.finish(id);
    });
  });

  describe('concurrent use', () => {
    it('lets two objectives write one key at once: both succeed and the stored content is one of theirs', async () => {
      const key = episodeKey();
      const ids = await Promise.all(['alpha', 'beta'].map((content) => world.start(keptAgentId, key, `${write('shared', content)}\nSAY saved`)));
      for (const id of ids) {
        const { of } = await world.finish(id);
        assert.deepEqual(of('TOOL_RESULT').map((event) => event.data.toolResult.content), ['saved under "shared"']);
        assert.equal(of('TOOL_ERROR').length, 0);
      }
      const layer = await world.layerOf(key);
      const rows = await world.entryRows(layer.metadata.id);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.ok(['alpha', 'beta'].includes(rows[0].content), rows[0].content);
    });

    it('saves every one of many concurrent writes of one key into a new layer: one layer, one entry, the last content', async () => {
      const key = episodeKey();
      const contents = Array.from({ length: 24 }, (_, index) => `version ${index}`);
      const outcomes = await Promise.all(contents.map((content) => api.services.episodicMemory.write(context(key), 'draft', content)));
      assert.deepEqual(outcomes, contents.map(() => ({ ok: true, content: 'saved under "draft"' })));
      const layer = await world.layerOf(key);
      const rows = await world.entryRows(layer.metadata.id);
      assert.equal(rows.length, 1);
      assert.ok(contents.includes(rows[0].content));
      // Writes run one after another on the layer's row: what a read gets now is what the last write stored.
      const entry = await api.services.episodicMemory.read(context(key), 'draft');
      assert.equal(entry?.content, rows[0].content);
    });

    it('gives objectives created at once with a new key one layer', async () => {
      const key = episodeKey();
      const ids = await Promise.all(Array.from({ length: 6 }, () => world.start(hourAgentId, key, 'SAY started together')));
      assert.equal(new Set(ids).size, 6);
      assert.equal((await world.layersOf(key)).length, 1);
      const layers = await Promise.all(Array.from({ length: 12 }, () => api.services.episodicMemory.ensureLayer({ id: ws.workspaceId, accountId: ws.account.accountId }, { key, ttlSeconds: HOUR_S })));
      assert.deepEqual(new Set(layers.map((layer) => layer.id)), new Set([(await world.layerOf(key)).metadata.id]));
      for (const id of ids) await world.finish(id);
    });
  });

  describe('the sweeper', () => {
    const sweeper = () => new EpisodicMemorySweeper({ episodic: api.services.episodicMemory, intervalMs: 24 * 3_600_000, logger: silent });
    const expire = (layerId: string) => api.dataSource.query("UPDATE memory_layers SET expires_at = now() - interval '1 second' WHERE id = $1", [layerId]);
    const status = async (layerId: string) => (await api.request('GET', `/v1/memory_layers/${layerId}`, { token: ws.token })).status;
    let holder: QueryRunner | undefined;

    afterEach(async () => {
      if (holder?.isTransactionActive) await holder.rollbackTransaction();
      await holder?.release();
      holder = undefined;
    });

    it('removes an expired layer with its entries and keeps one a use refreshed after it expired', async () => {
      const [kept, swept] = [episodeKey(), episodeKey()];
      await world.run(hourAgentId, kept, `${write('k', 'kept')}\nSAY saved`);
      await world.run(hourAgentId, swept, `${write('k', 'swept')}\nSAY saved`);
      const keptLayer = (await world.layerOf(kept)).metadata.id;
      const sweptLayer = (await world.layerOf(swept)).metadata.id;
      await expire(keptLayer);
      await expire(sweptLayer);
      // A use before the sweep: the expired layer is still there, and now lives on.
      const reader = await world.run(hourAgentId, kept, `${read('k')}\nSAY read`);
      assert.equal(reader.of('TOOL_RESULT')[0].data.toolResult.content, 'kept');
      assert.ok((await sweeper().sweepOnce()) >= 1);
      assert.equal(await status(sweptLayer), 404);
      assert.deepEqual(await world.entryRows(sweptLayer), []);
      assert.equal(await status(keptLayer), 200);
      assert.deepEqual(await world.entryRows(keptLayer), [{ key: 'k', content: 'kept' }]);
    });

    it('starts a new layer when an objective writes again after the sweep', async () => {
      const key = episodeKey();
      await world.run(keptAgentId, key, `${write('old', 'gone')}\nSAY saved`);
      const first = (await world.layerOf(key)).metadata.id;
      await expire(first);
      await sweeper().sweepOnce();
      const again = await world.run(keptAgentId, key, `${read('old')}\n${write('new', 'here')}\nSAY saved`);
      assert.match(again.of('TOOL_ERROR')[0].data.toolError.message, /nothing is stored under the key "old"/);
      const second = (await world.layerOf(key)).metadata.id;
      assert.notEqual(second, first);
      assert.deepEqual(await world.entryRows(second), [{ key: 'new', content: 'here' }]);
    });

    it('skips a layer a writer holds, which its refresh then keeps', async () => {
      const key = episodeKey();
      await api.services.episodicMemory.write(context(key), 'k', 'v');
      const layerId = (await world.layerOf(key)).metadata.id;
      await expire(layerId);
      holder = api.dataSource.createQueryRunner();
      await holder.startTransaction();
      await holder.query('SELECT id FROM memory_layers WHERE id = $1 FOR UPDATE', [layerId]);
      await sweeper().sweepOnce();
      assert.equal(await status(layerId), 200, 'held: skipped');
      await holder.query("UPDATE memory_layers SET expires_at = now() + interval '1 hour' WHERE id = $1", [layerId]);
      await holder.commitTransaction();
      await sweeper().sweepOnce();
      assert.equal(await status(layerId), 200, 'refreshed: kept');
    });

    it('leaves the work to the node already sweeping', async () => {
      const key = episodeKey();
      await api.services.episodicMemory.write(context(key), 'k', 'v');
      const layerId = (await world.layerOf(key)).metadata.id;
      await expire(layerId);
      holder = api.dataSource.createQueryRunner();
      await holder.startTransaction();
      await holder.query("SELECT pg_advisory_xact_lock(hashtext('agentrt.episodic-memory-sweep'), 0)");
      assert.deepEqual(await api.services.episodicMemory.deleteExpired(100), { deleted: 0, busy: true });
      assert.equal(await status(layerId), 200);
      await holder.rollbackTransaction();
      assert.ok((await sweeper().sweepOnce()) >= 1);
      assert.equal(await status(layerId), 404);
    });
  });

  describe('what clients may do with the layer', () => {
    let layerId: string;
    let entryId: string;
    let key: string;

    before(async () => {
      key = episodeKey();
      await world.run(hourAgentId, key, `${write('notes', 'remember me')}\nSAY saved`);
      const layer = await world.layerOf(key);
      layerId = layer.metadata.id;
      entryId = (await world.get(`/v1/memory_layers/${layerId}/entries`)).items[0].metadata.id;
    });

    const request = (method: string, path: string, body?: unknown) => api.request(method, path, { token: ws.token, ...(body === undefined ? {} : { body }) });
    const refusedChange = () => `memory layer ${layerId} is system-managed and cannot be changed by clients`;

    it('reads the layer, its entry list and its entries', async () => {
      const layer = await world.get(`/v1/memory_layers/${layerId}`);
      assert.equal(layer.metadata.name, `episodic/${key}`);
      assert.equal(layer.info.entryCount, 1);
      const entry = await world.get(`/v1/memory_layers/${layerId}/entries/${entryId}`);
      assert.equal(entry.content, 'remember me');
      assert.equal(entry.info.memoryLayer.id, layerId);
    });

    it('refuses PATCH and DELETE of the layer with PERMISSION_DENIED', async () => {
      assertError(await request('PATCH', `/v1/memory_layers/${layerId}`, { spec: { description: 'mine now' } }), 403, 7, refusedChange());
      assertError(await request('DELETE', `/v1/memory_layers/${layerId}`), 403, 7, refusedChange());
      assertError(await request('DELETE', `/v1/memory_layers/${layerId}?force=true`), 403, 7, refusedChange());
    });

    it('refuses creating, changing and deleting its entries with PERMISSION_DENIED', async () => {
      assertError(await request('POST', `/v1/memory_layers/${layerId}/entries`, { spec: { key: 'mine', content: 'x' } }), 403, 7, refusedChange());
      assertError(await request('PATCH', `/v1/memory_layers/${layerId}/entries/${entryId}`, { spec: { content: 'changed' } }), 403, 7, refusedChange());
      assertError(await request('DELETE', `/v1/memory_layers/${layerId}/entries/${entryId}`), 403, 7, refusedChange());
    });

    it('refuses assigning it to a variation with PERMISSION_DENIED', async () => {
      const variationId = (await world.get(`/v1/workspaces/${ws.workspaceId}/agents/${hourAgentId}/variations`)).items[0].metadata.id;
      assertError(
        await request('POST', `/v1/agent_variations/${variationId}/memory_layer_assignments`, { memoryLayerId: layerId }),
        403, 7, `memory layer ${layerId} is system-managed and cannot be assigned to a variation`,
      );
    });

    it('refuses it in an objective\'s memoryLayerIds with INVALID_ARGUMENT naming the field', async () => {
      assertError(
        await request('POST', world.base(), { agentId: hourAgentId, initialMessage: 'SAY hi', memoryLayerIds: [layerId] }),
        400, 3, `memoryLayerIds[0]: memory layer ${layerId} is system-managed and cannot be put in an objective's stack`,
      );
    });

    it('refuses a bundle declaring a layer of its name, even with adopt, and one referencing it from a variation', async () => {
      const bundles = `/v1/workspaces/${ws.workspaceId}/bundles`;
      const declaring = { memoryLayers: [{ metadata: { name: `episodic/${key}` }, spec: { type: 'MEMORY_LAYER_TYPE_EPISODIC' }, entries: [{ spec: { key: 'notes', content: 'taken over' } }] }] };
      const takeover = `memory layer "episodic/${key}" (${layerId}) is system-managed; a bundle cannot take it over`;
      assertError(await request('PUT', `${bundles}/takeover`, declaring), 403, 7, takeover);
      assertError(await request('PUT', `${bundles}/takeover?adopt=true`, declaring), 403, 7, takeover);
      const referencing = {
        agents: [{
          metadata: { name: `bundled-${key}` },
          variations: [{ metadata: { name: 'v1' }, spec: { modelConfig: { modelId: MODEL_ID } }, memoryLayers: [`episodic/${key}`] }],
        }],
      };
      assertError(await request('PUT', `${bundles}/referencing`, referencing), 403, 7, `memory layer ${layerId} is system-managed and cannot be assigned to a variation`);
    });

    it('leaves the layer and its entry as they were after every refusal', async () => {
      const layer = await world.get(`/v1/memory_layers/${layerId}`);
      assert.equal(layer.spec.description, 'Episodic memory shared by the objectives with this episodic key (system-managed)');
      assert.equal(layer.metadata.bundleKey ?? '', '');
      assert.deepEqual(await world.entryRows(layerId), [{ key: 'notes', content: 'remember me' }]);
      const [variation] = (await world.get(`/v1/workspaces/${ws.workspaceId}/agents/${hourAgentId}/variations?includeInfo=true`)).items;
      assert.deepEqual(variation.info.memoryLayerAssignments, []);
      for (const bundleKey of ['takeover', 'referencing']) {
        assert.equal((await request('GET', `/v1/workspaces/${ws.workspaceId}/bundles/${bundleKey}`)).status, 404, `nothing of bundle ${bundleKey} was kept`);
      }
    });
  });
});

describe('episodic memory expiry (a node sweeping every 100 ms)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;
  const world = episodicWorld(() => api, () => ws);

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_EPISODIC_SWEEP_INTERVAL_MS: '100' } });
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'forgetful' } })).metadata.id;
    await createVariation(api, ws.token, ws.workspaceId, agentId, {
      spec: { prompt: 'You forget fast.', modelConfig: { modelId: MODEL_ID }, enableEpisodicMemory: true, episodicMemoryTtl: 2 },
    });
  });

  after(async () => {
    await api?.close();
  });

  it('removes the layer and its entries after the TTL, and a later objective with the key starts afresh', async () => {
    const key = episodeKey();
    // SLEEP 0: the read is the next model turn, so it finds what the write stored (and names the layer).
    const first = await world.run(agentId, key, `${write('fact', 'short-lived')}\nSLEEP 0\n${read('fact')}\nSAY saved`);
    const [memoryRead] = first.of('MEMORY_READ');
    assert.ok(memoryRead, JSON.stringify(first.events.map((event) => event.data)));
    const { memoryLayerId, memoryEntryId } = memoryRead.data.memoryRead;
    const status = async (path: string) => (await api.request('GET', path, { token: ws.token })).status;
    await eventually(async () => (await status(`/v1/memory_layers/${memoryLayerId}`)) === 404, 'the layer swept', 30_000);
    assert.equal(await status(`/v1/memory_layers/${memoryLayerId}/entries/${memoryEntryId}`), 404);
    assert.deepEqual(await world.entryRows(memoryLayerId), []);
    const later = await world.run(agentId, key, `${read('fact')}\nSAY forgotten`);
    assert.equal(later.of('MEMORY_READ').length, 0);
    assert.match(later.of('TOOL_ERROR')[0].data.toolError.message, /nothing is stored under the key "fact"/);
  });
});
