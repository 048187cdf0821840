// Shard leases in process, for embedded mode (PGlite cannot hold real advisory
// locks: all its connections share one session). Providers of one process share
// a table per scope, so two runtimes in one process still exclude each other.
import type { LeaseHolder, LeaseLoss, LeaseProvider } from '../../src/ports/leases';

const tables = new Map<string, Map<number, MemoryLeaseProvider>>();

/** In-process leases; never lost while the process lives. */
export class MemoryLeaseProvider implements LeaseProvider {
  private readonly holders: Map<number, MemoryLeaseProvider>;
  private connected = false;

  /** @param scope leases of providers with the same scope exclude each other (e.g. the database URL). */
  constructor(scope = 'default') {
    this.holders = tables.get(scope) ?? new Map();
    tables.set(scope, this.holders);
  }

  get healthy(): boolean {
    return this.connected;
  }

  async connect(): Promise<void> {
    this.connected = true;
  }

  async tryAcquire(shards: readonly number[]): Promise<number[]> {
    if (!this.connected) throw new Error('lease provider not connected');
    const acquired: number[] = [];
    for (const shard of shards) {
      const holder = this.holders.get(shard);
      if (holder && holder !== this) continue;
      this.holders.set(shard, this);
      acquired.push(shard);
    }
    return acquired;
  }

  async release(shards: readonly number[]): Promise<void> {
    for (const shard of shards) if (this.holders.get(shard) === this) this.holders.delete(shard);
  }

  holder(): LeaseHolder | undefined {
    return undefined;
  }

  onLost(_listener: (loss: LeaseLoss) => void): void {
    // An in-process lease cannot be lost while the process lives.
  }

  async close(): Promise<void> {
    for (const [shard, holder] of this.holders) if (holder === this) this.holders.delete(shard);
    this.connected = false;
  }
}
