// The usage report (issue 27 item 2) through the API, with the embedded
// runtime and (the sums case) in cluster mode over NATS (runtime-modes.ts): objectives run to completion on the builtin/scripted model (a
// parent with a sub-objective among them) and on a fake OpenRouter that
// reports a cost, then GET .../usage for each groupBy matches the usage their
// events show, summed by hand: each objective's own model calls once, a
// sub-objective under its own agent and never again in its parent; a range
// selects the objectives by their createdAt. Ranges,
// paging, the scope, another workspace, bad parameters and tenant erasure.
import assert from 'node:assert/strict';
import type { TestApi } from '../support/api';
import { assertError, createAgent, created, createVariation, MODEL_ID } from '../support/agents-world';
import { eventually } from '../support/cluster-harness';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { objectiveEvents, runObjective, type FinishedObjective } from '../support/objective-runs';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { roundCents } from '../../src/models/model-usage';
import { casesOf, RUNTIME_MODES } from '../support/runtime-modes';

/* eslint-disable @typescript-eslint/no-explicit-any */

const PRICED_MODEL = 'openai/gpt-4o-mini';
const HOUR_MS = 3_600_000;

interface Sums {
  promptTokens: number;
  completionTokens: number;
  costCents: number;
  objectiveCount: number;
}

/** An objective's own model calls, from its events: the answers, and the failed calls and summaries that reported usage. */
function ownUsage(events: any[]): Omit<Sums, 'objectiveCount'> {
  const usages = events.flatMap((event) => {
    const data = event.data;
    const usage = data.assistantMessage?.usage ?? data.error?.usage ?? data.contextWindowCompacted?.usage;
    return usage ? [usage] : [];
  });
  return {
    promptTokens: usages.reduce((sum, usage) => sum + usage.promptTokens, 0),
    completionTokens: usages.reduce((sum, usage) => sum + usage.completionTokens, 0),
    costCents: usages.reduce((sum, usage) => sum + usage.costCents, 0),
  };
}

