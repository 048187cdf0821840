// The widget session sweeper of one node: every `intervalMs` it deletes, in
// batches, the widget sessions whose expiry has passed (their tokens are
// refused already; this only keeps the table small). It runs on every node
// and stops with the node's runtime (startNodeConsumers starts it). Nodes
// sweeping at once skip each other's rows (FOR UPDATE SKIP LOCKED).
import { PeriodicSweep, yieldToOthers } from '../runtime/periodic-sweep';
import type { RuntimeLogger } from '../runtime/runtime-logger';

/** Sessions deleted per batch. */
export const WIDGET_SESSION_SWEEP_BATCH_SIZE = 500;
/** How often a node sweeps. */
export const WIDGET_SESSION_SWEEP_INTERVAL_MS = 5 * 60_000;

export interface WidgetSessionSweeperDeps {
  sessions: { deleteExpired(limit: number): Promise<number> };
  logger: RuntimeLogger;
  /** @default WIDGET_SESSION_SWEEP_INTERVAL_MS */
  intervalMs?: number;
  /** @default WIDGET_SESSION_SWEEP_BATCH_SIZE */
  batchSize?: number;
}

/** Deletes expired widget sessions, periodically. */
export class WidgetSessionSweeper extends PeriodicSweep<number> {
  constructor(private readonly deps: WidgetSessionSweeperDeps) {
    super({ intervalMs: deps.intervalMs ?? WIDGET_SESSION_SWEEP_INTERVAL_MS, logger: deps.logger, name: 'widget session sweep' });
  }

  protected logFieldsOf(deleted: number): Record<string, unknown> | null {
    return deleted > 0 ? { deleted } : null;
  }

  /** @returns the sessions deleted */
  protected async sweep(): Promise<number> {
    const batchSize = this.deps.batchSize ?? WIDGET_SESSION_SWEEP_BATCH_SIZE;
    let deleted = 0;
    while (!this.stopping) {
      const batch = await this.deps.sessions.deleteExpired(batchSize);
      deleted += batch;
      if (batch < batchSize) break;
      await yieldToOthers();
    }
    return deleted;
  }
}
