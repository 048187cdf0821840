// Feedback on variations (api-decisions.md "Objectives"): rows recorded against
// a variation (the objective feedback endpoint calls recordFeedback), listed per
// agent; the counts feed each variation's Beta posterior score, and, from
// memory (FeedbackTallyCache), THOMPSON_SAMPLING selection.
import type { WorkspaceRef } from '../auth/workspace-access';
import { NotFoundError } from '../errors';
import { newId } from '../ids';
import type { AgentsStore } from '../ports/agents-store';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import type { Feedback } from '../schemas/agents.schema';
import { FeedbackTallyCache, type FeedbackTallySource, type VariationTallies } from './feedback-tallies';
import { toFeedback } from './mappers';
import type { FeedbackRating, FeedbackRecord } from './records';
import { inWorkspace, type WriteOptions } from './write-options';

export interface FeedbackInput {
  agentId: string;
  variationId: string;
  objectiveId?: string;
  rating: FeedbackRating;
  comment?: string;
}

export interface FeedbackListFilter {
  variationId?: string;
  rating?: FeedbackRating;
  /** Id prefix (feedback has no name). */
  prefix?: string;
  labels?: Record<string, string>;
}

export interface RecordFeedbackOptions extends Pick<WriteOptions, 'store'> {
  /** The profile giving the feedback. */
  profileId?: string;
}

export class FeedbackService implements FeedbackTallySource {
  constructor(
    private readonly store: AgentsStore,
    private readonly tallies: FeedbackTallyCache = new FeedbackTallyCache((agentId) => store.feedback.talliesOfAgent(agentId)),
  ) {}

  /** The agent's feedback counts by variation, from memory (see FeedbackTallyCache for how fresh). */
  talliesOf(agentId: string): Promise<VariationTallies> {
    return this.tallies.talliesOf(agentId);
  }

  /**
   * Stores one rating of a variation.
   * @throws NotFoundError when the agent or variation is not in the workspace, or the variation is not the agent's
   */
  async recordFeedback(workspace: WorkspaceRef, input: FeedbackInput, options: RecordFeedbackOptions = {}): Promise<Feedback> {
    const store = options.store ?? this.store;
    const agent = inWorkspace(await store.agents.findById(input.agentId), workspace, 'agent', input.agentId);
    const variation = inWorkspace(await store.variations.findById(input.variationId), workspace, 'agent variation', input.variationId);
    if (variation.agentId !== agent.id) throw NotFoundError.resource('agent variation', input.variationId);
    const row: FeedbackRecord = {
      id: newId('feedback'),
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      agentId: agent.id,
      variationId: variation.id,
      objectiveId: input.objectiveId ?? null,
      rating: input.rating,
      comment: input.comment ?? null,
      profileId: options.profileId ?? null,
      createdAt: new Date(),
    };
    // In the caller's transaction the row commits later: other selections see it within the cache's TTL.
    const record = options.store
      ? await store.feedback.insert(row)
      : await this.tallies.record(agent.id, variation.id, input.rating, () => store.feedback.insert(row));
    return toFeedback(record);
  }

  /**
   * The agent's feedback in creation order, optionally of one variation or
   * rating, or with an id starting with `prefix`. Feedback carries no labels,
   * so a non-empty `labels` selector matches none.
   */
  async list(workspace: WorkspaceRef, agentId: string, page: PageRequest, filter: FeedbackListFilter): Promise<Page<Feedback>> {
    const agent = inWorkspace(await this.store.agents.findById(agentId), workspace, 'agent', agentId);
    if (filter.labels && Object.keys(filter.labels).length) return toPage([], page, toFeedback);
    return toPage(await this.store.feedback.list(agent.id, page, { variationId: filter.variationId, rating: filter.rating, prefix: filter.prefix }), page, toFeedback);
  }
}
