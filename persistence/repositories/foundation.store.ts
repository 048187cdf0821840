// FoundationStore over TypeORM: accounts, workspaces, profiles, memberships and
// API keys. One query per method; paging through fetchPage; the reads every
// request makes (key + workspace, creator profiles) as raw SQL.
import type { DataSource, EntityManager } from 'typeorm';
import type { FoundationStore } from '../../src/ports/foundation-store';
import { WorkspaceStatus } from '../../src/auth/workspace-access';
import { ProfileType, type ProfileRecord } from '../../src/accounts/records';
import { AccountEntity } from '../entities/account.entity';
import { ApiKeyEntity } from '../entities/api-key.entity';
import { ProfileEntity } from '../entities/profile.entity';
import { WorkspaceMemberEntity } from '../entities/workspace-member.entity';
import { WorkspaceEntity } from '../entities/workspace.entity';
import { fetchPage, likePrefix } from './list-query';
import { entityColumns, findWithCreatorQuery, readRows, readStatement, recordTable } from './record-table';
import { runTransaction } from '../transaction-runner';

const CREDENTIAL_COLUMNS = ['id', 'accountId', 'workspaceId', 'principalProfileId', 'permissions', 'system', 'state', 'tokenVersion'] as const;
const WORKSPACE_HEAD_COLUMNS = ['id', 'accountId', 'name', 'status'] as const;

/**
 * The credential check in one round trip: the key row's state and token
 * version (read on every request, so that revocation and rotation act at
 * once on every node) and the workspace the request acts in, joined. Only the
 * columns the check needs, so Postgres sends and pg parses little.
 */
function credentialQuery(manager: EntityManager): FoundationStore['apiKeys']['findCredential'] {
  const key = entityColumns(manager, ApiKeyEntity, 'k', CREDENTIAL_COLUMNS);
  const workspace = entityColumns(manager, WorkspaceEntity, 'w', WORKSPACE_HEAD_COLUMNS);
  const keyOnly = readStatement(`SELECT ${key.json} AS k FROM api_keys k WHERE k.id = $1`);
  const withWorkspace = readStatement(`SELECT ${key.json} AS k, ${workspace.json} AS w
    FROM api_keys k LEFT JOIN workspaces w ON w.id = COALESCE($2, k.workspace_id) WHERE k.id = $1`);
  return async (id, workspaceId) => {
    const rows = await (workspaceId === undefined ? readRows(manager, keyOnly, [id]) : readRows(manager, withWorkspace, [id, workspaceId]));
    const found = rows[0] ? key.decode(rows[0].k) : null;
    if (!found) return null;
    return { key: found, workspace: workspaceId === undefined ? null : workspace.decode(rows[0].w) };
  };
}

/** Profiles by id in one raw statement: every `info.createdBy` goes through it. */
function profilesByIdsQuery(manager: EntityManager) {
  const profile = entityColumns(manager, ProfileEntity, 't');
  const statement = readStatement(`SELECT ${profile.json} AS r FROM profiles t WHERE t.id = ANY($1::text[])`);
  return async (ids: ReadonlyArray<string | null>): Promise<Map<string, ProfileRecord>> => {
    const unique = [...new Set(ids.filter((id): id is string => !!id))];
    if (!unique.length) return new Map();
    const rows = await readRows(manager, statement, [unique]);
    return new Map(rows.map((row) => profile.decode(row.r)!).map((record) => [record.id, record]));
  };
}

