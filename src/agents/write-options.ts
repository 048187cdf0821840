// Helpers every write of the agents and tools areas shares: the options bundles
// pass (a store bound to their transaction, the owning bundle key), workspace
// scoping of looked-up records, and PATCH path resolution over nested specs.
import type { WorkspaceRef } from '../auth/workspace-access';
import { NotFoundError } from '../errors';
import type { AgentsStore } from '../ports/agents-store';
import { resolveUpdatePaths } from '../resource/update-mask';

export interface WriteOptions {
  /** A store bound to an open transaction (AgentsStore.transaction); default: the service's own. */
  store?: AgentsStore;
  /** Sets `metadata.bundleKey` (null clears it); undefined leaves it alone. */
  bundleKey?: string | null;
}

/**
 * The record when it belongs to the workspace; another workspace's (or
 * account's) record is NOT_FOUND, never revealed.
 * @throws NotFoundError
 */
export function inWorkspace<T extends { workspaceId: string; accountId: string }>(record: T | null, workspace: WorkspaceRef, kind: string, id: string): T {
  if (!record || record.workspaceId !== workspace.id || record.accountId !== workspace.accountId) throw NotFoundError.resource(kind, id);
  return record;
}

/**
 * PATCH paths: a mask may name leaves or their parent objects; with no mask,
 * only the leaves present in the body apply (merge patch), so a nested field
 * left out is never cleared.
 */
export function updatePaths(body: Record<string, unknown>, mask: string | undefined, leaves: readonly string[], parents: readonly string[] = []): string[] {
  if (mask !== undefined && mask.trim() !== '') return resolveUpdatePaths(body, mask, [...leaves, ...parents]);
  return resolveUpdatePaths(body, undefined, leaves);
}

/** The bundle key change for a write, when there is one. */
export function bundleKeyChange(options: WriteOptions): { bundleKey?: string | null } {
  return options.bundleKey === undefined ? {} : { bundleKey: options.bundleKey };
}
