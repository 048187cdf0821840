import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { assertError, createAgent, createVariation, workspaceFixture } from '../support/agents-world';
import type { WorkspaceFixture } from '../support/workspace-keys';

describe('feedback', () => {
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
  const workspaceRef = (id = ws.workspaceId) => ({ id, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });
  const feedbackPath = () => `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/feedback`;

  describe('recordFeedback', () => {
    it('stores a rating with its objective and comment', async () => {
      const feedback = await api.services.feedback.recordFeedback(workspaceRef(), {
        agentId, variationId, objectiveId: 'obj_01ARZ3NDEKTSV4RRFFQ69G5FAV', rating: 'FEEDBACK_RATING_POSITIVE', comment: 'great',
      }, { profileId: ws.account.profileId });
      assert.match(feedback.metadata.id, /^feedback_[0-9A-Z]{26}$/);
      assert.deepEqual(feedback.spec, { agentId, variationId, objectiveId: 'obj_01ARZ3NDEKTSV4RRFFQ69G5FAV', rating: 'FEEDBACK_RATING_POSITIVE', comment: 'great' });
      assert.equal(feedback.metadata.profileId, ws.account.profileId);
      assert.equal(feedback.metadata.workspaceId, ws.workspaceId);
    });

    it('throws NotFoundError for a variation of another agent', async () => {
      const other = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name: 'other' } });
      const otherVariation = await createVariation(api, ws.token, ws.workspaceId, other.metadata.id);
      await assert.rejects(api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId: otherVariation.metadata.id, rating: 'FEEDBACK_RATING_NEGATIVE' }), {
        name: 'NotFoundError', message: `agent variation ${otherVariation.metadata.id} not found`,
      });
    });

    it("throws NotFoundError for another workspace's agent", async () => {
      const other = await ws.otherWorkspace();
      await assert.rejects(api.services.feedback.recordFeedback(workspaceRef(other.workspaceId), { agentId, variationId, rating: 'FEEDBACK_RATING_POSITIVE' }), {
        name: 'NotFoundError', message: `agent ${agentId} not found`,
      });
    });

    it('moves the variation score as the Beta posterior mean', async () => {
      const record = (rating: 'FEEDBACK_RATING_POSITIVE' | 'FEEDBACK_RATING_NEGATIVE') => api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId, rating });
      const score = async () => (await api.services.variations.get(workspaceRef(), agentId, variationId)).info!;
      assert.deepEqual([(await score()).score, (await score()).feedbackCount], [0.5, 0]);
      await record('FEEDBACK_RATING_NEGATIVE');
      assert.equal((await score()).score, 1 / 3);
      await record('FEEDBACK_RATING_POSITIVE');
      await record('FEEDBACK_RATING_POSITIVE');
      assert.deepEqual([(await score()).score, (await score()).feedbackCount], [3 / 5, 3]);
    });
  });

  describe('GET /v1/workspaces/{workspaceId}/agents/{agentId}/feedback', () => {
    it('lists feedback with paging and filters', async () => {
      const second = (await createVariation(api, ws.token, ws.workspaceId, agentId, { metadata: { name: 'v2' } })).metadata.id;
      const first = await api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId, rating: 'FEEDBACK_RATING_POSITIVE' });
      await api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId: second, rating: 'FEEDBACK_RATING_NEGATIVE', comment: 'meh' });
      const page = await api.request('GET', `${feedbackPath()}?limit=1`, { token: ws.token });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.deepEqual(page.body.items, [first]);
      const next = await api.request('GET', `${feedbackPath()}?limit=1&cursor=${page.body.pagination.nextCursor}`, { token: ws.token });
      assert.equal(next.body.items[0].spec.comment, 'meh');
      const byVariation = await api.request('GET', `${feedbackPath()}?variationId=${second}`, { token: ws.token });
      assert.deepEqual(byVariation.body.items.map((item: { spec: { variationId: string } }) => item.spec.variationId), [second]);
      const byRating = await api.request('GET', `${feedbackPath()}?rating=FEEDBACK_RATING_POSITIVE&sortOrder=desc`, { token: ws.token });
      assert.deepEqual(byRating.body.items, [first]);
    });

    it('applies prefix to the id and answers no item for a labels selector (feedback carries no labels)', async () => {
      const first = await api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId, rating: 'FEEDBACK_RATING_POSITIVE' });
      await api.services.feedback.recordFeedback(workspaceRef(), { agentId, variationId, rating: 'FEEDBACK_RATING_NEGATIVE' });
      const byPrefix = await api.request('GET', `${feedbackPath()}?prefix=${first.metadata.id}`, { token: ws.token });
      assert.equal(byPrefix.status, 200, JSON.stringify(byPrefix.body));
      assert.deepEqual(byPrefix.body.items, [first]);
      const none = await api.request('GET', `${feedbackPath()}?prefix=feedback_Z`, { token: ws.token });
      assert.deepEqual(none.body.items, []);
      const byLabels = await api.request('GET', `${feedbackPath()}?labels=team=support`, { token: ws.token });
      assert.equal(byLabels.status, 200, JSON.stringify(byLabels.body));
      assert.deepEqual(byLabels.body, { items: [], pagination: { nextCursor: '' } });
      assertError(await api.request('GET', `${feedbackPath()}?labels=nopair`, { token: ws.token }), 400, 3, 'labels: "nopair" is not a key=value pair');
    });

    it('returns INVALID_ARGUMENT for a bad rating filter or variation id', async () => {
      assertError(await api.request('GET', `${feedbackPath()}?rating=GOOD`, { token: ws.token }), 400, 3, /^rating: /);
      assertError(await api.request('GET', `${feedbackPath()}?variationId=x`, { token: ws.token }), 400, 3, /^variationId: has an invalid format/);
    });

    it("returns NOT_FOUND for another workspace's agent and PERMISSION_DENIED without agents:read", async () => {
      const other = await ws.otherWorkspace();
      const foreign = await createAgent(api, other.token, other.workspaceId);
      assertError(await api.request('GET', `/v1/workspaces/${ws.workspaceId}/agents/${foreign.metadata.id}/feedback`, { token: ws.token }), 404, 5, `agent ${foreign.metadata.id} not found`);
      const token = await ws.keyWith(['tools:manage']);
      assertError(await api.request('GET', feedbackPath(), { token }), 403, 7, 'this credential lacks the agents:read scope');
      assertError(await api.request('GET', feedbackPath()), 401, 16, 'missing bearer token (Authorization: Bearer <token>)');
    });
  });
});
