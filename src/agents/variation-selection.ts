// Which variation an objective runs (spec 2.13, 2.14): an explicit id wins
// (weight 0 included); otherwise the agent's mode picks, RANDOM (also for
// UNSPECIFIED) uniformly, WEIGHTED by weight / sum of weights, THOMPSON_SAMPLING
// (issue 27) the highest draw from each variation's Beta(1 + positive,
// 1 + negative) feedback posterior. A weight 0 variation is never
// auto-selected, in any mode. Pure: the random source and the feedback tallies
// are injected.
import { FailedPreconditionError, NotFoundError } from '../errors';
import { sampleBeta } from './beta-sampler';
import type { FeedbackTallySource } from './feedback-tallies';
import { VariationSelectionMode, type FeedbackTally } from './records';

const ALL_ZERO = 'every variation of the agent has weight 0, which is never selected automatically; choose one by variationId';

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
  /**
   * Feedback counts by variation id, which THOMPSON_SAMPLING needs (see
   * needsFeedbackTallies); a variation without an entry has none (Beta(1, 1)).
   */
  tallies?: ReadonlyMap<string, FeedbackTally>;
}

/** Whether selecting for `request` reads feedback tallies: THOMPSON_SAMPLING without an explicit id. */
export function needsFeedbackTallies(request: Pick<SelectionRequest, 'mode' | 'explicitId'>): boolean {
  return request.explicitId === undefined && request.mode === VariationSelectionMode.THOMPSON_SAMPLING;
}

/**
 * @returns the chosen variation
 * @throws NotFoundError when `explicitId` is not one of the agent's variations
 * @throws FailedPreconditionError when the agent has no variation to choose, or
 *   no variation has a positive weight (weight 0 is never auto-selected)
 */
export function selectVariation<T extends SelectableVariation>(variations: readonly T[], request: SelectionRequest): T {
  if (request.explicitId !== undefined) {
    const chosen = variations.find((variation) => variation.id === request.explicitId);
    if (!chosen) throw NotFoundError.resource('agent variation', request.explicitId);
    return chosen;
  }
  if (variations.length === 0) throw new FailedPreconditionError('the agent has no variations');
  if (request.mode === VariationSelectionMode.WEIGHTED) return weighted(variations, request.random);
  const selectable = variations.filter((variation) => variation.weight > 0);
  if (selectable.length === 0) throw new FailedPreconditionError(ALL_ZERO);
  if (request.mode === VariationSelectionMode.THOMPSON_SAMPLING) return thompson(selectable, request.random, request.tallies ?? new Map());
  return selectable[Math.min(Math.floor(request.random() * selectable.length), selectable.length - 1)];
}

/** The variation with the highest draw from its Beta posterior; the first of equal draws. */
function thompson<T extends SelectableVariation>(selectable: readonly T[], random: RandomSource, tallies: ReadonlyMap<string, FeedbackTally>): T {
  let best = selectable[0];
  let bestDraw = -1;
  for (const variation of selectable) {
    const tally = tallies.get(variation.id);
    const draw = sampleBeta(1 + (tally?.positive ?? 0), 1 + (tally?.negative ?? 0), random);
    if (draw > bestDraw) {
      best = variation;
      bestDraw = draw;
    }
  }
  return best;
}

/**
 * selectVariation for an agent's objective, reading the agent's feedback
 * counts from `feedback` (memory, not a query) only when the mode needs them.
 * @throws as selectVariation
 */
export async function selectAgentVariation<T extends SelectableVariation>(
  agentId: string, variations: readonly T[], request: Omit<SelectionRequest, 'tallies'>, feedback: FeedbackTallySource,
): Promise<T> {
  const tallies = needsFeedbackTallies(request) ? await feedback.talliesOf(agentId) : undefined;
  return selectVariation(variations, { ...request, tallies });
}

function weighted<T extends SelectableVariation>(variations: readonly T[], random: RandomSource): T {
  const total = variations.reduce((sum, variation) => sum + Math.max(variation.weight, 0), 0);
  if (total <= 0) throw new FailedPreconditionError(ALL_ZERO);
  let remaining = random() * total;
  for (const variation of variations) {
    if (variation.weight <= 0) continue;
    remaining -= variation.weight;
    if (remaining < 0) return variation;
  }
  // Floating-point rounding can leave a sliver: the last positive weight takes it.
  return [...variations].reverse().find((variation) => variation.weight > 0)!;
}
