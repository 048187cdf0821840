// Draws from Gamma and Beta distributions for Thompson sampling (issue 27
// item 1), driven by an injected uniform source so that selection is
// reproducible in tests. Beta(a, b) is X / (X + Y) with X ~ Gamma(a, 1) and
// Y ~ Gamma(b, 1); Gamma uses Marsaglia and Tsang's squeeze method (ACM TOMS
// 26(3), 2000) for shape >= 1 and the boost Gamma(a) = Gamma(a + 1) * U^(1/a)
// below 1. Normals come from the Marsaglia polar method.
import type { RandomSource } from './variation-selection';

/**
 * Rejection rounds before a draw gives up. Each round is accepted with
 * probability > pi/4, so only a degenerate source (a constant) runs out, which
 * then fails loudly instead of looping forever.
 */
const MAX_ROUNDS = 1000;

function degenerate(): never {
  throw new Error(`the random source gave no acceptable draw in ${MAX_ROUNDS} rounds; it is not uniform on [0, 1)`);
}

function assertShape(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a finite number > 0, got ${value}`);
}

/** A standard normal draw (Marsaglia polar method; the second value of the pair is dropped to keep the draw stateless). */
export function sampleStandardNormal(random: RandomSource): number {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const u = 2 * random() - 1;
    const v = 2 * random() - 1;
    const s = u * u + v * v;
    if (s > 0 && s < 1) return u * Math.sqrt((-2 * Math.log(s)) / s);
  }
  return degenerate();
}

/**
 * A draw from Gamma(shape, 1).
 * @throws RangeError unless shape is a finite number > 0
 * @throws Error when `random` is degenerate (see MAX_ROUNDS)
 */
export function sampleGamma(shape: number, random: RandomSource): number {
  assertShape('shape', shape);
  if (shape < 1) {
    // U in (0, 1]: U = 0 would give 0, which Gamma never takes.
    return sampleGamma(shape + 1, random) * (1 - random()) ** (1 / shape);
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const x = sampleStandardNormal(random);
    const base = 1 + c * x;
    if (base <= 0) continue;
    const v = base * base * base;
    const u = 1 - random();
    const x2 = x * x;
    // The squeeze accepts most draws without a logarithm.
    if (u < 1 - 0.0331 * x2 * x2) return d * v;
    if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
  }
  return degenerate();
}

/**
 * A draw from Beta(alpha, beta), in [0, 1].
 * @throws RangeError unless both shapes are finite numbers > 0
 */
export function sampleBeta(alpha: number, beta: number, random: RandomSource): number {
  assertShape('alpha', alpha);
  assertShape('beta', beta);
  const x = sampleGamma(alpha, random);
  const y = sampleGamma(beta, random);
  // Both draws underflow to 0 only for tiny shapes, where the mass sits at the ends:
  // pick an end with the mean's odds.
  if (x + y === 0) return random() < alpha / (alpha + beta) ? 1 : 0;
  return x / (x + y);
}
