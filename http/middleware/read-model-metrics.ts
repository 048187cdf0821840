// Gauges read from the objectives read model when /metrics is scraped: the
// objectives not in a final state, by status, and the tool calls awaiting
// approval. An objective waiting for a person is passivated (no node holds it
// in memory) and may wait for days across restarts, so no node's own state
// can count them: Postgres does, with one query over the partial index of
// open objectives (ObjectivesStore.openCounts). The numbers are the
// cluster's, the same on every node: aggregate them with max(), not sum().
// One query per node at most every REFRESH_MS, however many scrapers ask; a
// scrape while the database is away still answers, without these two series
// (absent rather than stale).
import { Gauge, register } from 'prom-client';
import type { Logger } from 'pino';
import { ObjectiveStatus } from '../../src/objectives/objective-state';
import type { OpenObjectiveCounts } from '../../src/ports/objectives-store';
import { withTimeout } from '../../src/with-timeout';

/** Scrapes closer together than this share one read. */
export const OPEN_OBJECTIVES_REFRESH_MS = 5_000;
/** A read slower than this leaves the scrape without the two series. */
const READ_TIMEOUT_MS = 2_000;

const OPEN_STATUS_LABELS: Array<[status: ObjectiveStatus, label: string]> = [
  [ObjectiveStatus.PENDING, 'pending'],
  [ObjectiveStatus.RUNNING, 'running'],
  [ObjectiveStatus.AWAITING_APPROVAL, 'awaiting_approval'],
];

function gauge<T extends string>(name: string, help: string, labelNames: T[] = []): Gauge<T> {
  return (register.getSingleMetric(name) as Gauge<T> | undefined) ?? new Gauge({ name, help, labelNames });
}

const openObjectives = gauge('agentrt_objectives_open', 'Objectives not in a final state, by status, in the whole cluster (read from the database)', ['status']);
const awaitingApproval = gauge('agentrt_tool_calls_awaiting_approval', 'Tool calls waiting for an approval or a denial, in the whole cluster (read from the database)');

export interface OpenObjectiveGaugesOptions {
  /** The read model's counts (ObjectivesStore.openCounts). */
  read: () => Promise<OpenObjectiveCounts>;
  logger: Logger;
  /** @default OPEN_OBJECTIVES_REFRESH_MS */
  refreshMs?: number;
}

/** Brings the two gauges up to date before a scrape: resolves once they are set (or dropped, when the read failed). */
export function openObjectiveGauges({ read, logger, refreshMs = OPEN_OBJECTIVES_REFRESH_MS }: OpenObjectiveGaugesOptions): () => Promise<void> {
  let readAt = -Infinity;
  let reading: Promise<void> | undefined;
  const refresh = async () => {
    try {
      const counts = await withTimeout(read(), READ_TIMEOUT_MS);
      for (const [status, label] of OPEN_STATUS_LABELS) openObjectives.set({ status: label }, counts.byStatus[status] ?? 0);
      awaitingApproval.set(counts.toolCallsAwaitingApproval);
    } catch (error) {
      // Absent, not stale nor zero: reset() would leave the unlabelled gauge at 0.
      openObjectives.reset();
      awaitingApproval.remove();
      logger.debug({ err: error }, 'metrics: the open objectives could not be counted; this scrape goes without them');
    }
  };
  return () => {
    if (reading) return reading;
    if (performance.now() - readAt < refreshMs) return Promise.resolve();
    readAt = performance.now();
    reading = refresh().finally(() => {
      reading = undefined;
    });
    return reading;
  };
}
