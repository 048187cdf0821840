// THOMPSON_SAMPLING end to end (issue 27 item 1): the real app with an
// embedded actor runtime over the shared test database, and (the selection
// with feedback case) in cluster mode over NATS (runtime-modes.ts). Feedback posted on
// objectives moves later objectives to the better-rated variation; creating
// objectives reads feedback counts from memory, not one query per objective;
// another node's feedback is counted once its loaded counts expire.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FEEDBACK_TALLY_TTL_MS, FeedbackTallyCache } from '../../src/agents/feedback-tallies';
import { FeedbackService } from '../../src/agents/feedback.service';
import { createAgentsStore } from '../../persistence/repositories/agents.store';
import type { TestApi } from '../support/api';
import { assertError, createAgent, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { Code } from '../support/fixtures';
import { seeded } from '../support/seeded-random';
import { captureStatements, countStatements, explainOnLargeTables } from '../support/statement-plans';
import { sharedTestDatabase } from '../support/global-setup';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { casesOf, RUNTIME_MODES } from '../support/runtime-modes';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const THOMPSON = 'VARIATION_SELECTION_MODE_THOMPSON_SAMPLING';
/** Any read of the feedback table, however it is written. */
const FEEDBACK_READ = /\bFROM\s+"?feedback"?(\s|$)/i;

for (const mode of RUNTIME_MODES) describe(`THOMPSON_SAMPLING variation selection (${mode.name})`, function () {
  const { representative, everyCase } = casesOf(mode);
  this.timeout(120_000);
  let api: TestApi;
  let ws: WorkspaceFixture;

  before(async () => {
    api = await mode.start();
    ws = await workspaceFixture(api);
  });
  after(async () => api?.close());

  const workspaceRef = () => ({ id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });

  async function createObjective(body: Record<string, unknown>): Promise<Json> {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, { token: ws.token, body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  async function rate(objectiveId: string, positive: boolean): Promise<void> {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}/feedback`, {
      token: ws.token, body: { rating: positive ? 'FEEDBACK_RATING_POSITIVE' : 'FEEDBACK_RATING_NEGATIVE' },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
  }

  /** A THOMPSON_SAMPLING agent with `good`, `poor` and a weight 0 `dark` variation. */
  async function banditAgent(name: string): Promise<{ agentId: string; good: string; poor: string; dark: string }> {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name }, spec: { variationSelectionMode: THOMPSON } })).metadata.id;
    const variation = async (variationName: string, weight: number) =>
      (await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: variationName }, spec: { modelConfig: { modelId: MODEL_ID }, weight } })).metadata.id as string;
    return { agentId, good: await variation('good', 1), poor: await variation('poor', 1), dark: await variation('dark', 0) };
  }

  everyCase('accepts VARIATION_SELECTION_MODE_THOMPSON_SAMPLING on create and update, and refuses an unknown mode naming the field', async () => {
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'bandit-mode' }, spec: { variationSelectionMode: THOMPSON } });
    assert.equal(agent.spec.variationSelectionMode, THOMPSON);
    const path = `/v1/workspaces/${ws.workspaceId}/agents/${agent.metadata.id}`;
    const weighted = await api.request('PATCH', path, { token: ws.token, body: { spec: { variationSelectionMode: 'VARIATION_SELECTION_MODE_WEIGHTED' } } });
    assert.equal(weighted.status, 200, JSON.stringify(weighted.body));
    const back = await api.request('PATCH', path, { token: ws.token, body: { spec: { variationSelectionMode: THOMPSON } } });
    assert.equal(back.body.spec.variationSelectionMode, THOMPSON);
    assert.equal((await api.request('GET', path, { token: ws.token })).body.spec.variationSelectionMode, THOMPSON);
    assertError(
      await api.request('PATCH', path, { token: ws.token, body: { spec: { variationSelectionMode: 'VARIATION_SELECTION_MODE_BANDIT' } } }),
      400, Code.INVALID_ARGUMENT, /^spec\.variationSelectionMode: /,
    );
  });

  representative('sends objectives mostly to the variation rated better through POST .../feedback, reading no feedback per objective', async () => {
    const { agentId, good, poor, dark } = await banditAgent('bandit');
    // Users rate `good` 9 of 10 positive and `poor` 2 of 10.
    for (let i = 0; i < 10; i++) {
      await rate((await createObjective({ agentId, variationId: good, initialMessage: 'SAY hello' })).metadata.id, i !== 0);
      await rate((await createObjective({ agentId, variationId: poor, initialMessage: 'SAY hello' })).metadata.id, i < 2);
    }

    const reads = countStatements(FEEDBACK_READ);
    const started = Date.now();
    const chosen: string[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        const objective = await createObjective({ agentId, initialMessage: 'SAY hello' });
        chosen.push(objective.spec.variationId);
        // Users go on rating as before; this node counts each rating in memory.
        await rate(objective.metadata.id, objective.spec.variationId === good);
      }
    } finally {
      reads.stop();
    }
    const elapsedMs = Date.now() - started;

    const toGood = chosen.filter((id) => id === good).length;
    assert.ok(toGood >= 27, `${toGood} of 30 objectives ran the better-rated variation`);
    assert.ok(!chosen.includes(dark), 'a weight 0 variation is never selected automatically');
    // The counts were loaded once (again only after FEEDBACK_TALLY_TTL_MS), not per objective or per rating.
    assert.ok(reads.count() >= 1, 'the counts were read from the feedback table');
    assert.ok(reads.count() <= 1 + Math.floor(elapsedMs / FEEDBACK_TALLY_TTL_MS), `${reads.count()} feedback reads for 30 objectives in ${elapsedMs} ms`);

    // An explicit id still wins, the poorly rated and the weight 0 one alike.
    assert.equal((await createObjective({ agentId, variationId: poor, initialMessage: 'SAY hello' })).spec.variationId, poor);
    assert.equal((await createObjective({ agentId, variationId: dark, initialMessage: 'SAY hello' })).spec.variationId, dark);
    // VariationService.select reads the same counts.
    assert.equal((await api.services.variations.select(workspaceRef(), agentId, undefined, seeded(3))).id, good);
  });

  everyCase("counts this node's feedback at once and another node's once that node's loaded counts expire", async () => {
    const { agentId, good, poor, dark } = await banditAgent('bandit-nodes');
    const ttlMs = 1000;
    // Another node: its own services over the same database, with a short TTL.
    const store = createAgentsStore(api.dataSource);
    const other = new FeedbackService(store, new FeedbackTallyCache((id) => store.feedback.talliesOfAgent(id), { ttlMs }));
    const here = api.services.feedback;
    await here.recordFeedback(workspaceRef(), { agentId, variationId: good, rating: 'FEEDBACK_RATING_POSITIVE' });
    const loaded = Date.now();
    const none = { positive: 0, negative: 0 };
    assert.deepEqual(await other.talliesOf(agentId), new Map([[good, { positive: 1, negative: 0 }], [poor, none], [dark, none]]));
    assert.deepEqual(await here.talliesOf(agentId), new Map([[good, { positive: 1, negative: 0 }], [poor, none], [dark, none]]));

    await here.recordFeedback(workspaceRef(), { agentId, variationId: poor, rating: 'FEEDBACK_RATING_NEGATIVE' });
    await here.recordFeedback(workspaceRef(), { agentId, variationId: good, rating: 'FEEDBACK_RATING_NEGATIVE' });
    const reads = countStatements(FEEDBACK_READ);
    try {
      const now = await here.talliesOf(agentId);
      assert.deepEqual([now.get(good), now.get(poor)], [{ positive: 1, negative: 1 }, { positive: 0, negative: 1 }]);
    } finally {
      reads.stop();
    }
    assert.equal(reads.count(), 0, 'this node counted its own ratings in memory');

    // The other node selects with what it loaded until its TTL has passed, then with the table's counts.
    assert.ok(Date.now() - loaded < ttlMs, 'the steps above took longer than the TTL');
    assert.deepEqual((await other.talliesOf(agentId)).get(poor), none);
    await sleep(ttlMs - (Date.now() - loaded) + 10);
    const after = await other.talliesOf(agentId);
    assert.deepEqual([after.get(good), after.get(poor)], [{ positive: 1, negative: 1 }, { positive: 0, negative: 1 }]);
  });

  everyCase("loads an agent's counts through the feedback index by variation, not a scan of the feedback table once it is large", async () => {
    const { agentId, good } = await banditAgent('bandit-plans');
    await api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId: good, rating: 'FEEDBACK_RATING_POSITIVE' });
    const capture = captureStatements();
    let statements;
    try {
      await createAgentsStore(api.dataSource).feedback.talliesOfAgent(agentId);
    } finally {
      statements = capture.stop().filter((statement) => FEEDBACK_READ.test(statement.text));
    }
    assert.equal(statements.length, 1);
    // Feedback grows without bound; an agent's variations stay few (the fill's copies would give one agent thousands).
    const plans = await explainOnLargeTables((await sharedTestDatabase()).url, statements, ['feedback']);
    assert.deepEqual(plans.unprepared, []);
    const feedbackScans = plans.scans.filter((scan) => scan.table === 'feedback');
    assert.ok(feedbackScans.length > 0, JSON.stringify(plans.scans));
    // Each variation's own rows, through its index: the cost follows the agent's feedback, not the table's.
    for (const scan of feedbackScans) assert.ok(scan.node !== 'Seq Scan' && scan.keyed && scan.index === 'ix_feedback_variation', JSON.stringify(scan));
  });
});
