import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createTool, createVariation, describeGuards, MODEL_ID, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';

const MISSING_VARIATION = 'agentvar_01ARZ3NDEKTSV4RRFFQ69G5FAV';

const FULL_SPEC = {
  description: 'friendly',
  prompt: 'You are helpful.',
  modelConfig: { modelId: MODEL_ID, temperature: 0.3 },
  constraints: { maxSubObjectives: 3, maxToolCalls: 0, maxModelTurns: 20, maxTokens: 100000, maxCostCents: 12.5, modelRetryBudgetSeconds: 600 },
  compactionConfig: { triggerThreshold: 0.5, summarization: { instructions: 'be brief' }, toolResultClearing: { preserveRecentResults: 4 } },
  enableEpisodicMemory: true,
  episodicMemoryTtl: 3600,
  toolSelection: { assignedTools: { allowDiscovery: true }, autoDiscovery: { hints: ['crm'], maxTools: 5 } },
  progressiveDiscovery: { hints: ['billing'], maxTools: 3, rerankThreshold: 0.2 },
  weight: 7,
};

describe('agent variations', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
  });

  /** Both path styles of the variations collection, served by the same code. */
  const styles = [
    { name: 'workspace-addressed', collection: () => `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations` },
    { name: 'flat', collection: () => `/v1/agents/${agentId}/variations` },
  ];

  for (const style of styles) {
    describe(`POST ${style.name} variations`, () => {
      it('creates a variation with every spec field', async () => {
        const response = await api.request('POST', style.collection(), { token: ws.token, body: { metadata: { name: 'v1' }, spec: FULL_SPEC } });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.match(response.body.metadata.id, /^agentvar_[0-9A-Z]{26}$/);
        assert.deepEqual(response.body.spec, FULL_SPEC);
        assert.equal(response.body.info.agent.id, agentId);
        assert.equal(response.body.info.model.name, MODEL_ID);
        assert.match(response.body.info.model.id, /^model_/);
      });

      it('fills the defaults of section 8', async () => {
        const response = await api.request('POST', style.collection(), { token: ws.token, body: { metadata: { name: 'v1' } } });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.deepEqual(response.body.spec, {
          modelConfig: {},
          constraints: { maxSubObjectives: 0, maxToolCalls: 0, maxModelTurns: 50, maxCostCents: 0 },
          compactionConfig: { triggerThreshold: 0.75, summarization: {}, toolResultClearing: { preserveRecentResults: 2 } },
          enableEpisodicMemory: false,
          weight: 1,
        });
        assert.deepEqual(response.body.info, {
          agent: { id: agentId, name: 'support-bot' },
          assignments: [],
          memoryLayerAssignments: [],
          createdBy: response.body.info.createdBy,
          feedbackCount: 0,
          score: 0.5,
          subAgentCount: 0,
          toolCount: 0,
          toolSetCount: 0,
        });
      });

      it('returns NOT_FOUND for an unknown agent', async () => {
        const response = await api.request('POST', style.collection().replace(agentId, 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV'), { token: ws.token, body: { metadata: { name: 'v' } } });
        assertError(response, 404, 5, 'agent agent_01ARZ3NDEKTSV4RRFFQ69G5FAV not found');
      });
    });

    describe(`GET/PATCH/DELETE ${style.name} variation`, () => {
      it('gets, updates and deletes a variation', async () => {
        const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'p', modelConfig: { modelId: MODEL_ID, temperature: 0.2 } } });
        const path = `${style.collection()}/${variation.metadata.id}`;
        const got = await api.request('GET', path, { token: ws.token });
        assert.equal(got.status, 200);
        assert.equal(got.body.spec.prompt, 'p');
        const patched = await api.request('PATCH', path, { token: ws.token, body: { spec: { modelConfig: { temperature: 0.9 }, weight: 0 } } });
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
        assert.deepEqual(patched.body.spec.modelConfig, { modelId: MODEL_ID, temperature: 0.9 });
        assert.equal(patched.body.spec.weight, 0);
        assert.equal(patched.body.spec.prompt, 'p');
        const deleted = await api.request('DELETE', path, { token: ws.token });
        assert.deepEqual([deleted.status, deleted.body], [200, {}]);
        assertError(await api.request('GET', path, { token: ws.token }), 404, 5, `agent variation ${variation.metadata.id} not found`);
      });

      it("returns NOT_FOUND for a variation of another agent", async () => {
        const otherAgent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'other' } });
        const variation = await createVariation(api, ws.token, ws.workspaceId, otherAgent.metadata.id);
        const response = await api.request('GET', `${style.collection()}/${variation.metadata.id}`, { token: ws.token });
        assertError(response, 404, 5, `agent variation ${variation.metadata.id} not found`);
      });

      it('lists the agent\'s variations, info only with includeInfo', async () => {
        const first = await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: 'a' } });
        await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: 'b' } });
        const plain = await api.request('GET', style.collection(), { token: ws.token });
        assert.equal(plain.status, 200);
        assert.deepEqual(plain.body.items.map((item: { metadata: { name: string } }) => item.metadata.name), ['a', 'b']);
        assert.equal(plain.body.items[0].info, undefined);
        const withInfo = await api.request('GET', `${style.collection()}?includeInfo=true&limit=1`, { token: ws.token });
        assert.equal(withInfo.body.items[0].metadata.id, first.metadata.id);
        assert.equal(withInfo.body.items[0].info.score, 0.5);
        assert.notEqual(withInfo.body.pagination.nextCursor, '');
      });
    });
  }

  describe('spec ranges', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['temperature above 1', { modelConfig: { temperature: 1.1 } }, 'spec.modelConfig.temperature: must be <= 1'],
      ['temperature below 0', { modelConfig: { temperature: -0.1 } }, 'spec.modelConfig.temperature: must be >= 0'],
      ['triggerThreshold above 1', { compactionConfig: { triggerThreshold: 1.5 } }, 'spec.compactionConfig.triggerThreshold: must be <= 1'],
      ['triggerThreshold below 0', { compactionConfig: { triggerThreshold: -1 } }, 'spec.compactionConfig.triggerThreshold: must be >= 0'],
      ['negative preserveRecentResults', { compactionConfig: { toolResultClearing: { preserveRecentResults: -1 } } }, 'spec.compactionConfig.toolResultClearing.preserveRecentResults: must be >= 0'],
      ['fractional preserveRecentResults', { compactionConfig: { toolResultClearing: { preserveRecentResults: 1.5 } } }, 'spec.compactionConfig.toolResultClearing.preserveRecentResults: must be of type integer'],
      ['negative weight', { weight: -1 }, 'spec.weight: must be >= 0'],
      ['weight beyond int32', { weight: 2 ** 31 }, 'spec.weight: must be <= 2147483647'],
      ['negative maxSubObjectives', { constraints: { maxSubObjectives: -1 } }, 'spec.constraints.maxSubObjectives: must be >= 0'],
      ['negative maxToolCalls', { constraints: { maxToolCalls: -2 } }, 'spec.constraints.maxToolCalls: must be >= 0'],
      ['negative maxModelTurns', { constraints: { maxModelTurns: -1 } }, 'spec.constraints.maxModelTurns: must be >= 0'],
      ['fractional maxModelTurns', { constraints: { maxModelTurns: 2.5 } }, 'spec.constraints.maxModelTurns: must be of type integer'],
      ['a string maxModelTurns', { constraints: { maxModelTurns: '50' } }, 'spec.constraints.maxModelTurns: must be of type integer'],
      ['negative maxTokens', { constraints: { maxTokens: -5 } }, 'spec.constraints.maxTokens: must be >= 0'],
      ['negative maxCostCents', { constraints: { maxCostCents: -0.5 } }, 'spec.constraints.maxCostCents: must be >= 0'],
      ['fractional maxTokens', { constraints: { maxTokens: 10.5 } }, 'spec.constraints.maxTokens: must be of type integer'],
      ['maxTokens beyond int32', { constraints: { maxTokens: 2 ** 31 } }, 'spec.constraints.maxTokens: must be <= 2147483647'],
      ['a string maxCostCents', { constraints: { maxCostCents: '5' } }, 'spec.constraints.maxCostCents: must be of type number'],
      ['negative modelRetryBudgetSeconds', { constraints: { modelRetryBudgetSeconds: -1 } }, 'spec.constraints.modelRetryBudgetSeconds: must be >= 0'],
      ['zero episodicMemoryTtl', { episodicMemoryTtl: 0 }, 'spec.episodicMemoryTtl: must be >= 1'],
      ['zero autoDiscovery.maxTools', { toolSelection: { autoDiscovery: { maxTools: 0 } } }, 'spec.toolSelection.autoDiscovery.maxTools: must be >= 1'],
      ['negative rerankThreshold', { progressiveDiscovery: { rerankThreshold: -0.5 } }, 'spec.progressiveDiscovery.rerankThreshold: must be >= 0'],
      ['rerankThreshold above 1', { progressiveDiscovery: { rerankThreshold: 1.5 } }, 'spec.progressiveDiscovery.rerankThreshold: must be <= 1'],
      ['a non-string hint', { progressiveDiscovery: { hints: [1] } }, 'spec.progressiveDiscovery.hints[0]: must be of type string'],
      ['an unknown nested field', { modelConfig: { topP: 1 } }, 'spec.modelConfig.topP: is not a known field'],
    ];
    for (const [what, spec, message] of cases) {
      it(`returns INVALID_ARGUMENT for ${what}`, async () => {
        const response = await api.request('POST', `/v1/agents/${agentId}/variations`, { token: ws.token, body: { metadata: { name: 'v' }, spec } });
        assertError(response, 400, 3, message);
      });
    }

    it('accepts the range bounds', async () => {
      const spec = {
        modelConfig: { temperature: 1 }, compactionConfig: { triggerThreshold: 0, toolResultClearing: { preserveRecentResults: 0 } }, weight: 0, constraints: { maxSubObjectives: 0 },
        progressiveDiscovery: { rerankThreshold: 1 },
      };
      const response = await api.request('POST', `/v1/agents/${agentId}/variations`, { token: ws.token, body: { metadata: { name: 'v' }, spec } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.spec.compactionConfig.triggerThreshold, 0);
      assert.equal(response.body.spec.progressiveDiscovery.rerankThreshold, 1);
      assert.equal(response.body.spec.weight, 0);
    });

    it('checks ranges on PATCH too', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId);
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, { token: ws.token, body: { spec: { modelConfig: { temperature: 2 } } } });
      assertError(response, 400, 3, 'spec.modelConfig.temperature: must be <= 1');
      const threshold = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}?updateMask=spec.progressiveDiscovery.rerankThreshold`, {
        token: ws.token, body: { spec: { progressiveDiscovery: { rerankThreshold: 1.01 } } },
      });
      assertError(threshold, 400, 3, 'spec.progressiveDiscovery.rerankThreshold: must be <= 1');
    });
  });

  describe('modelConfig.modelId', () => {
    it('returns INVALID_ARGUMENT for a model the workspace does not have', async () => {
      const response = await api.request('POST', `/v1/agents/${agentId}/variations`, { token: ws.token, body: { metadata: { name: 'v' }, spec: { modelConfig: { modelId: 'acme/nonexistent' } } } });
      assertError(response, 400, 3, 'spec.modelConfig.modelId: no model named "acme/nonexistent" exists in this workspace (names are family/model, see GET /v1/models)');
      assert.deepEqual(response.body.details[0].fieldViolations[0].field, 'spec.modelConfig.modelId');
    });

    it('checks the model on PATCH and clears it with the mask', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { modelConfig: { modelId: MODEL_ID } } });
      const path = `/v1/agents/${agentId}/variations/${variation.metadata.id}`;
      const bad = await api.request('PATCH', path, { token: ws.token, body: { spec: { modelConfig: { modelId: 'nope/nope' } } } });
      assertError(bad, 400, 3, /^spec\.modelConfig\.modelId: no model named "nope\/nope"/);
      const cleared = await api.request('PATCH', path, { token: ws.token, body: { updateMask: 'spec.modelConfig' } });
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.deepEqual(cleared.body.spec.modelConfig, {});
      assert.equal(cleared.body.info.model, undefined);
    });
  });

  describe('PATCH update masks', () => {
    it('resets a defaulted field named in the mask to its default', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { compactionConfig: { triggerThreshold: 0.2 }, weight: 5 } });
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, {
        token: ws.token, body: { updateMask: 'spec.compactionConfig.triggerThreshold,spec.weight' },
      });
      assert.equal(response.status, 200);
      assert.equal(response.body.spec.compactionConfig.triggerThreshold, 0.75);
      assert.equal(response.body.spec.weight, 1);
    });

    it('keeps maxTokens 0 (no token cap) apart from unset (the node\'s default cap), which the mask restores', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { constraints: { maxTokens: 0 } } });
      assert.equal(variation.spec.constraints.maxTokens, 0);
      const path = `/v1/agents/${agentId}/variations/${variation.metadata.id}`;
      const response = await api.request('PATCH', path, { token: ws.token, body: { updateMask: 'spec.constraints.maxTokens' } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal('maxTokens' in response.body.spec.constraints, false, JSON.stringify(response.body.spec.constraints));
      assert.equal('maxTokens' in (await api.request('GET', path, { token: ws.token })).body.spec.constraints, false);
    });

    it('merges a partial toolSelection or progressiveDiscovery without a mask, keeping the fields not sent', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: FULL_SPEC });
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, {
        token: ws.token, body: { spec: { toolSelection: { autoDiscovery: { maxTools: 9 } }, progressiveDiscovery: { rerankThreshold: 0.5 } } },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec.toolSelection, { assignedTools: { allowDiscovery: true }, autoDiscovery: { hints: ['crm'], maxTools: 9 } });
      assert.deepEqual(response.body.spec.progressiveDiscovery, { hints: ['billing'], maxTools: 3, rerankThreshold: 0.5 });
    });

    it('applies mask paths inside toolSelection and progressiveDiscovery, clearing a named leaf the body leaves out', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: FULL_SPEC });
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, {
        token: ws.token,
        body: {
          updateMask: 'spec.progressiveDiscovery.hints,spec.toolSelection.assignedTools.allowDiscovery,spec.toolSelection.autoDiscovery',
          spec: { progressiveDiscovery: { hints: ['refunds'], maxTools: 50 }, toolSelection: { autoDiscovery: { hints: ['x'] } } },
        },
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(response.body.spec.progressiveDiscovery, { hints: ['refunds'], maxTools: 3, rerankThreshold: 0.2 });
      assert.deepEqual(response.body.spec.toolSelection, { autoDiscovery: { hints: ['x'] } });
      const whole = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, {
        token: ws.token, body: { updateMask: 'spec.progressiveDiscovery', spec: { progressiveDiscovery: { maxTools: 2 } } },
      });
      assert.deepEqual(whole.body.spec.progressiveDiscovery, { maxTools: 2 });
    });

    it('returns INVALID_ARGUMENT for an unknown mask path', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId);
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, { token: ws.token, body: { updateMask: 'spec.modelConfig.topP' } });
      assertError(response, 400, 3, /^updateMask: "spec\.modelConfig\.topP" is not an updatable field/);
    });

    it('returns ABORTED for a stale If-Match', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId);
      const response = await api.request('PATCH', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, {
        token: ws.token, body: { spec: { prompt: 'x' } }, headers: { 'if-match': '2001-01-01T00:00:00.000Z' },
      });
      assertError(response, 409, 10, /^the resource was modified/);
    });
  });

  describe('info', () => {
    it('counts tools, tool sets and sub-agents and lists the assignments', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId);
      const tool = await createTool(api, ws.token, ws.workspaceId);
      const toolSet = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/tool_sets`, { token: ws.token, body: { metadata: { name: 'set' } } });
      const subAgent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'helper' } });
      const assign = (body: Record<string, unknown>) => api.request('POST', `/v1/agent_variations/${variation.metadata.id}/assignments`, { token: ws.token, body });
      const toolAssignment = (await assign({ toolId: tool.metadata.id, requiresApproval: true })).body;
      await assign({ toolSetId: toolSet.body.metadata.id });
      await assign({ agentId: subAgent.metadata.id });
      const response = await api.request('GET', `/v1/agents/${agentId}/variations/${variation.metadata.id}`, { token: ws.token });
      assert.equal(response.body.info.toolCount, 1);
      assert.equal(response.body.info.toolSetCount, 1);
      assert.equal(response.body.info.subAgentCount, 1);
      assert.deepEqual(response.body.info.assignments, [
        { id: toolAssignment.id, tool: { id: tool.metadata.id, name: 'lookup' }, requiresApproval: true },
        { id: response.body.info.assignments[1].id, toolSet: { id: toolSet.body.metadata.id, name: 'set' } },
        { id: response.body.info.assignments[2].id, agent: { id: subAgent.metadata.id, name: 'helper' } },
      ]);
    });

    it('reports feedbackCount and the Beta posterior score', async () => {
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId);
      const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const };
      for (const rating of ['FEEDBACK_RATING_POSITIVE', 'FEEDBACK_RATING_POSITIVE', 'FEEDBACK_RATING_POSITIVE', 'FEEDBACK_RATING_NEGATIVE'] as const) {
        await api.services.feedback.recordFeedback(workspace, { agentId, variationId: variation.metadata.id, rating });
      }
      const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}`, { token: ws.token });
      assert.equal(response.body.info.feedbackCount, 4);
      assert.equal(response.body.info.score, 4 / 6);
    });
  });

  describe('VariationService.select', () => {
    it("picks by the agent's mode, honours an explicit id and refuses another agent's variation", async () => {
      const workspace = { id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const };
      const weighted = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'w' }, spec: { variationSelectionMode: 'VARIATION_SELECTION_MODE_WEIGHTED' } });
      const zero = await createVariation(api, ws.token, ws.workspaceId, weighted.metadata.id, { metadata: { name: 'zero' }, spec: { weight: 0 } });
      const heavy = await createVariation(api, ws.token, ws.workspaceId, weighted.metadata.id, { metadata: { name: 'heavy' }, spec: { weight: 5 } });
      for (const draw of [0, 0.5, 0.99]) {
        assert.equal((await api.services.variations.select(workspace, weighted.metadata.id, undefined, () => draw)).id, heavy.metadata.id);
      }
      assert.equal((await api.services.variations.select(workspace, weighted.metadata.id, zero.metadata.id)).id, zero.metadata.id);
      const foreign = await createVariation(api, ws.token, ws.workspaceId, agentId);
      await assert.rejects(api.services.variations.select(workspace, weighted.metadata.id, foreign.metadata.id), { code: 'NOT_FOUND', message: `agent variation ${foreign.metadata.id} not found` });
      await assert.rejects(api.services.variations.select(workspace, (await createAgent(api, ws.token, ws.workspaceId)).metadata.id), { code: 'FAILED_PRECONDITION', message: 'the agent has no variations' });
    });
  });

  const routes: GuardedRoute[] = [];
  for (const prefix of ['/v1/workspaces/{ws}/agents', '/v1/agents']) {
    const base = (w: string, ids: Record<string, string>) => `${prefix.replace('{ws}', w)}/${ids.agentId}/variations`;
    routes.push(
      { method: 'GET', path: base, scope: 'agents:read', idKeys: ['agentId'] },
      { method: 'POST', path: base, scope: 'agents:manage', body: { metadata: { name: 'x' } }, idKeys: ['agentId'] },
      { method: 'GET', path: (w, ids) => `${base(w, ids)}/${ids.id}`, scope: 'agents:read', idKeys: ['agentId', 'id'] },
      { method: 'PATCH', path: (w, ids) => `${base(w, ids)}/${ids.id}`, scope: 'agents:manage', body: { spec: { prompt: 'x' } }, idKeys: ['agentId', 'id'] },
      { method: 'DELETE', path: (w, ids) => `${base(w, ids)}/${ids.id}`, scope: 'agents:manage', idKeys: ['agentId', 'id'] },
    );
  }
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const mine = await createAgent(api, fixture.token, fixture.workspaceId);
    const theirs = await createAgent(api, other.token, other.workspaceId);
    const myVariation = await createVariation(api, fixture.token, fixture.workspaceId, mine.metadata.id);
    const theirVariation = await createVariation(api, other.token, other.workspaceId, theirs.metadata.id);
    return {
      ws: fixture,
      ids: { agentId: mine.metadata.id, id: myVariation.metadata.id },
      foreignIds: { agentId: theirs.metadata.id, id: theirVariation.metadata.id },
    };
  }, routes);

  it('returns NOT_FOUND for an unknown variation', async () => {
    const response = await api.request('GET', `/v1/agents/${agentId}/variations/${MISSING_VARIATION}`, { token: ws.token });
    assertError(response, 404, 5, `agent variation ${MISSING_VARIATION} not found`);
  });
});
