// Feedback counts per variation kept in memory for THOMPSON_SAMPLING selection
// (issue 27 item 1), so that creating an objective reads no feedback. An
// agent's counts are loaded once (one query) on first use, then:
// - feedback recorded through this node is counted at once;
// - feedback recorded through another node is seen when the entry expires,
//   `ttlMs` after its load started. The load's snapshot is taken after that
//   moment, so feedback committed anywhere is counted by every node's
//   selections at most `ttlMs` later (FEEDBACK_TALLY_TTL_MS: 5 s).
// A node's count is never doubled or lost: feedback recorded while an entry
// of its agent was loading (the load's snapshot may or may not hold it) drops
// that entry, and the next selection loads it again.
import { FeedbackRating, type FeedbackTally } from './records';

/** How long a node selects with loaded counts before loading them again (the staleness bound across nodes). */
export const FEEDBACK_TALLY_TTL_MS = 5000;

/** Counts by variation id; a variation without an entry has no feedback. */
export type VariationTallies = ReadonlyMap<string, FeedbackTally>;

/** What selection reads: an agent's counts (FeedbackService and this cache satisfy it). */
export interface FeedbackTallySource {
  talliesOf(agentId: string): Promise<VariationTallies>;
}

export interface FeedbackTallyCacheOptions {
  /** @default FEEDBACK_TALLY_TTL_MS */
  ttlMs?: number;
  /** Agents kept at most; the least recently loaded go first. @default 10000 */
  maxAgents?: number;
  now?: () => number;
}

interface Entry {
  tallies: Promise<Map<string, FeedbackTally>>;
  /** Set when the load finished: the counts may then be moved in place. */
  loaded: Map<string, FeedbackTally> | null;
  expiresAt: number;
}

export class FeedbackTallyCache implements FeedbackTallySource {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxAgents: number;
  private readonly now: () => number;

  /** @param load every variation's counts of the agent, read now (one query) */
  constructor(private readonly load: (agentId: string) => Promise<Map<string, FeedbackTally>>, options: FeedbackTallyCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? FEEDBACK_TALLY_TTL_MS;
    this.maxAgents = options.maxAgents ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** The agent's counts: from memory while fresh, else loaded (concurrent callers share one load). */
  async talliesOf(agentId: string): Promise<VariationTallies> {
    const entry = this.entries.get(agentId);
    if (entry && entry.expiresAt > this.now()) return entry.tallies;
    this.entries.delete(agentId);
    const fresh: Entry = { tallies: this.load(agentId), loaded: null, expiresAt: this.now() + this.ttlMs };
    this.entries.set(agentId, fresh);
    if (this.entries.size > this.maxAgents) this.entries.delete(this.entries.keys().next().value as string);
    fresh.tallies.then(
      (tallies) => void (fresh.loaded = tallies),
      // A failed load is not kept: the next call tries again.
      () => void (this.entries.get(agentId) === fresh && this.entries.delete(agentId)),
    );
    return fresh.tallies;
  }

  /**
   * Runs `insert` (which commits one rating of the variation) and counts it:
   * in place when the agent's counts were loaded before the insert began and
   * are still the ones kept; otherwise the kept entry, whose snapshot may or
   * may not hold the rating, is dropped. Nothing is counted when `insert` fails.
   */
  async record<T>(agentId: string, variationId: string, rating: FeedbackRating, insert: () => Promise<T>): Promise<T> {
    const before = this.entries.get(agentId);
    const loadedBefore = before?.loaded ?? null;
    const result = await insert();
    const current = this.entries.get(agentId);
    if (!current) return result;
    if (current === before && loadedBefore) {
      const tally = loadedBefore.get(variationId) ?? { positive: 0, negative: 0 };
      loadedBefore.set(variationId, rating === FeedbackRating.POSITIVE ? { ...tally, positive: tally.positive + 1 } : { ...tally, negative: tally.negative + 1 });
    } else {
      this.entries.delete(agentId);
    }
    return result;
  }
}
