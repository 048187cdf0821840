// AI provider key rows. `api_key_ciphertext` holds a sealed record (src/crypto),
// never plaintext; null for a key with a baseUrl and no apiKey.
import { EntitySchema } from 'typeorm';
import type { AiProviderKeyRecord } from '../../src/secrets/records';
import { metadataColumns } from './columns';

export const AiProviderKeyEntity = new EntitySchema<AiProviderKeyRecord>({
  name: 'AiProviderKey',
  tableName: 'ai_provider_keys',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    provider: { type: 'text' },
    apiKeyCiphertext: { type: 'text', name: 'api_key_ciphertext', nullable: true },
    openrouterBaseUrl: { type: 'text', name: 'openrouter_base_url', nullable: true },
    promotional: { type: 'boolean', default: false },
  },
});
