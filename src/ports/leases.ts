// The shard lease port: exclusive, expiring ownership of shards by one node.
// PgLeaseProvider (advisory locks on a dedicated connection) and
// MemoryLeaseProvider (one in-process owner) implement it.

/** Why a lease provider gave up its leases. */
export interface LeaseLoss {
  reason: string;
}

/**
 * Identifies the session holding the leases to the database, so that a claim
 * can check in the same statement that the lease is still held (a Postgres
 * advisory lock `(namespace, shard)` granted to backend `sessionPid`).
 */
export interface LeaseHolder {
  namespace: number;
  sessionPid: number;
}

/**
 * Exclusive shard leases. A lease lasts while the provider's session is alive;
 * the provider heartbeats it and reports a loss *before* the lease timeout
 * passes, so the holder can stop using it before anyone else may acquire it.
 */
export interface LeaseProvider {
  /** Opens the session. Call once before anything else. */
  connect(): Promise<void>;
  /**
   * Tries to acquire the given shards without waiting.
   * @returns the shards acquired (a subset of `shards`).
   */
  tryAcquire(shards: readonly number[]): Promise<number[]>;
  /** Releases shards held by this provider (others are ignored). */
  release(shards: readonly number[]): Promise<void>;
  /** Registers the callback run once when the session is lost; all leases are gone then. */
  onLost(listener: (loss: LeaseLoss) => void): void;
  /**
   * The current session, for claims that must fail once its leases are lost;
   * undefined when leases are not database locks (in process, never lost).
   */
  holder(): LeaseHolder | undefined;
  /** True while the session is healthy. */
  readonly healthy: boolean;
  /** Releases everything and closes the session. */
  close(): Promise<void>;
}
