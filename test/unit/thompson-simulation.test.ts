// THOMPSON_SAMPLING learns which variation users rate best: a simulation
// through the selection and feedback-recording functions (selectVariation
// with counts from FeedbackTallyCache, each round's rating recorded through
// it), against variations whose true positive rates are known. The better
// one's share of objectives rises, and cumulative regret (the expected
// positives lost to choosing worse) grows sublinearly.
import assert from 'node:assert/strict';
import { FeedbackTallyCache } from '../../src/agents/feedback-tallies';
import { FeedbackRating, VariationSelectionMode } from '../../src/agents/records';
import { selectVariation, type RandomSource } from '../../src/agents/variation-selection';
import { seeded } from '../support/seeded-random';

interface Arm {
  id: string;
  weight: number;
  /** The probability that a user rates an objective of this variation positive. */
  rate: number;
}

interface Simulation {
  /** Variation chosen at each round. */
  chosen: string[];
  /** Expected regret of each round: best rate minus the chosen variation's rate. */
  regret: number[];
  loads: number;
}

async function simulate(arms: Arm[], rounds: number, random: RandomSource): Promise<Simulation> {
  let loads = 0;
  const feedback = new FeedbackTallyCache(async () => {
    loads += 1;
    return new Map();
  }, { now: () => 0 });
  const best = Math.max(...arms.map((arm) => arm.rate));
  const result: Simulation = { chosen: [], regret: [], loads: 0 };
  for (let round = 0; round < rounds; round++) {
    const tallies = await feedback.talliesOf('agent');
    const arm = selectVariation(arms, { mode: VariationSelectionMode.THOMPSON_SAMPLING, random, tallies });
    const rating = random() < arm.rate ? FeedbackRating.POSITIVE : FeedbackRating.NEGATIVE;
    await feedback.record('agent', arm.id, rating, async () => undefined);
    result.chosen.push(arm.id);
    result.regret.push(best - arm.rate);
  }
  return { ...result, loads };
}

const share = (chosen: string[], id: string) => chosen.filter((candidate) => candidate === id).length / chosen.length;
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

describe('THOMPSON_SAMPLING simulation', () => {
  const ROUNDS = 4000;
  const arms: Arm[] = [
    { id: 'worse', weight: 1, rate: 0.6 },
    { id: 'better', weight: 1, rate: 0.8 },
  ];

  it('moves objectives to the better-rated variation and its regret grows sublinearly (0.8 vs 0.6, 4,000 rounds)', async () => {
    const { chosen, regret, loads } = await simulate(arms, ROUNDS, seeded(2027));
    const quarter = ROUNDS / 4;
    const shares = [0, 1, 2, 3].map((index) => share(chosen.slice(index * quarter, (index + 1) * quarter), 'better'));
    assert.ok(shares[3] > 0.8, `last-quarter share of the better variation ${shares[3]}`);
    assert.ok(shares[3] > shares[0], `share did not rise: ${shares.join(', ')}`);
    const firstHalf = sum(regret.slice(0, ROUNDS / 2));
    const secondHalf = sum(regret.slice(ROUNDS / 2));
    assert.ok(secondHalf < firstHalf, `regret over the second half ${secondHalf} is not below the first half's ${firstHalf}`);
    // Linear regret (a fixed split, as RANDOM gives) would be 0.1 per round: 400 over 4,000.
    assert.ok(sum(regret) < 0.25 * 0.1 * ROUNDS, `cumulative regret ${sum(regret)}`);
    assert.equal(loads, 1, 'the counts were read once, then kept in memory');
  });

  it('gives RANDOM, under the same measures, linear regret (the measures can fail)', async () => {
    const random = seeded(2027);
    const chosen = Array.from({ length: ROUNDS }, () => selectVariation(arms, { mode: VariationSelectionMode.RANDOM, random }).id);
    const regret = chosen.map((id) => (id === 'worse' ? 0.2 : 0));
    assert.ok(share(chosen.slice((3 * ROUNDS) / 4), 'better') < 0.8);
    assert.ok(sum(regret.slice(ROUNDS / 2)) > 0.8 * sum(regret.slice(0, ROUNDS / 2)));
  });

  it('keeps finding the better variation on other seeds (last-quarter share > 0.8 on at least 9 of 10)', async () => {
    let found = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const { chosen } = await simulate(arms, ROUNDS, seeded(seed));
      if (share(chosen.slice((3 * ROUNDS) / 4), 'better') > 0.8) found += 1;
    }
    assert.ok(found >= 9, `found on ${found} of 10 seeds`);
  });
});
