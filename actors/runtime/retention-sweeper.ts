// The retention sweeper of one node: every `intervalMs` it purges, in batches,
// the journal entries covered by a snapshot, the published outbox rows and the
// processed durable commands that are older than the retention window (the
// command dedupe window: a journal entry is how a retried command is
// recognised, so it must outlive the window), so the database stays the size
// of one window of traffic however long the cluster runs.
//
// One node at a time: every batch is a transaction that first takes
// pg_try_advisory_xact_lock(RETENTION_LOCK_KEY). A node that finds the lock
// taken ends its sweep at once (another node is sweeping now) and tries again
// at its next interval. The deletes themselves would be safe to run
// concurrently (each deletes only rows that can never be needed again, and a
// row deleted twice is deleted once), but two sweeps would both walk every
// snapshot and queue on each other's row locks for nothing. A transaction
// lock rather than a session lock: the sweep holds no connection between
// batches (it never pins a pool connection while it waits its turn), and a
// node that dies mid-batch frees the lock with its transaction. Two nodes may
// still alternate batches when one starts between the other's batches;
// harmless, as above.
import {
  JOURNAL_PURGE_START,
  type ActorRetentionRepository,
  type JournalPurgeCursor,
} from '../../persistence/runtime/actor-retention.repository';
import { PeriodicSweep, yieldToOthers } from './periodic-sweep';
import type { RuntimeLogger } from './runtime-logger';

export interface RetentionSweeperDeps {
  retention: ActorRetentionRepository;
  /** Age past which rows may go: the command dedupe window. */
  windowMs: number;
  /** Most rows (and, for the journal, snapshots visited) per batch. */
  batchSize: number;
  intervalMs: number;
  logger: RuntimeLogger;
}

/** Rows deleted by one sweep, per table. */
export interface SweepCounts {
  journal: number;
  outbox: number;
  commands: number;
}

/** Purges the runtime's tables of what the retention window lets go. */
export class RetentionSweeper extends PeriodicSweep<SweepCounts> {
  constructor(private readonly deps: RetentionSweeperDeps) {
    super({ intervalMs: deps.intervalMs, logger: deps.logger, name: 'retention sweep' });
  }

  protected logFieldsOf(counts: SweepCounts): Record<string, unknown> | null {
    return counts.journal + counts.outbox + counts.commands > 0 ? { ...counts } : null;
  }

  /** Batches until each table has nothing left to purge, another node holds the retention lock, or `stop()` was called. */
  protected async sweep(): Promise<SweepCounts> {
    const counts: SweepCounts = { journal: 0, outbox: 0, commands: 0 };
    const { retention, windowMs, batchSize } = this.deps;
    if (!(await this.sweepJournal(counts))) return counts;
    for (const [table, purge] of [
      ['outbox', () => retention.purgeOutbox(windowMs, batchSize)],
      ['commands', () => retention.purgeCommands(windowMs, batchSize)],
    ] as const) {
      for (;;) {
        if (this.stopping) return counts;
        const batch = await purge();
        if (batch.busy) return counts;
        counts[table] += batch.deleted;
        if (batch.deleted < batchSize) break;
        await yieldToOthers();
      }
    }
    return counts;
  }

  /** Walks every snapshot once; false when the sweep must end here (stopping, or another node sweeps). */
  private async sweepJournal(counts: SweepCounts): Promise<boolean> {
    let cursor: JournalPurgeCursor | null = JOURNAL_PURGE_START;
    while (cursor) {
      if (this.stopping) return false;
      const batch = await this.deps.retention.purgeJournal(this.deps.windowMs, this.deps.batchSize, cursor);
      if (batch.busy) return false;
      counts.journal += batch.deleted;
      cursor = batch.next;
      if (cursor) await yieldToOthers();
    }
    return true;
  }
}
