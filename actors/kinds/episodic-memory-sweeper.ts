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
import { PeriodicSweep, yieldToOthers } from '../runtime/periodic-sweep';
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

/** Deletes expired episodic memory layers, periodically. */
export class EpisodicMemorySweeper extends PeriodicSweep<number> {
  constructor(private readonly deps: EpisodicMemorySweeperDeps) {
    super({ intervalMs: deps.intervalMs, logger: deps.logger, name: 'episodic memory sweep' });
  }

  protected logFieldsOf(deleted: number): Record<string, unknown> | null {
    return deleted > 0 ? { deleted } : null;
  }

  /** @returns the layers deleted */
  protected async sweep(): Promise<number> {
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
