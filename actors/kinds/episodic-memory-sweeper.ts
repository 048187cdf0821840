// The episodic memory sweeper of one node (issue 25 item 3): every
// `intervalMs` it deletes, in batches, the episodic layers whose `expiresAt`
// has passed, with their entries. It runs on every node and stops with the
// node's runtime (startNodeConsumers starts it).
//
// One node at a time: each batch is a transaction that first takes a
// transaction-level advisory lock (MemoryStore.layers.deleteExpiredEpisodic);
// a node that finds it taken ends its sweep (another node sweeps now) and
// tries again at its next interval. A layer in use is never lost: the delete
// checks the expiry again on the row it deletes, and skips a row a writer
// holds locked while it refreshes it.
import type { EpisodicSweepBatch } from '../../src/memory/episodic-memory';
import type { RuntimeLogger } from '../runtime/runtime-logger';

/** Layers (each with its entries) deleted per batch. */
export const EPISODIC_SWEEP_BATCH_SIZE = 100;

export interface EpisodicMemorySweeperDeps {
  episodic: { deleteExpired(limit: number): Promise<EpisodicSweepBatch> };
  intervalMs: number;
  logger: RuntimeLogger;
  /** @default EPISODIC_SWEEP_BATCH_SIZE */
  batchSize?: number;
}

// Lets requests waiting for a pool connection go first between two batches.
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Deletes expired episodic memory layers, periodically. */
export class EpisodicMemorySweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;
  private stopping = false;

  constructor(private readonly deps: EpisodicMemorySweeperDeps) {}

  /** Sweeps every `intervalMs` (the first sweep one interval after start). */
  start(): void {
    this.stopping = false;
    this.timer ??= setInterval(() => this.tick(), this.deps.intervalMs);
  }

  /** Stops the timer and waits for the sweep in progress, which ends after its current batch. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }

  /**
   * One sweep: batches until fewer than a batch expired, another node holds
   * the lock, or `stop()` was called. A sweep in progress is joined.
   * @returns the layers deleted
   * @throws the database error that ended the sweep (the timer logs it and sweeps again next interval)
   */
  sweepOnce(): Promise<number> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private tick(): void {
    if (this.sweeping) return;
    this.sweepOnce().then(
      (deleted) => {
        if (deleted > 0) this.deps.logger.debug({ deleted }, 'episodic memory sweep');
      },
      (error: unknown) => this.deps.logger.warn({ err: error }, 'episodic memory sweep failed; retrying at the next interval'),
    );
  }

  private async sweep(): Promise<number> {
    const batchSize = this.deps.batchSize ?? EPISODIC_SWEEP_BATCH_SIZE;
    let deleted = 0;
    while (!this.stopping) {
      const batch = await this.deps.episodic.deleteExpired(batchSize);
      deleted += batch.deleted;
      if (batch.busy || batch.deleted < batchSize) break;
      await yieldToOthers();
    }
    return deleted;
  }
}
