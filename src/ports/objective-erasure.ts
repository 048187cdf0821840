// Erasure of objective content for tenant and subject erasure
// (api-decisions.md "Tenants, subjects, uploads"): the objectives' metadata
// stays, their content and events become `[erased]`, running ones stop.
//
// Objectives do not exist yet: until the objectives area implements this port,
// the composition root wires `objectivesNotYetStored`, a no-op, because there is
// no objective content to erase.

export interface ObjectiveErasure {
  /**
   * Erases the content of every objective (and its events) that names one of
   * these subjects, or the tenant, and stops those that are running.
   * Idempotent: erasing twice leaves the same result.
   */
  eraseObjectivesOf(target: { workspaceId: string; tenantId?: string; subjectIds: readonly string[] }): Promise<void>;
}

/** The no-op ObjectiveErasure used while the objectives table does not exist. */
export const objectivesNotYetStored: ObjectiveErasure = {
  async eraseObjectivesOf() {
    // No objectives table yet, so nothing refers to tenants or subjects.
  },
};
