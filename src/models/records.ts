// Stored records of the models area: one row per (workspace, catalog model),
// plus the workspace's own models, each served through one of its AI provider keys.
import type { MetadataRecord } from '../accounts/records';

export const ModelStatus = {
  UNSPECIFIED: 'MODEL_STATUS_UNSPECIFIED',
  ENABLED: 'MODEL_STATUS_ENABLED',
  DISABLED: 'MODEL_STATUS_DISABLED',
} as const;
export type ModelStatus = (typeof ModelStatus)[keyof typeof ModelStatus];

/** Where a model comes from: the catalog shipped with the service, or the workspace (a provider key and an upstream id). */
export const ModelSource = {
  UNSPECIFIED: 'MODEL_SOURCE_UNSPECIFIED',
  CATALOG: 'MODEL_SOURCE_CATALOG',
  WORKSPACE: 'MODEL_SOURCE_WORKSPACE',
} as const;
export type ModelSource = (typeof ModelSource)[keyof typeof ModelSource];

export interface ModelRecord extends MetadataRecord {
  workspaceId: string;
  /** The part of the full id (`metadata.name`) before the slash. */
  family: string;
  /** Who serves the model: `openrouter` or `builtin` (a workspace model: its key's provider, `openrouter`). */
  provider: string;
  /** Cents per million input tokens, a decimal string. */
  inputPricePerMillionTokens: string;
  /** Cents per million output tokens, a decimal string. */
  outputPricePerMillionTokens: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  status: ModelStatus;
  /** A workspace model's AI provider key; null for a catalog model. */
  aiProviderKeyId: string | null;
  /** The model id a workspace model sends its provider; null for a catalog model. */
  upstreamModel: string | null;
}
