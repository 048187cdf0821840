// Regression (found by npm run fuzz): a memory layer added without a position
// goes above the top of the stack; when the top already holds the largest
// position a Postgres integer can store, the answer was 500 INTERNAL ("value
// 2147483648 is out of range for type integer").
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createVariation, created, workspaceFixture } from '../support/agents-world';

describe('POST .../memory_layer_assignments without a position', () => {
  let api: TestApi;
  before(async () => (api = await startTestApi()));
  after(async () => api.close());

  describe('when the top of the stack holds the largest position', () => {
    it('answers FAILED_PRECONDITION asking for a position, and accepts one given', async () => {
      const ws = await workspaceFixture(api);
      const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      const variationId = (await createVariation(api, ws.token, ws.workspaceId, agentId)).metadata.id;
      const layer = async (name: string) => (await created(api, ws.token, '/v1/memory_layers', { metadata: { name }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id as string;
      const path = `/v1/agent_variations/${variationId}/memory_layer_assignments`;
      await created(api, ws.token, path, { memoryLayerId: await layer('top'), position: 2_147_483_647 });
      const next = await layer('next');
      const response = await api.request('POST', path, { token: ws.token, body: { memoryLayerId: next } });
      assertError(response, 400, 9, 'the top of the stack holds the largest position (2147483647): give position');
      const placed = await created(api, ws.token, path, { memoryLayerId: next, position: 5 });
      assert.equal(placed.position, 5);
    });
  });
});
