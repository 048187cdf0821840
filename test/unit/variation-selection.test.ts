import assert from 'node:assert/strict';
import { needsFeedbackTallies, selectVariation } from '../../src/agents/variation-selection';
import { VariationSelectionMode, type FeedbackTally } from '../../src/agents/records';
import { seeded } from '../support/seeded-random';

const DRAWS = 10_000;

function counts(variations: Array<{ id: string; weight: number }>, mode: VariationSelectionMode, seed: number, tallies?: Map<string, FeedbackTally>): Map<string, number> {
  const random = seeded(seed);
  const tally = new Map(variations.map((variation) => [variation.id, 0]));
  for (let draw = 0; draw < DRAWS; draw++) {
    const chosen = selectVariation(variations, { mode, random, tallies });
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

/** ln Γ(n) for a positive integer n. */
function logGammaInteger(n: number): number {
  let sum = 0;
  for (let k = 2; k < n; k++) sum += Math.log(k);
  return sum;
}

const logBeta = (a: number, b: number) => logGammaInteger(a) + logGammaInteger(b) - logGammaInteger(a + b);

/** P(X > Y) for X ~ Beta(x[0], x[1]), Y ~ Beta(y[0], y[1]), integer shapes (closed form, E. Miller, "Formulas for Bayesian A/B testing"). */
function probabilityBetaExceeds(x: [number, number], y: [number, number]): number {
  let total = 0;
  for (let i = 0; i < x[0]; i++) total += Math.exp(logBeta(y[0] + i, y[1] + x[1]) - Math.log(x[1] + i) - logBeta(1 + i, x[1]) - logBeta(y[0], y[1]));
  return total;
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

  describe('THOMPSON_SAMPLING', () => {
    const mode = VariationSelectionMode.THOMPSON_SAMPLING;
    // Beta(4, 2) against Beta(2, 3).
    const tallies = new Map([['a', { positive: 3, negative: 1 }], ['b', { positive: 1, negative: 2 }]]);
    const pair = [{ id: 'a', weight: 1 }, { id: 'b', weight: 5 }, { id: 'zero', weight: 0 }];

    it('selects each variation with the probability that its posterior draw is the highest (chi-square within bounds over 10,000 draws)', () => {
      const bWins = probabilityBetaExceeds([2, 3], [4, 2]);
      assert.ok(bWins > 0.1 && bWins < 0.3, `P(b > a) = ${bWins}`);
      const tally = counts(pair, mode, 5, tallies);
      assert.equal(tally.get('zero'), 0, 'weight 0 is never auto-selected, whatever its feedback');
      const statistic = chiSquare([tally.get('a')!, tally.get('b')!], [1 - bWins, bWins]);
      assert.ok(statistic < CRITICAL_0_001[1], `chi-square ${statistic} exceeds ${CRITICAL_0_001[1]}`);
    });

    it('would fail the same test against the posterior means\' odds (the test can fail)', () => {
      const tally = counts(pair, mode, 5, tallies);
      const meanA = 4 / 6;
      const meanB = 2 / 5;
      const statistic = chiSquare([tally.get('a')!, tally.get('b')!], [meanA / (meanA + meanB), meanB / (meanA + meanB)]);
      assert.ok(statistic > CRITICAL_0_001[1]);
    });

    it('gives variations without feedback (or without an entry) Beta(1, 1) each: uniform, the weight size ignored', () => {
      const tally = counts([...variations], mode, 13, new Map([['a', { positive: 0, negative: 0 }]]));
      assert.equal(tally.get('zero'), 0);
      const statistic = chiSquare(['a', 'b', 'c'].map((id) => tally.get(id)!), [1 / 3, 1 / 3, 1 / 3]);
      assert.ok(statistic < CRITICAL_0_001[2], `chi-square ${statistic} exceeds ${CRITICAL_0_001[2]}`);
    });

    it('reads tallies only without an explicit id, which wins (weight 0 included)', () => {
      assert.equal(needsFeedbackTallies({ mode }), true);
      assert.equal(needsFeedbackTallies({ mode, explicitId: 'zero' }), false);
      assert.equal(needsFeedbackTallies({ mode: VariationSelectionMode.WEIGHTED }), false);
      assert.equal(selectVariation(pair, { mode, explicitId: 'zero', random: () => 0.5 }).id, 'zero');
    });

    it('throws FailedPreconditionError when every weight is 0', () => {
      assert.throws(() => selectVariation([{ id: 'zero', weight: 0 }], { mode, random: Math.random, tallies }), {
        name: 'FailedPreconditionError', message: 'every variation of the agent has weight 0, which is never selected automatically; choose one by variationId',
      });
    });
  });

  it('throws FailedPreconditionError for an agent without variations', () => {
    assert.throws(() => selectVariation([], { mode: VariationSelectionMode.RANDOM, random: Math.random }), {
      name: 'FailedPreconditionError', message: 'the agent has no variations',
    });
  });
});
