// Storage port of the per-workspace data keys (envelope encryption): rows hold
// only the wrapped key. persistence/repositories/data-key.store.ts implements it.

export interface DataKeyStore {
  /** The workspace's wrapped data key, or null when it has none yet. */
  findWrapped(workspaceId: string): Promise<string | null>;
  /**
   * Stores a wrapped data key unless the workspace already has one
   * (INSERT ... ON CONFLICT DO NOTHING), so concurrent first uses agree.
   */
  insertIfAbsent(workspaceId: string, wrapped: string): Promise<void>;
}
