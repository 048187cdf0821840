// Stored records of the secrets area (workspace secrets, AI provider keys), as
// the domain sees them. Encrypted fields hold sealed records (src/crypto), never
// plaintext; nothing here is ever sent to a client as is.
import type { MetadataRecord } from '../accounts/records';

export interface WorkspaceSecretRecord extends MetadataRecord {
  workspaceId: string;
  /** The sealed `spec.value`; null when the secret was created without a value. */
  valueCiphertext: string | null;
  /** When the runtime last resolved the secret in a template. */
  lastUsedAt: Date | null;
}

export const AiProvider = {
  UNSPECIFIED: 'AI_PROVIDER_UNSPECIFIED',
  OPENROUTER: 'AI_PROVIDER_OPENROUTER',
} as const;
export type AiProvider = (typeof AiProvider)[keyof typeof AiProvider];

export interface AiProviderKeyRecord extends MetadataRecord {
  workspaceId: string;
  provider: AiProvider;
  /** The sealed `spec.apiKey`; null for a key with a baseUrl and no apiKey (a local server without authentication). */
  apiKeyCiphertext: string | null;
  /** `spec.openrouter.baseUrl`; null means the OpenRouter address. */
  openrouterBaseUrl: string | null;
  /** Provisioned by the service: clients can neither update nor delete it. */
  promotional: boolean;
}
