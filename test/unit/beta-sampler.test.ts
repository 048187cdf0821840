// The Gamma and Beta samplers behind THOMPSON_SAMPLING against theory: sample
// mean and variance within a few standard errors of the distribution's, and
// the whole distribution (Kolmogorov-Smirnov) where its CDF is elementary.
import assert from 'node:assert/strict';
import { sampleBeta, sampleGamma, sampleStandardNormal } from '../../src/agents/beta-sampler';
import type { RandomSource } from '../../src/agents/variation-selection';
import { seeded } from '../support/seeded-random';

const DRAWS = 20_000;
/** Standard errors a sample moment may stray from theory (two-sided p ~ 6e-5 each). */
const Z = 4;
/** Kolmogorov-Smirnov critical value at p = 0.001 for DRAWS draws. */
const KS_CRITICAL = 1.949 / Math.sqrt(DRAWS);

function draws(sample: (random: RandomSource) => number, seed: number): number[] {
  const random = seeded(seed);
  return Array.from({ length: DRAWS }, () => sample(random));
}

/**
 * How many standard errors the sample mean and variance lie from `mean` and
 * `variance`. The variance's standard error is estimated from the sample's
 * fourth central moment: sqrt((m4 - s^4) / n).
 */
function momentErrors(sample: number[], mean: number, variance: number): { meanZ: number; varianceZ: number; sampleMean: number; sampleVariance: number } {
  const n = sample.length;
  const sampleMean = sample.reduce((sum, x) => sum + x, 0) / n;
  const sampleVariance = sample.reduce((sum, x) => sum + (x - sampleMean) ** 2, 0) / (n - 1);
  const m4 = sample.reduce((sum, x) => sum + (x - sampleMean) ** 4, 0) / n;
  return {
    meanZ: Math.abs(sampleMean - mean) / Math.sqrt(variance / n),
    varianceZ: Math.abs(sampleVariance - variance) / Math.sqrt((m4 - sampleVariance ** 2) / n),
    sampleMean,
    sampleVariance,
  };
}

function assertMoments(sample: number[], mean: number, variance: number, what: string): void {
  const errors = momentErrors(sample, mean, variance);
  assert.ok(errors.meanZ < Z, `${what}: mean ${errors.sampleMean} is ${errors.meanZ.toFixed(2)} standard errors from ${mean}`);
  assert.ok(errors.varianceZ < Z, `${what}: variance ${errors.sampleVariance} is ${errors.varianceZ.toFixed(2)} standard errors from ${variance}`);
}

/** The Kolmogorov-Smirnov statistic: the largest distance between the sample's CDF and `cdf`. */
function ksStatistic(sample: number[], cdf: (x: number) => number): number {
  const sorted = [...sample].sort((a, b) => a - b);
  return sorted.reduce((max, x, index) => Math.max(max, Math.abs(cdf(x) - index / sorted.length), Math.abs(cdf(x) - (index + 1) / sorted.length)), 0);
}

const betaMean = (a: number, b: number) => a / (a + b);
const betaVariance = (a: number, b: number) => (a * b) / ((a + b) ** 2 * (a + b + 1));

describe('beta-sampler', () => {
  describe('sampleStandardNormal', () => {
    it('has mean 0 and variance 1', () => {
      assertMoments(draws(sampleStandardNormal, 1), 0, 1, 'N(0, 1)');
    });
  });

  describe('sampleGamma', () => {
    // Below 1 (the boost), exactly 1, and above (Marsaglia-Tsang directly); a feedback-heavy shape.
    for (const [index, shape] of [0.3, 1, 2.5, 10, 250].entries()) {
      it(`Gamma(${shape}, 1) has mean and variance ${shape}`, () => {
        const sample = draws((random) => sampleGamma(shape, random), 100 + index);
        assert.ok(sample.every((x) => x > 0 && Number.isFinite(x)));
        assertMoments(sample, shape, shape, `Gamma(${shape})`);
      });
    }

    it('Gamma(1, 1) is the exponential distribution (Kolmogorov-Smirnov)', () => {
      const statistic = ksStatistic(draws((random) => sampleGamma(1, random), 7), (x) => 1 - Math.exp(-x));
      assert.ok(statistic < KS_CRITICAL, `KS ${statistic} exceeds ${KS_CRITICAL}`);
    });

    it('throws RangeError for a shape that is not a finite number > 0', () => {
      for (const shape of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        assert.throws(() => sampleGamma(shape, Math.random), { name: 'RangeError', message: `shape must be a finite number > 0, got ${shape}` });
      }
    });
  });

  describe('sampleBeta', () => {
    // Selection's shapes are 1 + counts; the others check the general case.
    for (const [index, [a, b]] of [[1, 1], [2, 5], [21, 4], [1, 120], [0.5, 0.5], [0.2, 3]].entries()) {
      it(`Beta(${a}, ${b}) has mean ${betaMean(a, b).toFixed(4)} and variance ${betaVariance(a, b).toFixed(5)}`, () => {
        const sample = draws((random) => sampleBeta(a, b, random), 200 + index);
        assert.ok(sample.every((x) => x >= 0 && x <= 1));
        assertMoments(sample, betaMean(a, b), betaVariance(a, b), `Beta(${a}, ${b})`);
      });
    }

    it('would fail the same check against a neighbouring distribution (the check can fail)', () => {
      const sample = draws((random) => sampleBeta(2, 5, random), 201);
      const errors = momentErrors(sample, betaMean(2, 4), betaVariance(2, 4));
      assert.ok(errors.meanZ > Z, `mean of Beta(2, 5) draws within ${errors.meanZ} standard errors of Beta(2, 4)'s`);
    });

    it('Beta(1, 1) is uniform and Beta(2, 1) has CDF x^2 (Kolmogorov-Smirnov)', () => {
      const uniform = ksStatistic(draws((random) => sampleBeta(1, 1, random), 11), (x) => x);
      assert.ok(uniform < KS_CRITICAL, `KS ${uniform} exceeds ${KS_CRITICAL}`);
      const square = ksStatistic(draws((random) => sampleBeta(2, 1, random), 12), (x) => x * x);
      assert.ok(square < KS_CRITICAL, `KS ${square} exceeds ${KS_CRITICAL}`);
      const wrong = ksStatistic(draws((random) => sampleBeta(2, 1, random), 12), (x) => x);
      assert.ok(wrong > KS_CRITICAL, 'Beta(2, 1) draws pass as uniform');
    });

    it('is reproducible from the random source', () => {
      assert.deepEqual(draws((random) => sampleBeta(3, 7, random), 9).slice(0, 50), draws((random) => sampleBeta(3, 7, random), 9).slice(0, 50));
    });

    it('fails, rather than looping forever, on a constant random source', () => {
      for (const constant of [0, 0.5]) {
        assert.throws(() => sampleBeta(2, 3, () => constant), { message: 'the random source gave no acceptable draw in 1000 rounds; it is not uniform on [0, 1)' });
      }
    });

    it('throws RangeError naming the shape that is not a finite number > 0', () => {
      assert.throws(() => sampleBeta(0, 1, Math.random), { name: 'RangeError', message: 'alpha must be a finite number > 0, got 0' });
      assert.throws(() => sampleBeta(1, -2, Math.random), { name: 'RangeError', message: 'beta must be a finite number > 0, got -2' });
    });
  });
});
