// Model rows: one per (workspace, catalog model) plus the workspace's own
// models (with a provider key and an upstream id), unique by full id per workspace.
import { EntitySchema } from 'typeorm';
import type { ModelRecord } from '../../src/models/records';
import { metadataColumns } from './columns';

export const ModelEntity = new EntitySchema<ModelRecord>({
  name: 'Model',
  tableName: 'models',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    family: { type: 'text' },
    provider: { type: 'text' },
    inputPricePerMillionTokens: { type: 'text', name: 'input_price_per_million_tokens' },
    outputPricePerMillionTokens: { type: 'text', name: 'output_price_per_million_tokens' },
    maxInputTokens: { type: 'integer', name: 'max_input_tokens' },
    maxOutputTokens: { type: 'integer', name: 'max_output_tokens' },
    status: { type: 'text' },
    aiProviderKeyId: { type: 'text', name: 'ai_provider_key_id', nullable: true },
    upstreamModel: { type: 'text', name: 'upstream_model', nullable: true },
  },
});
