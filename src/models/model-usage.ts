// Usage and cost of a model call (api-decisions.md "Objectives": cost in cents
// from the provider's reported cost, else the model's prices). Prices are the
// catalog's cents per million tokens.
import type { ChatUsage } from '../ports/model-provider';
import { MODEL_CATALOG, type CatalogModel } from './catalog';

/** A model's prices in cents per million tokens. */
export interface ModelPrices {
  inputCentsPerMillionTokens: number;
  outputCentsPerMillionTokens: number;
}

/** Looks a model's prices up by its exact id (a `:free` variant is another id); undefined when unknown. */
export type PriceLookup = (modelId: string) => ModelPrices | undefined;

/** Prices from the shipped catalog. */
export function catalogPrices(catalog: readonly CatalogModel[] = MODEL_CATALOG): PriceLookup {
  const byId = new Map(catalog.map((model) => [model.id, {
    inputCentsPerMillionTokens: Number(model.inputPricePerMillionTokens),
    outputCentsPerMillionTokens: Number(model.outputPricePerMillionTokens),
  }]));
  return (modelId) => byId.get(modelId);
}

/** Cents, rounded to a billionth so float noise (0.1 + 0.2) does not show in events and sums. */
export function roundCents(cents: number): number {
  return Math.round(cents * 1e9) / 1e9;
}

/** Usage priced with the model's prices; costSource `none` (0 cents) when the model has none. */
export function usageFromPrices(promptTokens: number, completionTokens: number, prices: ModelPrices | undefined): ChatUsage {
  const base = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  if (!prices) return { ...base, costCents: 0, costSource: 'none' };
  const cents = (promptTokens * prices.inputCentsPerMillionTokens + completionTokens * prices.outputCentsPerMillionTokens) / 1_000_000;
  return { ...base, costCents: roundCents(cents), costSource: 'catalog' };
}

/** Usage of failed attempts (FailedCallUsage) summed; undefined while none reported any. */
export function sumFailedUsage(
  total: { promptTokens: number; completionTokens: number; costCents: number } | undefined,
  usage: { promptTokens: number; completionTokens: number; costCents: number } | undefined,
): { promptTokens: number; completionTokens: number; costCents: number } | undefined {
  if (!usage) return total;
  if (!total) return { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, costCents: usage.costCents };
  return {
    promptTokens: total.promptTokens + usage.promptTokens,
    completionTokens: total.completionTokens + usage.completionTokens,
    costCents: roundCents(total.costCents + usage.costCents),
  };
}

/** A response's usage with that of the call's failed attempts added (they were paid for too). */
export function withFailedAttemptsUsage<Response extends { usage?: ChatUsage }>(
  response: Response,
  failed: { promptTokens: number; completionTokens: number; costCents: number } | undefined,
): Response {
  if (!failed) return response;
  const usage = response.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0, costCents: 0, costSource: 'none' as const };
  return {
    ...response,
    usage: {
      ...usage,
      promptTokens: usage.promptTokens + failed.promptTokens,
      completionTokens: usage.completionTokens + failed.completionTokens,
      totalTokens: usage.totalTokens + failed.promptTokens + failed.completionTokens,
      costCents: roundCents(usage.costCents + failed.costCents),
    },
  };
}

/** builtin/scripted's token count: one token per 4 characters, a started group counting whole. */
export function tokensForCharacters(characters: number): number {
  return Math.ceil(characters / 4);
}
