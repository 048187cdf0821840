// The timer the node's sweepers share (the retention sweeper, the episodic
// memory sweeper): one sweep every interval (the first one interval after
// start), a sweep already running joined rather than doubled, `stop()`
// ending the sweep after its current batch, and a failed sweep logged and
// tried again at the next interval. A subclass says what one sweep does and
// what of its result is worth a log line.
import type { RuntimeLogger } from './runtime-logger';

/** Lets the requests and turns waiting for a pool connection go first between two batches. */
export const yieldToOthers = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export interface PeriodicSweepSchedule {
  intervalMs: number;
  logger: RuntimeLogger;
  /** The log lines' words: `<name>` after a sweep that did something, `<name> failed; …` after one that threw. */
  name: string;
}

export abstract class PeriodicSweep<Result> {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<Result> | undefined;
  /** Set by `stop()`: a sweep checks it between batches and ends. */
  protected stopping = false;

  constructor(private readonly schedule: PeriodicSweepSchedule) {}

  /** Sweeps every `intervalMs` (the first sweep one interval after start). */
  start(): void {
    this.stopping = false;
    this.timer ??= setInterval(() => this.tick(), this.schedule.intervalMs);
  }

  /** Stops the timer and waits for the sweep in progress, which ends after its current batch. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
    this.stopping = false;
  }

  /**
   * One sweep now; a sweep already in progress is joined.
   * @throws the database error that ended the sweep (the timer logs it and sweeps again next interval)
   */
  sweepOnce(): Promise<Result> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** One sweep: batches until there is nothing left, another node sweeps, or `stopping`. */
  protected abstract sweep(): Promise<Result>;

  /** What a sweep's result puts in its debug line, or null for a sweep that did nothing. */
  protected abstract logFieldsOf(result: Result): Record<string, unknown> | null;

  private tick(): void {
    if (this.sweeping) return;
    const { logger, name } = this.schedule;
    this.sweepOnce().then(
      (result) => {
        const fields = this.logFieldsOf(result);
        if (fields) logger.debug(fields, name);
      },
      (error: unknown) => logger.warn({ err: error }, `${name} failed; retrying at the next interval`),
    );
  }
}
