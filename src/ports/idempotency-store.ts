// Storage port for Idempotency-Key records (api-decisions.md: a repeat with the
// same key and body within 24 h returns the first response).
export interface IdempotencyRecord {
  requestHash: string;
  /** Null while the first request is still in progress. */
  status: number | null;
  body: unknown;
  createdAt: Date;
}

export interface IdempotencyStore {
  /** Claims the key; returns the existing record instead when there is one. */
  claim(principalKey: string, key: string, requestHash: string): Promise<IdempotencyRecord | null>;
  complete(principalKey: string, key: string, status: number, body: unknown): Promise<void>;
  /**
   * Gives the claim up (the request failed: a retry runs it again). Never
   * throws: a release the database refused (it went away) is kept and made
   * again until it succeeds, or a live node's claim would answer ABORTED to
   * every retry for as long as the node runs.
   */
  release(principalKey: string, key: string): Promise<void>;
}
