import assert from 'node:assert/strict';
import { selectVariation, type RandomSource } from '../../src/agents/variation-selection';
import { VariationSelectionMode } from '../../src/agents/records';

/** mulberry32: a small seeded generator, so the statistics below are reproducible. */
function seeded(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DRAWS = 10_000;

function counts(variations: Array<{ id: string; weight: number }>, mode: VariationSelectionMode, seed: number): Map<string, number> {
  const random = seeded(seed);
  const tally = new Map(variations.map((variation) => [variation.id, 0]));
  for (let draw = 0; draw < DRAWS; draw++) {
    const chosen = selectVariation(variations, { mode, random });
    tally.set(chosen.id, tally.get(chosen.id)! + 1);
  }
  return tally;
}

/** Pearson's chi-square statistic of observed counts against expected probabilities. */
function chiSquare(observed: number[], probabilities: number[]): number {
  return observed.reduce((sum, count, index) => {
    const expected = DRAWS * probabilities[index];
    return sum + (count - expected) ** 2 / expected;
  }, 0);
}

// Upper critical values of chi-square at p = 0.001, by degrees of freedom.
const CRITICAL_0_001: Record<number, number> = { 1: 10.828, 2: 13.816, 3: 16.266 };

describe('selectVariation', () => {
  const variations = [
    { id: 'a', weight: 1 },
    { id: 'b', weight: 2 },
    { id: 'c', weight: 7 },
    { id: 'zero', weight: 0 },
  ];

  describe('with an explicit id', () => {
    it('returns that variation, weight 0 included', () => {
      const chosen = selectVariation(variations, { mode: VariationSelectionMode.WEIGHTED, explicitId: 'zero', random: () => 0 });
      assert.equal(chosen.id, 'zero');
    });

    it('throws NotFoundError for an id that is not a variation of the agent', () => {
      assert.throws(() => selectVariation(variations, { mode: VariationSelectionMode.RANDOM, explicitId: 'x', random: Math.random }), {
        name: 'NotFoundError', code: 'NOT_FOUND', message: 'agent variation x not found',
      });
    });
  });

  describe('WEIGHTED', () => {
    it('selects by weight / sum of weights (chi-square within bounds over 10,000 draws)', () => {
      const tally = counts(variations, VariationSelectionMode.WEIGHTED, 42);
      assert.equal(tally.get('zero'), 0, 'weight 0 is never auto-selected');
      const statistic = chiSquare(['a', 'b', 'c'].map((id) => tally.get(id)!), [0.1, 0.2, 0.7]);
      assert.ok(statistic < CRITICAL_0_001[2], `chi-square ${statistic} exceeds ${CRITICAL_0_001[2]}`);
    });

    it('would fail the same test against wrong probabilities (the test can fail)', () => {
      const tally = counts(variations, VariationSelectionMode.WEIGHTED, 42);
      const statistic = chiSquare(['a', 'b', 'c'].map((id) => tally.get(id)!), [1 / 3, 1 / 3, 1 / 3]);
      assert.ok(statistic > CRITICAL_0_001[2]);
    });

    it('throws FailedPreconditionError when every weight is 0', () => {
      assert.throws(() => selectVariation([{ id: 'a', weight: 0 }], { mode: VariationSelectionMode.WEIGHTED, random: Math.random }), {
        name: 'FailedPreconditionError', message: 'every variation of the agent has weight 0, which is never selected automatically; choose one by variationId',
      });
    });

    it('maps the extremes of the random source to the first and last positive weights', () => {
      assert.equal(selectVariation(variations, { mode: VariationSelectionMode.WEIGHTED, random: () => 0 }).id, 'a');
      assert.equal(selectVariation(variations, { mode: VariationSelectionMode.WEIGHTED, random: () => 0.9999999999 }).id, 'c');
    });
  });

  for (const mode of [VariationSelectionMode.RANDOM, VariationSelectionMode.UNSPECIFIED]) {
    describe(mode, () => {
      it('selects uniformly among positive weights, ignoring their size (chi-square within bounds over 10,000 draws)', () => {
        const tally = counts(variations, mode, 7);
        const positive = variations.filter((variation) => variation.weight > 0);
        const statistic = chiSquare(positive.map((variation) => tally.get(variation.id)!), [1 / 3, 1 / 3, 1 / 3]);
        assert.ok(statistic < CRITICAL_0_001[2], `chi-square ${statistic} exceeds ${CRITICAL_0_001[2]}`);
      });

      it('never auto-selects a weight 0 variation (spec 2.14)', () => {
        assert.equal(counts(variations, mode, 11).get('zero'), 0);
        assert.throws(() => selectVariation([{ id: 'zero', weight: 0 }], { mode, random: Math.random }), {
          name: 'FailedPreconditionError', message: 'every variation of the agent has weight 0, which is never selected automatically; choose one by variationId',
        });
      });
    });
  }

  it('throws FailedPreconditionError for an agent without variations', () => {
    assert.throws(() => selectVariation([], { mode: VariationSelectionMode.RANDOM, random: Math.random }), {
      name: 'FailedPreconditionError', message: 'the agent has no variations',
    });
  });
});
