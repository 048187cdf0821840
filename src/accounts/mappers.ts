// Record → wire mappings of the account area, written once and reused by every
// service that returns these shapes.
import { toAccountResourceMetadata, toResourceMetadata } from '../resource/metadata';
import type { Principal } from '../auth/principal';
import type { ApiKey, CallerProfile, Workspace, WorkspaceMember } from '../schemas/account.schema';
import type { Profile } from '../schemas/common.schema';
import type { ApiKeyRecord, ProfileRecord, WorkspaceMemberRecord, WorkspaceRecord } from './records';

export function toProfile(record: ProfileRecord): Profile {
  return {
    metadata: toAccountResourceMetadata(record),
    spec: {
      type: record.type,
      ...(record.email ? { email: record.email } : {}),
      name: record.displayName ?? record.name,
    },
    info: { admin: record.admin },
  };
}

/**
 * The caller's profile with its credential's reach: `info.admin` is the
 * caller's role (the global key's profile carries no admin flag of its own),
 * `workspaceIds` is left out for a caller spanning the whole account.
 */
export function toCallerProfile(record: ProfileRecord, principal: Principal, key: ApiKeyRecord | null): CallerProfile {
  const spansAccount = principal.global || (principal.kind === 'USER' && principal.admin);
  const workspaceIds = principal.workspaceId ? [principal.workspaceId] : principal.memberWorkspaceIds;
  return {
    metadata: toAccountResourceMetadata(record),
    spec: toProfile(record).spec,
    info: {
      admin: principal.admin,
      scopes: [...principal.scopes],
      ...(!spansAccount && workspaceIds ? { workspaceIds: [...workspaceIds] } : {}),
      ...(key ? { apiKey: { id: key.id, name: key.name, global: key.system } } : {}),
    },
  };
}

export function toWorkspace(record: WorkspaceRecord): Workspace {
  return {
    metadata: toAccountResourceMetadata(record),
    spec: record.description !== null ? { description: record.description } : {},
    status: record.status,
  };
}

export function toWorkspaceMember(member: WorkspaceMemberRecord, profile: ProfileRecord): WorkspaceMember {
  return {
    actorId: member.id,
    profileId: profile.id,
    addedAt: member.addedAt.toISOString(),
    ...(profile.email ? { email: profile.email } : {}),
    name: profile.displayName ?? profile.name,
  };
}

export interface ApiKeyExtras {
  token?: string;
  createdBy?: ProfileRecord | null;
  workspacesPreview?: Array<{ id: string; name: string }>;
  workspacesTotal?: number;
}

export function toApiKey(record: ApiKeyRecord, extras: ApiKeyExtras = {}): ApiKey {
  const metadata = record.workspaceId ? toResourceMetadata(record, record.workspaceId) : toAccountResourceMetadata(record);
  const info: NonNullable<ApiKey['info']> = {};
  if (extras.createdBy) info.createdBy = toProfile(extras.createdBy);
  if (extras.workspacesPreview) info.workspacesPreview = extras.workspacesPreview;
  if (extras.workspacesTotal !== undefined) info.workspacesTotal = extras.workspacesTotal;
  return {
    metadata,
    spec: {
      ...(extras.token ? { token: extras.token } : {}),
      ...(record.description !== null ? { description: record.description } : {}),
      permissions: record.permissions,
      system: record.system,
    },
    ...(Object.keys(info).length ? { info } : {}),
    state: record.state,
  };
}
