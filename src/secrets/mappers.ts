// Record → wire mappings of the secrets area. Encrypted fields never leave
// here: a secret's `spec` is empty and a provider key's `spec.apiKey` is "".
import { toProfile } from '../accounts/mappers';
import type { ProfileRecord } from '../accounts/records';
import { toResourceMetadata } from '../resource/metadata';
import type { AiProviderKey } from '../schemas/ai-provider-keys.schema';
import type { WorkspaceSecret } from '../schemas/secrets.schema';
import type { AiProviderKeyRecord, WorkspaceSecretRecord } from './records';

/** The secret without its value; `info` only when `withInfo` (reads, and lists with includeInfo). */
export function toWorkspaceSecret(record: WorkspaceSecretRecord, withInfo: boolean, createdBy?: ProfileRecord | null): WorkspaceSecret {
  const secret: WorkspaceSecret = { metadata: toResourceMetadata(record, record.workspaceId), spec: {} };
  if (!withInfo) return secret;
  return {
    ...secret,
    info: {
      ...(createdBy ? { createdBy: toProfile(createdBy) } : {}),
      ...(record.lastUsedAt ? { lastUsedAt: record.lastUsedAt.toISOString() } : {}),
    },
  };
}

export interface ModelCounts {
  enabled: number;
  disabled: number;
}

/** The provider key with `spec.apiKey` empty; `info` only when counts are given. */
export function toAiProviderKey(record: AiProviderKeyRecord, counts?: ModelCounts): AiProviderKey {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      apiKey: '',
      provider: record.provider,
      openrouter: record.openrouterBaseUrl !== null ? { baseUrl: record.openrouterBaseUrl } : {},
    },
    ...(counts ? { info: { enabledModelCount: counts.enabled, disabledModelCount: counts.disabled, isPromotional: record.promotional } } : {}),
  };
}
