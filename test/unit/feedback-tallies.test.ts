// The in-memory feedback counts THOMPSON_SAMPLING selects with: one load per
// agent per TTL, this node's feedback counted at once and exactly once, other
// nodes' feedback seen within the TTL.
import assert from 'node:assert/strict';
import { FEEDBACK_TALLY_TTL_MS, FeedbackTallyCache } from '../../src/agents/feedback-tallies';
import { FeedbackRating, type FeedbackTally } from '../../src/agents/records';

const POSITIVE = FeedbackRating.POSITIVE;
const NEGATIVE = FeedbackRating.NEGATIVE;

/** A feedback table shared by "nodes" (caches), with a clock and a count of its loads. */
class FakeFeedbackTable {
  readonly rows: Array<{ agentId: string; variationId: string; rating: FeedbackRating }> = [];
  loads = 0;
  /** Set to hold loads until released. */
  gate: Promise<void> | null = null;

  async load(agentId: string): Promise<Map<string, FeedbackTally>> {
    this.loads += 1;
    // The snapshot is taken when the query runs, before any gate.
    const snapshot = this.tallies(agentId);
    if (this.gate) await this.gate;
    return snapshot;
  }

  tallies(agentId: string): Map<string, FeedbackTally> {
    const tallies = new Map<string, FeedbackTally>();
    for (const row of this.rows.filter((candidate) => candidate.agentId === agentId)) {
      const tally = tallies.get(row.variationId) ?? { positive: 0, negative: 0 };
      tallies.set(row.variationId, row.rating === POSITIVE ? { ...tally, positive: tally.positive + 1 } : { ...tally, negative: tally.negative + 1 });
    }
    return tallies;
  }

  /** Records through `cache` as FeedbackService does: the insert inside `record`. */
  record(cache: FeedbackTallyCache, agentId: string, variationId: string, rating: FeedbackRating): Promise<void> {
    return cache.record(agentId, variationId, rating, async () => void this.rows.push({ agentId, variationId, rating }));
  }
}

describe('FeedbackTallyCache', () => {
  let now: number;
  let table: FakeFeedbackTable;
  const node = (options: { maxAgents?: number } = {}) => new FeedbackTallyCache((agentId) => table.load(agentId), { now: () => now, ...options });

  beforeEach(() => {
    now = 1_000_000;
    table = new FakeFeedbackTable();
  });

  it('loads an agent once, and concurrent first callers share that load', async () => {
    table.rows.push({ agentId: 'agent', variationId: 'a', rating: POSITIVE }, { agentId: 'agent', variationId: 'a', rating: NEGATIVE });
    const cache = node();
    const [first, second] = await Promise.all([cache.talliesOf('agent'), cache.talliesOf('agent')]);
    assert.deepEqual(first.get('a'), { positive: 1, negative: 1 });
    assert.equal(second, first);
    for (let i = 0; i < 100; i++) await cache.talliesOf('agent');
    assert.equal(table.loads, 1);
  });

  it("counts this node's feedback at once, without loading again", async () => {
    const cache = node();
    await cache.talliesOf('agent');
    await table.record(cache, 'agent', 'a', POSITIVE);
    await table.record(cache, 'agent', 'a', POSITIVE);
    await table.record(cache, 'agent', 'b', NEGATIVE);
    const tallies = await cache.talliesOf('agent');
    assert.deepEqual([tallies.get('a'), tallies.get('b')], [{ positive: 2, negative: 0 }, { positive: 0, negative: 1 }]);
    assert.equal(table.loads, 1);
  });

  it("sees another node's feedback once the TTL has passed since its load began, not before", async () => {
    const here = node();
    const there = node();
    await here.talliesOf('agent');
    await table.record(there, 'agent', 'a', POSITIVE);
    now += FEEDBACK_TALLY_TTL_MS - 1;
    assert.equal((await here.talliesOf('agent')).get('a'), undefined, 'still the loaded counts');
    now += 1;
    assert.deepEqual((await here.talliesOf('agent')).get('a'), { positive: 1, negative: 0 });
    assert.equal(table.loads, 2);
  });

  it('counts feedback recorded while its agent loads exactly once (the loading entry is dropped and loaded again)', async () => {
    const cache = node();
    let release!: () => void;
    table.gate = new Promise((resolve) => (release = resolve));
    const loading = cache.talliesOf('agent');
    // The rating commits after the load's snapshot: the snapshot lacks it.
    await table.record(cache, 'agent', 'a', POSITIVE);
    table.gate = null;
    release();
    assert.equal((await loading).get('a'), undefined);
    assert.deepEqual((await cache.talliesOf('agent')).get('a'), { positive: 1, negative: 0 });
    assert.equal(table.loads, 2);
  });

  it('counts feedback recorded before the first load once (nothing kept to move; the load reads it)', async () => {
    const cache = node();
    await table.record(cache, 'agent', 'a', NEGATIVE);
    assert.deepEqual((await cache.talliesOf('agent')).get('a'), { positive: 0, negative: 1 });
  });

  it('counts nothing when the insert fails, and passes its error on', async () => {
    const cache = node();
    await cache.talliesOf('agent');
    await assert.rejects(cache.record('agent', 'a', POSITIVE, async () => { throw new Error('insert failed'); }), { message: 'insert failed' });
    assert.equal((await cache.talliesOf('agent')).get('a'), undefined);
  });

  it('keeps no failed load: the next call loads again', async () => {
    let fail = true;
    const cache = new FeedbackTallyCache(async (agentId) => {
      if (fail) throw new Error('database unreachable');
      return table.load(agentId);
    }, { now: () => now });
    await assert.rejects(cache.talliesOf('agent'), { message: 'database unreachable' });
    fail = false;
    assert.equal((await cache.talliesOf('agent')).size, 0);
  });

  it('keeps at most maxAgents agents, the least recently loaded leaving first', async () => {
    const cache = node({ maxAgents: 2 });
    await cache.talliesOf('one');
    await cache.talliesOf('two');
    await cache.talliesOf('three');
    await cache.talliesOf('three');
    await cache.talliesOf('two');
    assert.equal(table.loads, 3);
    await cache.talliesOf('one');
    assert.equal(table.loads, 4);
  });
});
