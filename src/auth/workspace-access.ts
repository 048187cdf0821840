// Which workspace a request acts on, and whether the principal may act there.
// Rules (api-decisions.md): another account's workspace is NOT_FOUND; a
// workspace key on another workspace, or a user who is not a member, is
// PERMISSION_DENIED; a workspace that is not ENABLED (archived, or disabled
// by an operator) is PERMISSION_DENIED on every scoped request, the widget
// host's included; flat paths use the key's workspace or X-Workspace-Id.
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
  checkWorkspaceActive(workspace);
  return workspace;
}

/**
 * Refuses a workspace that is not ENABLED: ARCHIVED (DELETE of the
 * workspace) and DISABLED (no API call sets it; an operator may, in the
 * database) alike. The one rule for API requests and widget sessions.
 * @throws PermissionDeniedError `workspace <id> is archived` or `… is disabled`
 */
export function checkWorkspaceActive(workspace: Pick<WorkspaceRef, 'id' | 'status'>): void {
  if (workspace.status === WorkspaceStatus.ENABLED) return;
  const state = workspace.status === WorkspaceStatus.DISABLED ? 'disabled' : 'archived';
  throw new PermissionDeniedError(`workspace ${workspace.id} is ${state}`);
}
