// The supported model catalog, shipped as data with the service (spec 2.10,
// api-decisions.md "Models"). Every workspace is seeded with all of it, ENABLED;
// entries added in a later release reach existing workspaces through the
// start-up reconcile. Prices are cents per million tokens, as decimal strings
// (OpenRouter list prices); limits are the context window and the largest
// completion.

/** One catalog model; `id` is the full `family/model` id, the model's `metadata.name`. */
export interface CatalogModel {
  id: string;
  /** Who serves it: `openrouter` (needs an AI_PROVIDER_OPENROUTER key) or `builtin`. */
  provider: string;
  inputPricePerMillionTokens: string;
  outputPricePerMillionTokens: string;
  maxInputTokens: number;
  maxOutputTokens: number;
}

/** `spec.provider` of models served through OpenRouter. */
export const OPENROUTER_PROVIDER = 'openrouter';
/** `spec.provider` of models implemented inside the service (no provider key). */
export const BUILTIN_PROVIDER = 'builtin';
/** The deterministic scripted model of api-decisions.md. */
export const SCRIPTED_MODEL_ID = 'builtin/scripted';

type Row = [id: string, maxInputTokens: number, maxOutputTokens: number, input: string, output: string];

// [id, context window, max completion, input cents/Mtok, output cents/Mtok]
const OPENROUTER_MODELS: Row[] = [
  ['openai/gpt-4o-mini', 128000, 16384, '15', '60'],
  ['openai/gpt-4o', 128000, 16384, '250', '1000'],
  ['openai/gpt-4.1', 1047576, 32768, '200', '800'],
  ['openai/gpt-4.1-mini', 1047576, 32768, '40', '160'],
  ['openai/gpt-4.1-nano', 1047576, 32768, '10', '40'],
  ['openai/gpt-5', 400000, 128000, '125', '1000'],
  ['openai/gpt-5-mini', 400000, 128000, '25', '200'],
  ['openai/o4-mini', 200000, 100000, '110', '440'],
  ['anthropic/claude-sonnet-4', 200000, 64000, '300', '1500'],
  ['anthropic/claude-opus-4.1', 200000, 32000, '1500', '7500'],
  ['anthropic/claude-haiku-4.5', 200000, 64000, '100', '500'],
  ['anthropic/claude-3.5-haiku', 200000, 8192, '80', '400'],
  ['google/gemini-2.5-pro', 1048576, 65536, '125', '1000'],
  ['google/gemini-2.5-flash', 1048576, 65535, '30', '250'],
  ['google/gemini-2.5-flash-lite', 1048576, 65535, '10', '40'],
  ['meta-llama/llama-3.3-70b-instruct', 131072, 16384, '3.8', '12'],
  ['meta-llama/llama-4-maverick', 1048576, 16384, '15', '60'],
  ['meta-llama/llama-4-scout', 327680, 16384, '8', '30'],
  ['mistralai/mistral-large-2411', 131072, 32768, '200', '600'],
  ['mistralai/mistral-medium-3', 131072, 32768, '40', '200'],
  ['mistralai/mistral-small-3.2-24b-instruct', 131072, 32768, '7.5', '20'],
  ['mistralai/codestral-2508', 256000, 32768, '30', '90'],
  ['deepseek/deepseek-chat-v3.1', 163840, 32768, '20', '80'],
  ['deepseek/deepseek-r1-0528', 163840, 32768, '50', '215'],
  ['qwen/qwen3-235b-a22b-2507', 262144, 32768, '7.8', '31.2'],
  ['qwen/qwen3-coder', 262144, 65536, '22', '95'],
  ['x-ai/grok-4', 256000, 32768, '300', '1500'],
  ['x-ai/grok-3-mini', 131072, 32768, '30', '50'],
  ['moonshotai/kimi-k2', 131072, 32768, '57', '230'],
];

/** The whole catalog, in the order workspaces list it. */
export const MODEL_CATALOG: readonly CatalogModel[] = [
  ...OPENROUTER_MODELS.map(([id, maxInputTokens, maxOutputTokens, input, output]) => ({
    id,
    provider: OPENROUTER_PROVIDER,
    inputPricePerMillionTokens: input,
    outputPricePerMillionTokens: output,
    maxInputTokens,
    maxOutputTokens,
  })),
  {
    id: SCRIPTED_MODEL_ID,
    provider: BUILTIN_PROVIDER,
    inputPricePerMillionTokens: '0',
    outputPricePerMillionTokens: '0',
    maxInputTokens: 1048576,
    maxOutputTokens: 65536,
  },
];

/** `spec.family`: the part of a full model id before the slash. */
export function modelFamily(modelId: string): string {
  const slash = modelId.indexOf('/');
  return slash > 0 ? modelId.slice(0, slash) : modelId;
}
