// The outbox relay of one node: publishes the unpublished events of the shards
// it owns, oldest first, and marks them published. A publish failure stops the
// pass and is retried later: JetStream being down delays events, never loses
// them. Woken by every write, and by a timer.
import type { EventPublisher } from '../../src/ports/event-publisher';
import type { ActorOutboxRepository } from '../../persistence/runtime/actor-outbox.repository';
import { runtimeMetrics } from '../metrics';
import type { RuntimeLogger } from '../runtime/runtime-logger';

export interface OutboxRelayDeps {
  outbox: ActorOutboxRepository;
  publisher: EventPublisher;
  /** The shards whose events this node publishes (the ones it owns). */
  shards: () => number[];
  pollMs: number;
  logger: RuntimeLogger;
}

const BATCH = 200;

/** Publishes outbox rows through an EventPublisher. */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private prepared = false;
  private lastFailureLogAt = 0;

  constructor(private readonly deps: OutboxRelayDeps) {}

  start(): void {
    this.timer = setInterval(() => this.nudge(), this.deps.pollMs);
  }

  /** Runs a pass now, or right after the current one. */
  nudge(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.nudge();
      }
    });
  }

  /** Waits for the pass in progress and stops the timer. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.again = false;
    await this.running;
  }

  /** Publishes until the outbox of the owned shards is empty or publication fails. */
  async flush(): Promise<void> {
    await this.running;
    await this.pass();
  }

  private async pass(): Promise<void> {
    try {
      if (!this.prepared) await this.deps.publisher.prepare();
      this.prepared = true;
      while (await this.publishBatch());
    } catch (error) {
      this.logFailure(error);
    }
    await this.updateLag();
  }

  private async publishBatch(): Promise<boolean> {
    const rows = await this.deps.outbox.listUnpublished(this.deps.shards(), BATCH);
    const published: string[] = [];
    try {
      for (const row of rows) {
        await this.deps.publisher.publish({ id: row.id, subject: row.subject, data: JSON.stringify(row.payload) });
        published.push(row.id);
      }
    } finally {
      await this.deps.outbox.markPublished(published);
      runtimeMetrics.outboxPublished.inc(published.length);
    }
    return rows.length === BATCH;
  }

  private async updateLag(): Promise<void> {
    const lag = await this.deps.outbox.lagSeconds(this.deps.shards()).catch(() => undefined);
    if (lag !== undefined) runtimeMetrics.outboxLag.set(lag);
  }

  private logFailure(error: unknown): void {
    if (Date.now() - this.lastFailureLogAt < 30_000) return;
    this.lastFailureLogAt = Date.now();
    this.deps.logger.warn({ err: error }, 'outbox publication failed; retrying');
  }
}
