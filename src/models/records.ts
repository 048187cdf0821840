// Stored records of the models area: one row per (workspace, catalog model).
import type { MetadataRecord } from '../accounts/records';

export const ModelStatus = {
  UNSPECIFIED: 'MODEL_STATUS_UNSPECIFIED',
  ENABLED: 'MODEL_STATUS_ENABLED',
  DISABLED: 'MODEL_STATUS_DISABLED',
} as const;
export type ModelStatus = (typeof ModelStatus)[keyof typeof ModelStatus];

export interface ModelRecord extends MetadataRecord {
  workspaceId: string;
  /** The part of the full id (`metadata.name`) before the slash. */
  family: string;
  /** Who serves the model: `openrouter` or `builtin`. */
  provider: string;
  /** Cents per million input tokens, a decimal string. */
  inputPricePerMillionTokens: string;
  /** Cents per million output tokens, a decimal string. */
  outputPricePerMillionTokens: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  status: ModelStatus;
}
