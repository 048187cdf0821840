// Which variation an objective runs (spec 2.13, 2.14): an explicit id wins
// (weight 0 included); otherwise the agent's mode picks, RANDOM (also for
// UNSPECIFIED) uniformly, WEIGHTED by weight / sum of weights. Pure: the random
// source is injected.
import { FailedPreconditionError, NotFoundError } from '../errors';
import { VariationSelectionMode } from './records';

/** A number in [0, 1), like Math.random. */
export type RandomSource = () => number;

export interface SelectableVariation {
  id: string;
  weight: number;
}

export interface SelectionRequest {
  mode: VariationSelectionMode;
  /** `variationId` of objective creation, when given. */
  explicitId?: string;
  random: RandomSource;
}

/**
 * @returns the chosen variation
 * @throws NotFoundError when `explicitId` is not one of the agent's variations
 * @throws FailedPreconditionError when the agent has no variation to choose, or
 *   in WEIGHTED mode no variation has a positive weight
 */
export function selectVariation<T extends SelectableVariation>(variations: readonly T[], request: SelectionRequest): T {
  if (request.explicitId !== undefined) {
    const chosen = variations.find((variation) => variation.id === request.explicitId);
    if (!chosen) throw NotFoundError.resource('agent variation', request.explicitId);
    return chosen;
  }
  if (variations.length === 0) throw new FailedPreconditionError('the agent has no variations');
  if (request.mode === VariationSelectionMode.WEIGHTED) return weighted(variations, request.random);
  return variations[Math.min(Math.floor(request.random() * variations.length), variations.length - 1)];
}

function weighted<T extends SelectableVariation>(variations: readonly T[], random: RandomSource): T {
  const total = variations.reduce((sum, variation) => sum + Math.max(variation.weight, 0), 0);
  if (total <= 0) throw new FailedPreconditionError('no variation of the agent has a positive weight (WEIGHTED selection)');
  let remaining = random() * total;
  for (const variation of variations) {
    if (variation.weight <= 0) continue;
    remaining -= variation.weight;
    if (remaining < 0) return variation;
  }
  // Floating-point rounding can leave a sliver: the last positive weight takes it.
  return [...variations].reverse().find((variation) => variation.weight > 0)!;
}