for (const mode of RUNTIME_MODES) describe(`GET /v1/workspaces/{workspaceId}/usage (${mode.name})`, function () {
  const { representative, everyCase } = casesOf(mode);
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let openRouter: FakeOpenRouter;
  const agents: Record<string, { id: string; variationId: string; model: string }> = {};
  /** Every objective run, sub-objectives included, with its events. */
  const runs: Array<Pick<FinishedObjective, 'objective' | 'events'>> = [];

  const usagePath = (query: string, workspaceId = ws.workspaceId) => `/v1/workspaces/${workspaceId}/usage?${query}`;
  const report = async (query: string, token = ws.token, workspaceId = ws.workspaceId) => {
    const response = await api.request('GET', usagePath(query, workspaceId), { token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { groupBy: string; from: string; to: string; items: Array<Sums & { key: string | null }>; pagination: { nextCursor: string } };
  };
  const byKey = (items: Array<Sums & { key: string | null }>) => Object.fromEntries(items.map(({ key, ...sums }) => [String(key), sums]));

  /**
   * What the report should say for `groupBy`, summed by hand from the runs:
   * the objectives created in [from, to) (all of them by default), each with
   * all its own model calls.
   */
  function expected(keyOf: (objective: any) => string | null, range?: { from: string; to: string }): Record<string, Sums> {
    const sums: Record<string, Sums> = {};
    const inRange = (objective: any) => !range || (objective.metadata.createdAt >= range.from && objective.metadata.createdAt < range.to);
    for (const { objective, events } of runs.filter((entry) => inRange(entry.objective))) {
      const key = String(keyOf(objective));
      const own = ownUsage(events);
      const sum = sums[key] ?? { promptTokens: 0, completionTokens: 0, costCents: 0, objectiveCount: 0 };
      sums[key] = {
        promptTokens: sum.promptTokens + own.promptTokens,
        completionTokens: sum.completionTokens + own.completionTokens,
        costCents: roundCents(sum.costCents + own.costCents),
        objectiveCount: sum.objectiveCount + 1,
      };
    }
    return sums;
  }

  const agentOf = (name: string) => agents[name].id;
  const run = async (body: Record<string, unknown>) => {
    const finished = await runObjective(api, ws, body);
    assert.equal(finished.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(finished.objective.info));
    runs.push(finished);
    return finished;
  };

  before(async () => {
    api = await mode.start({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    openRouter = await startFakeOpenRouter();
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, {
      metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-test-usage', openrouter: { baseUrl: openRouter.baseUrl } },
    });
    for (const [name, model] of [['writer', MODEL_ID], ['researcher', MODEL_ID], ['lead', MODEL_ID], ['priced', PRICED_MODEL]]) {
      const id = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
      const variation = await createVariation(api, ws.token, ws.workspaceId, id, { spec: { prompt: 'You help.', modelConfig: { modelId: model } } });
      agents[name] = { id, variationId: variation.metadata.id, model };
    }
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentOf('lead')}/variations/${agents.lead.variationId}/assignments`, { agentId: agentOf('researcher') });

    await run({ agentId: agentOf('writer'), initialMessage: 'SAY hello there', tenant: { externalId: 'acme' } });
    await run({ agentId: agentOf('writer'), initialMessage: 'SAY hi', tenant: { externalId: 'globex' } });
    await run({ agentId: agentOf('writer'), initialMessage: 'SAY nobody asked' });
    const parent = await run({ agentId: agentOf('lead'), initialMessage: 'CALL researcher {"prompt":"SAY found it"}\nSAY done', tenant: { externalId: 'acme' } });
    const children = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives?parentObjectiveId=${parent.id}`, { token: ws.token });
    assert.equal(children.body.items.length, 1, JSON.stringify(children.body));
    const child = children.body.items[0];
    runs.push({ objective: child, ...(await objectiveEvents(api, ws, child.metadata.id)) });
    openRouter.answer(fakeAnswers.completion({ content: 'priced answer', usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cost: 0.0042 } }));
    await run({ agentId: agentOf('priced'), initialMessage: 'what does it cost?', tenant: { externalId: 'globex' } });
  });

  after(async () => {
    await api?.close();
    await openRouter?.close();
  });

  representative('sums each objective\'s own model calls once per agent, variation, tenant and model; a sub-objective under its own agent', async () => {
    const modelOf = (objective: any) => Object.values(agents).find((agent) => agent.id === objective.spec.agentId)!.model;
    const dimensions: Array<[string, (objective: any) => string | null]> = [
      ['agent', (objective) => objective.spec.agentId],
      ['variation', (objective) => objective.spec.variationId],
      ['tenant', (objective) => objective.spec.tenantId ?? null],
      ['model', modelOf],
    ];
    for (const [groupBy, keyOf] of dimensions) {
      const answer = await report(`groupBy=${groupBy}`);
      assert.equal(answer.groupBy, groupBy);
      assert.equal(answer.pagination.nextCursor, '');
      assert.deepEqual(byKey(answer.items), expected(keyOf), groupBy);
      const keys = answer.items.map((item) => item.key);
      assert.deepEqual(keys, [...keys].sort((a, b) => (String(a) < String(b) ? -1 : 1)).map((key) => key), `${groupBy}: in key order`);
    }

    const agentSums = byKey((await report('groupBy=agent')).items);
    assert.deepEqual(
      Object.fromEntries(Object.entries(agents).map(([name, agent]) => [name, agentSums[agent.id]?.objectiveCount])),
      { writer: 3, researcher: 1, lead: 1, priced: 1 },
    );
    assert.equal(agentSums[agentOf('priced')].costCents, 0.42, 'the provider\'s cost');
    assert.ok(agentSums[agentOf('researcher')].promptTokens > 0);

    // The parent's info.usage holds its child's; its agent's sum holds only the parent's own calls.
    const [parent, child] = runs.filter((entry) => [agentOf('lead'), agentOf('researcher')].includes(entry.objective.spec.agentId)).map((entry) => entry.objective);
    const fresh = async (id: string) => (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}`, { token: ws.token })).body.info.usage;
    const parentUsage = await fresh(parent.metadata.id);
    const childUsage = await fresh(child.metadata.id);
    assert.equal(agentSums[agentOf('lead')].promptTokens, parentUsage.promptTokens - childUsage.promptTokens);
    assert.equal(agentSums[agentOf('researcher')].promptTokens, childUsage.promptTokens);
    // So every groupBy sums to the top-level objectives' usage: nothing counted twice.
    const topLevel = runs.filter((entry) => !entry.objective.spec.parentObjectiveId);
    let topLevelPrompt = 0;
    for (const entry of topLevel) topLevelPrompt += (await fresh(entry.objective.metadata.id)).promptTokens;
    for (const groupBy of ['agent', 'variation', 'tenant', 'model']) {
      const total = (await report(`groupBy=${groupBy}`)).items.reduce((sum, item) => sum + item.promptTokens, 0);
      assert.equal(total, topLevelPrompt, groupBy);
    }

    const tenants = byKey((await report('groupBy=tenant')).items);
    assert.equal(tenants.null.objectiveCount, 1, 'objectives without a tenant under key null');
    assert.equal(tenants[child.spec.tenantId].objectiveCount, 3, 'the sub-objective counts under the tenant it inherited');
  });

  everyCase("selects objectives by their createdAt: each range sums the objectives created in it; from and to are rounded out to whole hours", async () => {
    const iso = (time: number) => new Date(time).toISOString();
    const created = runs.map((entry) => Date.parse(entry.objective.metadata.createdAt)).sort((a, b) => a - b);
    const agentKey = (objective: any) => objective.spec.agentId;
    const firstHour = Math.floor(created[0] / HOUR_MS) * HOUR_MS;
    const lastHour = Math.floor(created[created.length - 1] / HOUR_MS) * HOUR_MS;
    const ranges = [
      [firstHour - 24 * HOUR_MS, lastHour + HOUR_MS], // all of them
      [firstHour + HOUR_MS, lastHour + 3 * HOUR_MS], // after the first hour: none, or those of a later hour if the runs crossed one
      [firstHour - 3 * HOUR_MS, firstHour], // before them
      [lastHour, lastHour + HOUR_MS], // the last hour's
    ];
    for (const [from, to] of ranges) {
      const answer = await report(`groupBy=agent&from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`);
      assert.deepEqual([answer.from, answer.to], [iso(from), iso(to)]);
      assert.deepEqual(byKey(answer.items), expected(agentKey, { from: answer.from, to: answer.to }), `[${answer.from}, ${answer.to})`);
    }
    assert.deepEqual(byKey((await report(`groupBy=agent&from=${encodeURIComponent(iso(lastHour + HOUR_MS))}&to=${encodeURIComponent(iso(lastHour + 2 * HOUR_MS))}`)).items), {}, 'nothing created after');
    const to = firstHour - 2 * HOUR_MS;
    const earlier = await report(`groupBy=agent&to=${encodeURIComponent(iso(to))}`);
    assert.deepEqual(earlier.items, []);
    const hours = (time: number, round: (hours: number) => number) => iso(round(time / HOUR_MS) * HOUR_MS);
    assert.deepEqual([earlier.from, earlier.to], [hours(to - 30 * 24 * HOUR_MS, Math.floor), hours(to, Math.ceil)], 'the 30 days before to');
    const answer = await report('groupBy=model&from=2026-01-01T10:30:00%2B02:00&to=2026-01-01T10:00:01Z');
    assert.deepEqual([answer.from, answer.to], ['2026-01-01T08:00:00.000Z', '2026-01-01T11:00:00.000Z']);
  });

  everyCase('pages through the keys in key order', async () => {
    const all = (await report('groupBy=agent')).items;
    const seen: typeof all = [];
    let cursor = '';
    for (let page = 0; page < 10; page++) {
      const answer = await report(`groupBy=agent&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...answer.items);
      cursor = answer.pagination.nextCursor;
      if (!cursor) break;
    }
    assert.deepEqual(seen, all);
    const tenantCursor = (await report('groupBy=tenant&limit=1')).pagination.nextCursor;
    assert.ok(tenantCursor);
    assertError(await api.request('GET', usagePath(`groupBy=agent&cursor=${tenantCursor}`), { token: ws.token }), 400, 3, /^cursor: was made for another groupBy/);
  });

  everyCase('needs objectives:read', async () => {
    const without = await ws.keyWith(['agents:manage', 'workspaces:read']);
    assertError(await api.request('GET', usagePath('groupBy=agent'), { token: without }), 403, 7, /^this credential lacks the objectives:read scope$/);
    const reader = await ws.keyWith(['objectives:read']);
    assert.deepEqual(byKey((await report('groupBy=agent', reader)).items), byKey((await report('groupBy=agent')).items));
  });

  everyCase("never shows another workspace's usage, and another workspace's key is refused", async () => {
    const other = await ws.otherWorkspace();
    const agentId = (await createAgent(api, other.token, other.workspaceId, { metadata: { name: 'elsewhere' } })).metadata.id as string;
    await createVariation(api, other.token, other.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    await runObjective(api, other, { agentId, initialMessage: 'SAY elsewhere', tenant: { externalId: 'acme' } });
    const theirs = await report('groupBy=agent', other.token, other.workspaceId);
    assert.deepEqual(theirs.items.map((item) => item.key), [agentId]);
    assert.equal(theirs.items[0].objectiveCount, 1);
    const ours = (await report('groupBy=agent')).items.map((item) => item.key);
    assert.equal(ours.includes(agentId), false);
    const tenants = (await report('groupBy=tenant')).items;
    assert.equal(tenants.reduce((sum, item) => sum + item.objectiveCount, 0), runs.length, 'the same tenant name elsewhere adds nothing here');
    assertError(await api.request('GET', usagePath('groupBy=agent', other.workspaceId), { token: ws.token }), 403, 7, /workspace/);
  });

  everyCase('refuses bad parameters naming them', async () => {
    const bad = async (query: string, message: RegExp) => assertError(await api.request('GET', usagePath(query), { token: ws.token }), 400, 3, message);
    await bad('', /^groupBy: is required/);
    await bad('groupBy=subject', /^groupBy: must be one of agent, variation, tenant, model/);
    await bad('groupBy=agent&from=yesterday', /^from: /);
    await bad('groupBy=agent&to=2026-01-01', /^to: /);
    await bad('groupBy=agent&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', /^from: must not be after to/);
    await bad('groupBy=agent&from=2024-01-01T00:00:00Z&to=2025-06-01T00:00:00Z', /^from: .*longer than 366 days/);
    await bad('groupBy=agent&from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:59Z', /^to: must be within the years 0001 to 9999/);
    await bad('groupBy=agent&to=0000-01-10T00:00:00Z', /^to: must be within the years 0001 to 9999/);
    await bad('groupBy=agent&limit=0', /^limit: /);
    await bad('groupBy=agent&cursor=nonsense', /^cursor: /);
    // A forged cursor whose key holds a NUL (Postgres refuses it in a parameter).
    await bad(`groupBy=agent&cursor=${Buffer.from(JSON.stringify({ a: 'agent:\u0000x', s: 'asc' })).toString('base64url')}`, /^cursor: is not a cursor returned by this list/);
    await bad('groupBy=agent&cursor=eyJhIjoiYWdlbnQ6XHUwMDAweCIsInMiOiJhc2MifQ', /^cursor: is not a cursor returned by this list/);
    await bad('groupBy=agent&sortOrder=desc', /^sortOrder: is not a known field/);
  });

  everyCase("moves an erased tenant's sums to the key [erased] once its erasure job completes", async () => {
    const before = byKey((await report('groupBy=tenant')).items);
    const acme = runs.find((entry) => entry.objective.spec.tenantId && entry.objective.spec.agentId === agentOf('writer'))!.objective.spec.tenantId as string;
    const deleted = await api.request('DELETE', `/v1/workspaces/${ws.workspaceId}/tenants/${acme}`, { token: ws.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    await eventually(async () => {
      const job = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/erasures/${deleted.body.metadata.id}`, { token: ws.token });
      return job.body.info.status === 'ERASURE_STATUS_COMPLETED';
    }, 'the erasure job completed', 30_000);
    const after = byKey((await report('groupBy=tenant')).items);
    assert.equal(acme in after, false, 'no sum under the erased tenant id');
    assert.deepEqual(after['[erased]'], before[acme]);
    const { [acme]: _erased, ...othersBefore } = before;
    const { '[erased]': _moved, ...othersAfter } = after;
    assert.deepEqual(othersAfter, othersBefore, 'the other tenants keep theirs');
    const agentTotals = (await report('groupBy=agent')).items.reduce((sum, item) => sum + item.promptTokens, 0);
    const tenantTotals = Object.values(after).reduce((sum, item) => sum + item.promptTokens, 0);
    assert.equal(tenantTotals, agentTotals, 'the totals stay');
  });
});
