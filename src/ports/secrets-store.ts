// Storage port of the secrets area: workspace secrets, AI provider keys and the
// workspace data keys that encrypt both. persistence/repositories/secrets.store.ts
// implements it over TypeORM.
import type { PageRequest } from '../resource/pagination';
import type { AiProvider, AiProviderKeyRecord, WorkspaceSecretRecord } from '../secrets/records';
import type { DataKeyStore } from './data-key-store';
import type { ListFilter, RecordTable } from './foundation-store';

export interface SecretsStore {
  secrets: RecordTable<WorkspaceSecretRecord> & {
    /** Rows of `limit + 1` in page order (see toPage). */
    list(workspaceId: string, page: PageRequest, filter: ListFilter): Promise<WorkspaceSecretRecord[]>;
    /** The workspace's secrets with these exact names. */
    findByNames(workspaceId: string, names: string[]): Promise<WorkspaceSecretRecord[]>;
    /** Sets `lastUsedAt` without touching `updatedAt`. */
    markUsed(ids: string[], at: Date): Promise<void>;
  };
  providerKeys: RecordTable<AiProviderKeyRecord> & {
    list(workspaceId: string, page: PageRequest, filter: ListFilter): Promise<AiProviderKeyRecord[]>;
    /** The workspace's keys for one provider, non-promotional first, newest first. */
    listForProvider(workspaceId: string, provider: AiProvider): Promise<AiProviderKeyRecord[]>;
  };
  dataKeys: DataKeyStore;
}
