// Which workspace a request acts on, and whether the principal may act there.
// Rules (api-decisions.md): another account's workspace is NOT_FOUND; a
// workspace key on another workspace, or a user who is not a member, is
// PERMISSION_DENIED; an archived workspace is PERMISSION_DENIED on every
// scoped request; flat paths use the key's workspace or X-Workspace-Id.
import { InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import type { Principal } from './principal';

export const WorkspaceStatus = {
  ENABLED: 'STATUS_ENABLED',
  DISABLED: 'STATUS_DISABLED',
  ARCHIVED: 'STATUS_ARCHIVED',
} as const;
export type WorkspaceStatus = (typeof WorkspaceStatus)[keyof typeof WorkspaceStatus];

/** The little of a workspace that access checks and handlers need. */
export interface WorkspaceRef {
  id: string;
  accountId: string;
  name: string;
  status: WorkspaceStatus;
}

export const WORKSPACE_HEADER = 'x-workspace-id';

/**
 * The workspace id a flat-path request names: the key's own workspace, or the
 * `X-Workspace-Id` header for the global key and users.
 * @throws InvalidArgumentError when the global key or a user sends no header
 */
export function flatWorkspaceId(principal: Principal, header: string | undefined): string {
  if (principal.workspaceId) {
    if (header && header !== principal.workspaceId) {
      throw new PermissionDeniedError('this API key belongs to another workspace');
    }
    return principal.workspaceId;
  }
  if (!header) throw InvalidArgumentError.forField('X-Workspace-Id', 'header is required for this principal on a flat path');
  return header;
}

/**
 * Checks that the principal may act in `workspace` (loaded by `requestedId`).
 * @returns the workspace, when access is allowed
 */
export function authorizeWorkspace(principal: Principal, requestedId: string, workspace: WorkspaceRef | null): WorkspaceRef {
  if (!workspace || workspace.accountId !== principal.accountId) {
    throw NotFoundError.resource('workspace', requestedId);
  }
  if (principal.workspaceId && principal.workspaceId !== workspace.id) {
    throw new PermissionDeniedError('this API key belongs to another workspace');
  }
  if (principal.kind === 'USER' && !principal.admin && !principal.memberWorkspaceIds?.includes(workspace.id)) {
    throw new PermissionDeniedError(`you are not a member of workspace ${workspace.id}`);
  }
  if (workspace.status === WorkspaceStatus.ARCHIVED) {
    throw new PermissionDeniedError(`workspace ${workspace.id} is archived`);
  }
  return workspace;
}
