// The storage port of the foundation area. Services depend on this interface;
// persistence/repositories/foundation.store.ts implements it over TypeORM.
import type {
  AccountRecord,
  ApiKeyRecord,
  ProfileRecord,
  WorkspaceMemberRecord,
  WorkspaceRecord,
} from '../accounts/records';
import type { PageRequest } from '../resource/pagination';

/** The columns of an API key row the credential check needs. */
export type ApiKeyCredential = Pick<ApiKeyRecord, 'id' | 'accountId' | 'workspaceId' | 'principalProfileId' | 'permissions' | 'system' | 'state' | 'tokenVersion'>;

/** The columns of a workspace row access checks and handlers need (a WorkspaceRef). */
export type WorkspaceHead = Pick<WorkspaceRecord, 'id' | 'accountId' | 'name' | 'status'>;

/** Filters every list of labelled resources accepts. */
export interface ListFilter {
  /** Matches an id prefix or a name prefix. */
  prefix?: string;
  /** Every pair must match (AND). */
  labels?: Record<string, string>;
}

export interface RecordTable<T extends { id: string }> {
  insert(record: T): Promise<T>;
  /** The record, or null when absent. */
  findById(id: string): Promise<T | null>;
  /** Applies `changes` and returns the updated record (null when absent). */
  update(id: string, changes: Partial<T>): Promise<T | null>;
  delete(id: string): Promise<void>;
}

export interface MemberWithProfile {
  member: WorkspaceMemberRecord;
  profile: ProfileRecord;
}

export interface FoundationStore {
  /**
   * Runs `work` in one database transaction with a store bound to it (joins an open one).
   * A deadlock or serialization failure runs the outermost transaction again
   * whole (persistence/transaction-runner.ts): `work` must have no effect
   * outside the database.
   * @throws AbortedError when that happened on every run (the client may retry)
   */
  transaction<T>(work: (store: FoundationStore) => Promise<T>): Promise<T>;

  accounts: RecordTable<AccountRecord> & {
    hasAny(): Promise<boolean>;
  };
  workspaces: RecordTable<WorkspaceRecord> & {
    /** Rows of `limit + 1` in page order (see toPage). */
    list(accountId: string, page: PageRequest, filter: ListFilter & { includeArchived: boolean }): Promise<WorkspaceRecord[]>;
    countNotArchived(accountId: string): Promise<number>;
    /** Locks the account's workspace rows for the archive check. */
    lockAccountWorkspaces(accountId: string): Promise<void>;
  };
  profiles: RecordTable<ProfileRecord> & {
    findUserByEmail(accountId: string, email: string): Promise<ProfileRecord | null>;
    /** Binds an unbound profile to an OIDC subject; returns the subject bound afterwards (first wins). */
    bindOidcSubject(id: string, subject: string): Promise<string | null>;
    /** The profiles of the given ids (nulls and repeats ignored), by id, in one query. */
    findByIds(ids: ReadonlyArray<string | null>): Promise<Map<string, ProfileRecord>>;
    /** USER profiles with this email in any account (OIDC sign-in). */
    findUsersByEmail(email: string): Promise<ProfileRecord[]>;
    /** Case-insensitive substring search over name and email. */
    search(accountId: string, query: string | undefined, page: PageRequest): Promise<ProfileRecord[]>;
  };
  members: RecordTable<WorkspaceMemberRecord> & {
    find(workspaceId: string, profileId: string): Promise<WorkspaceMemberRecord | null>;
    listActive(workspaceId: string, page: PageRequest): Promise<MemberWithProfile[]>;
    activeWorkspaceIds(profileId: string): Promise<string[]>;
  };
  apiKeys: RecordTable<ApiKeyRecord> & {
    list(workspaceId: string, page: PageRequest, filter: ListFilter & { query?: string }): Promise<ApiKeyRecord[]>;
    findGlobal(accountId: string): Promise<ApiKeyRecord | null>;
    /**
     * What the credential check of every request reads of the key and, in the
     * same round trip, of the workspace the request acts in: `workspaceId`,
     * or the key's own when null; none when undefined. Null when the key does
     * not exist.
     */
    findCredential(id: string, workspaceId: string | null | undefined): Promise<{ key: ApiKeyCredential; workspace: WorkspaceHead | null } | null>;
    /** The key with its creator's profile, in one read; null when absent. */
    findWithCreator(id: string): Promise<{ record: ApiKeyRecord; createdBy: ProfileRecord | null } | null>;
  };
}
