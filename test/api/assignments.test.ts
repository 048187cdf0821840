import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createTool, createToolSet, createVariation, created, describeGuards, workspaceFixture, type GuardedRoute } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { MemoryLayerType } from '../../src/memory/records';

const MISSING_TOOL = 'tool_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('variation assignments', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let agentId: string;
  let variationId: string;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    variationId = (await createVariation(api, ws.token, ws.workspaceId, agentId)).metadata.id;
  });

  const styles = [
    { name: 'workspace-addressed', base: () => `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variationId}` },
    { name: 'flat', base: () => `/v1/agent_variations/${variationId}` },
  ];
  const workspaceRef = () => ({ id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });
  const variationOf = async (id: string) => (await api.request('GET', `/v1/agents/${agentId}/variations/${id}`, { token: ws.token })).body;

  for (const style of styles) {
    describe(`POST ${style.name} .../assignments`, () => {
      const assign = (body: Record<string, unknown>, target = variationId) =>
        api.request('POST', `${style.base().replace(variationId, target)}/assignments`, { token: ws.token, body });

      it('assigns a tool with requiresApproval, a tool set and a sub-agent', async () => {
        const tool = await createTool(api, ws.token, ws.workspaceId);
        const toolSet = await createToolSet(api, ws.token, ws.workspaceId);
        const helper = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'helper' } });
        const toolAssignment = await assign({ toolId: tool.metadata.id, requiresApproval: false });
        assert.equal(toolAssignment.status, 200, JSON.stringify(toolAssignment.body));
        assert.match(toolAssignment.body.id, /^vasgn_[0-9A-Z]{26}$/);
        assert.deepEqual(toolAssignment.body, { id: toolAssignment.body.id, tool: { id: tool.metadata.id, name: 'lookup' }, requiresApproval: false });
        const setAssignment = await assign({ toolSetId: toolSet.metadata.id });
        assert.deepEqual(setAssignment.body, { id: setAssignment.body.id, toolSet: { id: toolSet.metadata.id, name: 'crm' } });
        const agentAssignment = await assign({ agentId: helper.metadata.id });
        assert.deepEqual(agentAssignment.body, { id: agentAssignment.body.id, agent: { id: helper.metadata.id, name: 'helper' } });
        const info = (await variationOf(variationId)).info;
        assert.deepEqual([info.toolCount, info.toolSetCount, info.subAgentCount], [1, 1, 1]);
      });

      it('returns INVALID_ARGUMENT unless exactly one target is set', async () => {
        const tool = await createTool(api, ws.token, ws.workspaceId);
        for (const body of [{}, { toolId: tool.metadata.id, agentId }, { requiresApproval: true }]) {
          assertError(await assign(body), 400, 3, 'agentId: exactly one of agentId, toolId and toolSetId must be set');
        }
      });

      it('returns FAILED_PRECONDITION when the agent would be its own sub-agent', async () => {
        assertError(await assign({ agentId }), 400, 9, `agent ${agentId} cannot be its own sub-agent`);
      });

      it('returns FAILED_PRECONDITION for a cycle through other agents', async () => {
        const b = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'b' } });
        const c = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'c' } });
        const bVariation = await createVariation(api, ws.token, ws.workspaceId, b.metadata.id);
        const cVariation = await createVariation(api, ws.token, ws.workspaceId, c.metadata.id);
        const flatAssign = (variation: string, body: Record<string, unknown>) => api.request('POST', `/v1/agent_variations/${variation}/assignments`, { token: ws.token, body });
        assert.equal((await assign({ agentId: b.metadata.id })).status, 200); // A -> B
        assert.equal((await flatAssign(bVariation.metadata.id, { agentId: c.metadata.id })).status, 200); // B -> C
        const cycle = await flatAssign(cVariation.metadata.id, { agentId }); // C -> A closes A -> B -> C -> A
        assertError(cycle, 400, 9, `assigning agent ${agentId} as a sub-agent of agent ${c.metadata.id} would create a cycle`);
        const direct = await flatAssign(bVariation.metadata.id, { agentId }); // B -> A closes A -> B -> A
        assertError(direct, 400, 9, `assigning agent ${agentId} as a sub-agent of agent ${b.metadata.id} would create a cycle`);
      });

      it('allows the same sub-agent under two agents (a diamond is no cycle)', async () => {
        const b = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'b' } });
        const shared = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'shared' } });
        const bVariation = await createVariation(api, ws.token, ws.workspaceId, b.metadata.id);
        assert.equal((await assign({ agentId: b.metadata.id })).status, 200);
        assert.equal((await assign({ agentId: shared.metadata.id })).status, 200);
        const response = await api.request('POST', `/v1/agent_variations/${bVariation.metadata.id}/assignments`, { token: ws.token, body: { agentId: shared.metadata.id } });
        assert.equal(response.status, 200, JSON.stringify(response.body));
      });

      it('returns ALREADY_EXISTS for a target assigned twice', async () => {
        const tool = await createTool(api, ws.token, ws.workspaceId);
        assert.equal((await assign({ toolId: tool.metadata.id })).status, 200);
        assertError(await assign({ toolId: tool.metadata.id }), 409, 6, 'the tool is already assigned to this variation');
      });

      it("returns NOT_FOUND for a target in another workspace or unknown", async () => {
        const other = await ws.otherWorkspace();
        const foreignTool = await createTool(api, other.token, other.workspaceId);
        const foreignSet = await createToolSet(api, other.token, other.workspaceId);
        const foreignAgent = await createAgent(api, other.token, other.workspaceId);
        assertError(await assign({ toolId: foreignTool.metadata.id }), 404, 5, `tool ${foreignTool.metadata.id} not found`);
        assertError(await assign({ toolSetId: foreignSet.metadata.id }), 404, 5, `tool set ${foreignSet.metadata.id} not found`);
        assertError(await assign({ agentId: foreignAgent.metadata.id }), 404, 5, `agent ${foreignAgent.metadata.id} not found`);
        assertError(await assign({ toolId: MISSING_TOOL }), 404, 5, `tool ${MISSING_TOOL} not found`);
      });
    });

    describe(`DELETE ${style.name} .../assignments/{id}`, () => {
      it('removes the assignment', async () => {
        const tool = await createTool(api, ws.token, ws.workspaceId);
        const assignment = await created(api, ws.token, `${style.base()}/assignments`, { toolId: tool.metadata.id });
        const response = await api.request('DELETE', `${style.base()}/assignments/${assignment.id}`, { token: ws.token });
        assert.deepEqual([response.status, response.body], [200, {}]);
        assert.equal((await variationOf(variationId)).info.toolCount, 0);
        const again = await api.request('DELETE', `${style.base()}/assignments/${assignment.id}`, { token: ws.token });
        assertError(again, 404, 5, `variation assignment ${assignment.id} not found`);
      });

      it('returns NOT_FOUND for an assignment of another variation', async () => {
        const tool = await createTool(api, ws.token, ws.workspaceId);
        const otherVariation = await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: 'v2' } });
        const assignment = await created(api, ws.token, `/v1/agent_variations/${otherVariation.metadata.id}/assignments`, { toolId: tool.metadata.id });
        const response = await api.request('DELETE', `${style.base()}/assignments/${assignment.id}`, { token: ws.token });
        assertError(response, 404, 5, `variation assignment ${assignment.id} not found`);
      });
    });

    describe(`${style.name} .../memory_layer_assignments`, () => {
      const layer = async (name: string, token = ws.token) =>
        (await created(api, token, '/v1/memory_layers', { metadata: { name }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id as string;

      it('stacks layers on top by default, accepts explicit positions and moves them', async () => {
        const [first, second, third] = [await layer('a'), await layer('b'), await layer('c')];
        const path = `${style.base()}/memory_layer_assignments`;
        const a = await created(api, ws.token, path, { memoryLayerId: first });
        const b = await created(api, ws.token, path, { memoryLayerId: second });
        assert.match(a.id, /^mlasgn_[0-9A-Z]{26}$/);
        assert.deepEqual([a.position, b.position], [0, 1]);
        assert.deepEqual(a.memoryLayer, { id: first, name: 'a' });
        const c = await created(api, ws.token, path, { memoryLayerId: third, position: 10 });
        assert.equal(c.position, 10);
        const moved = await api.request('PATCH', `${path}/${a.id}`, { token: ws.token, body: { position: 20 } });
        assert.equal(moved.status, 200, JSON.stringify(moved.body));
        assert.equal(moved.body.position, 20);
        const info = (await variationOf(variationId)).info;
        assert.deepEqual(info.memoryLayerAssignments.map((row: { memoryLayerId: string }) => row.memoryLayerId), [first, third, second]);
        const removed = await api.request('DELETE', `${path}/${b.id}`, { token: ws.token });
        assert.deepEqual([removed.status, removed.body], [200, {}]);
        assert.equal((await variationOf(variationId)).info.memoryLayerAssignments.length, 2);
      });

      it('returns ALREADY_EXISTS for a layer assigned twice or a taken position', async () => {
        const [first, second] = [await layer('a'), await layer('b')];
        const path = `${style.base()}/memory_layer_assignments`;
        await created(api, ws.token, path, { memoryLayerId: first, position: 3 });
        assertError(await api.request('POST', path, { token: ws.token, body: { memoryLayerId: first } }), 409, 6, 'the memory layer is already assigned to this variation');
        assertError(await api.request('POST', path, { token: ws.token, body: { memoryLayerId: second, position: 3 } }), 409, 6, 'another memory layer of this variation has that position');
      });

      it('refuses a system-managed layer with PERMISSION_DENIED, as a change to one is', async () => {
        const system = await api.services.memoryLayers.createSystemManaged(workspaceRef(), { name: 'episodic-1', type: MemoryLayerType.EPISODIC, expiresAt: new Date('2030-01-01T00:00:00.000Z') });
        const response = await api.request('POST', `${style.base()}/memory_layer_assignments`, { token: ws.token, body: { memoryLayerId: system.metadata.id } });
        assertError(response, 403, 7, `memory layer ${system.metadata.id} is system-managed and cannot be assigned to a variation`);
      });

      it("returns NOT_FOUND for another workspace's layer", async () => {
        const other = await ws.otherWorkspace();
        const foreign = await layer('x', other.token);
        const response = await api.request('POST', `${style.base()}/memory_layer_assignments`, { token: ws.token, body: { memoryLayerId: foreign } });
        assertError(response, 404, 5, `memory layer ${foreign} not found`);
      });

      it('returns INVALID_ARGUMENT for a negative position', async () => {
        const response = await api.request('POST', `${style.base()}/memory_layer_assignments`, { token: ws.token, body: { memoryLayerId: await layer('a'), position: -1 } });
        assertError(response, 400, 3, 'position: must be >= 0');
      });
    });
  }

  describe('countVariationAssignments', () => {
    it('counts the variations holding a memory layer, and a forced layer delete removes them', async () => {
      const layerId = (await created(api, ws.token, '/v1/memory_layers', { metadata: { name: 'a' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id;
      const second = await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: 'v2' } });
      await created(api, ws.token, `/v1/agent_variations/${variationId}/memory_layer_assignments`, { memoryLayerId: layerId });
      await created(api, ws.token, `/v1/agent_variations/${second.metadata.id}/memory_layer_assignments`, { memoryLayerId: layerId });
      assert.equal(await api.services.assignments.countVariationAssignments(layerId), 2);
      await api.services.memoryLayers.delete(workspaceRef(), layerId, true);
      assert.equal(await api.services.assignments.countVariationAssignments(layerId), 0);
      assert.deepEqual((await variationOf(variationId)).info.memoryLayerAssignments, []);
    });
  });

  const routes: GuardedRoute[] = [];
  const bases: Array<[(w: string, ids: Record<string, string>) => string, string[]]> = [
    [(w, ids) => `/v1/workspaces/${w}/agents/${ids.agentId}/variations/${ids.variationId}`, ['agentId', 'variationId']],
    [(_w, ids) => `/v1/agent_variations/${ids.variationId}`, ['agentVariationId']],
  ];
  for (const [base, keys] of bases) {
    const idKeys = keys.includes('agentVariationId') ? [] : keys;
    routes.push(
      { method: 'POST', path: (w, ids) => `${base(w, ids)}/assignments`, scope: 'agents:manage', body: { toolId: MISSING_TOOL }, idKeys },
      { method: 'DELETE', path: (w, ids) => `${base(w, ids)}/assignments/${ids.assignmentId}`, scope: 'agents:manage', idKeys: [...idKeys] },
      { method: 'POST', path: (w, ids) => `${base(w, ids)}/memory_layer_assignments`, scope: 'agents:manage', body: { memoryLayerId: 'memlayer_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, idKeys },
      { method: 'PATCH', path: (w, ids) => `${base(w, ids)}/memory_layer_assignments/${ids.layerAssignmentId}`, scope: 'agents:manage', body: { position: 1 }, idKeys },
      { method: 'DELETE', path: (w, ids) => `${base(w, ids)}/memory_layer_assignments/${ids.layerAssignmentId}`, scope: 'agents:manage', idKeys },
    );
  }
  describeGuards(() => api, async () => {
    const fixture = await workspaceFixture(api);
    const other = await fixture.otherWorkspace();
    const build = async (token: string, workspaceId: string) => {
      const agent = await createAgent(api, token, workspaceId);
      const variation = await createVariation(api, token, workspaceId, agent.metadata.id);
      const tool = await createTool(api, token, workspaceId);
      const assignment = await created(api, token, `/v1/agent_variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
      const layerId = (await created(api, token, '/v1/memory_layers', { metadata: { name: 'l' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id;
      const layerAssignment = await created(api, token, `/v1/agent_variations/${variation.metadata.id}/memory_layer_assignments`, { memoryLayerId: layerId });
      return { agentId: agent.metadata.id, variationId: variation.metadata.id, assignmentId: assignment.id, layerAssignmentId: layerAssignment.id };
    };
    return { ws: fixture, ids: await build(fixture.token, fixture.workspaceId), foreignIds: await build(other.token, other.workspaceId) };
  }, routes);

  describe('malformed ids on assignment paths', () => {
    it('returns INVALID_ARGUMENT naming the parameter', async () => {
      const checks: Array<[string, string, string]> = [
        ['POST', '/v1/agent_variations/nope/assignments', 'agentVariationId'],
        ['DELETE', `/v1/agent_variations/${variationId}/assignments/nope`, 'id'],
        ['DELETE', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variationId}/assignments/nope`, 'id'],
        ['PATCH', `/v1/agent_variations/${variationId}/memory_layer_assignments/nope`, 'id'],
        ['DELETE', `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variationId}/memory_layer_assignments/vasgn_01ARZ3NDEKTSV4RRFFQ69G5FAV`, 'id'],
      ];
      for (const [method, path, parameter] of checks) {
        const response = await api.request(method, path, { token: ws.token, body: method === 'PATCH' ? { position: 1 } : method === 'POST' ? { toolId: MISSING_TOOL } : undefined });
        assertError(response, 400, 3, new RegExp(`^${parameter}: has an invalid format`));
      }
    });
  });
});