function storeFor(manager: EntityManager, dataSource: DataSource): FoundationStore {
  const workspaces = manager.getRepository(WorkspaceEntity);
  const profiles = manager.getRepository(ProfileEntity);
  const members = manager.getRepository(WorkspaceMemberEntity);
  const apiKeys = manager.getRepository(ApiKeyEntity);
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(storeFor(tx, dataSource)), { joining: manager }),
    accounts: {
      ...recordTable(manager, AccountEntity),
      hasAny: async () => (await manager.getRepository(AccountEntity).count({ take: 1 })) > 0,
    },
    workspaces: {
      ...recordTable(manager, WorkspaceEntity),
      list(accountId, page, filter) {
        const query = workspaces.createQueryBuilder('w').where('w.account_id = :accountId', { accountId });
        if (!filter.includeArchived) query.andWhere('w.status <> :archived', { archived: WorkspaceStatus.ARCHIVED });
        return fetchPage(query, 'w', page, filter);
      },
      countNotArchived: (accountId) =>
        workspaces.createQueryBuilder('w').where('w.account_id = :accountId AND w.status <> :archived', { accountId, archived: WorkspaceStatus.ARCHIVED }).getCount(),
      async lockAccountWorkspaces(accountId) {
        await manager.query('SELECT id FROM workspaces WHERE account_id = $1 FOR UPDATE', [accountId]);
      },
    },
    profiles: {
      ...recordTable(manager, ProfileEntity),
      async bindOidcSubject(id, subject) {
        await manager.query('UPDATE profiles SET oidc_subject = $2 WHERE id = $1 AND oidc_subject IS NULL', [id, subject]);
        const rows: Array<{ oidc_subject: string | null }> = await manager.query('SELECT oidc_subject FROM profiles WHERE id = $1', [id]);
        return rows[0]?.oidc_subject ?? null;
      },
      findByIds: profilesByIdsQuery(manager),
      findUserByEmail: (accountId, email) =>
        profiles.createQueryBuilder('p').where('p.account_id = :accountId AND lower(p.email) = lower(:email) AND p.type = :type', { accountId, email, type: ProfileType.USER }).getOne(),
      findUsersByEmail: (email) =>
        profiles.createQueryBuilder('p').where('lower(p.email) = lower(:email) AND p.type = :type', { email, type: ProfileType.USER }).getMany(),
      search(accountId, text, page) {
        const query = profiles.createQueryBuilder('p').where('p.account_id = :accountId', { accountId });
        if (text) {
          query.andWhere("(p.name ILIKE :text ESCAPE '\\' OR p.email ILIKE :text ESCAPE '\\' OR p.display_name ILIKE :text ESCAPE '\\')", { text: `%${likePrefix(text)}` });
        }
        return fetchPage(query, 'p', page);
      },
    },
    members: {
      ...recordTable(manager, WorkspaceMemberEntity),
      find: (workspaceId, profileId) => members.findOneBy({ workspaceId, profileId }),
      async listActive(workspaceId, page) {
        const query = members.createQueryBuilder('m').where('m.workspace_id = :workspaceId AND m.removed_at IS NULL', { workspaceId });
        const rows = await fetchPage(query, 'm', page, {}, 'profile_id');
        const found = rows.length ? await profiles.findBy(rows.map((row) => ({ id: row.profileId }))) : [];
        const byId = new Map<string, ProfileRecord>(found.map((profile) => [profile.id, profile]));
        return rows.flatMap((member) => {
          const profile = byId.get(member.profileId);
          return profile ? [{ member, profile }] : [];
        });
      },
      async activeWorkspaceIds(profileId) {
        const rows = await members.createQueryBuilder('m').select('m.workspace_id', 'workspaceId').where('m.profile_id = :profileId AND m.removed_at IS NULL', { profileId }).getRawMany<{ workspaceId: string }>();
        return rows.map((row) => row.workspaceId);
      },
    },
    apiKeys: {
      ...recordTable(manager, ApiKeyEntity),
      list(workspaceId, page, filter) {
        const query = apiKeys.createQueryBuilder('k').where('k.workspace_id = :workspaceId', { workspaceId });
        if (filter.query) {
          query.andWhere("(k.name ILIKE :text ESCAPE '\\' OR k.description ILIKE :text ESCAPE '\\')", { text: `%${likePrefix(filter.query)}` });
        }
        return fetchPage(query, 'k', page, filter);
      },
      findGlobal: (accountId) => apiKeys.findOneBy({ accountId, system: true }),
      findCredential: credentialQuery(manager),
      findWithCreator: findWithCreatorQuery(manager, ApiKeyEntity),
    },
  };
}

/** The foundation store on the data source's pool. */
export function createFoundationStore(dataSource: DataSource): FoundationStore {
  return storeFor(dataSource.manager, dataSource);
}
