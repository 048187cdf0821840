// The outbox relay of one node: publishes the unpublished events of the shards
// it owns and marks them published. Each actor's events leave one at a time in
// the order the actor wrote them; different actors publish side by side. An
// actor whose event fails to publish is set aside for a while (its later
// events wait, keeping its order) while the others go on: one bad subject
// never stalls the rest. JetStream being down delays events, never loses them.
import type { StreamDeclaration } from '../../src/ports/actor-behavior';
import type { EventPublisher } from '../../src/ports/event-publisher';
import type { ActorOutboxRepository, OutboxEvent } from '../../persistence/runtime/actor-outbox.repository';
import { runtimeMetrics } from '../metrics';
import type { RuntimeLogger } from '../runtime/runtime-logger';

export interface OutboxRelayDeps {
  outbox: ActorOutboxRepository;
  publisher: EventPublisher;
  /** Streams to create before the first publication. */
  streams: StreamDeclaration[];
  /** The shards whose events this node publishes (the ones it owns). */
  shards: () => number[];
  pollMs: number;
  logger: RuntimeLogger;
}

const BATCH = 500;
/** How long an actor whose publication failed is left out before it is tried again. */
const FAILED_ACTOR_PAUSE_MS = 2000;

/** Publishes outbox rows through an EventPublisher. */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private prepared = false;
  private lastFailureLogAt = 0;
  /** Actors (persistence keys) whose last publication failed, until when they are left out. */
  private readonly pausedActors = new Map<string, number>();

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

  /** Creates the declared streams once (retried by the next pass after a failure). */
  async prepare(): Promise<void> {
    if (this.prepared) return;
    await this.deps.publisher.prepare(this.deps.streams);
    this.prepared = true;
  }

  private async pass(): Promise<void> {
    try {
      await this.prepare();
      while (await this.publishBatch());
    } catch (error) {
      this.logFailure(error);
    }
    await this.updateLag();
  }

  private excludedActors(): string[] {
    const now = Date.now();
    for (const [key, until] of this.pausedActors) if (until <= now) this.pausedActors.delete(key);
    return [...this.pausedActors.keys()];
  }

  /** @returns true when a full batch was published and more may wait. */
  private async publishBatch(): Promise<boolean> {
    const rows = await this.deps.outbox.listUnpublished(this.deps.shards(), BATCH, this.excludedActors());
    const byActor = new Map<string, OutboxEvent[]>();
    for (const row of rows) {
      const key = row.actorKey ?? row.id;
      byActor.set(key, [...(byActor.get(key) ?? []), row]);
    }
    const published: string[] = [];
    let failed = false;
    if (rows.length && (await this.publishAllAtOnce(rows))) {
      await this.deps.outbox.markPublished(rows.map((row) => row.id));
      runtimeMetrics.outboxPublished.inc(rows.length);
      return rows.length === BATCH;
    }
    await Promise.all(
      [...byActor].map(async ([key, events]) => {
        for (const event of events) {
          try {
            await this.deps.publisher.publish({ id: event.id, subject: event.subject, data: JSON.stringify(event.payload), headers: event.headers });
            published.push(event.id);
          } catch (error) {
            failed = true;
            this.pausedActors.set(key, Date.now() + FAILED_ACTOR_PAUSE_MS);
            this.logFailure(error);
            return;
          }
        }
      }),
    );
    await this.deps.outbox.markPublished(published);
    runtimeMetrics.outboxPublished.inc(published.length);
    return rows.length === BATCH && (published.length > 0 || !failed);
  }

  /**
   * The whole batch in one write when the publisher offers it (rows are in
   * outbox order, so each actor's events keep theirs).
   * @returns false when it does not, or the write failed: then each actor publishes on its own
   */
  private async publishAllAtOnce(rows: OutboxEvent[]): Promise<boolean> {
    if (!this.deps.publisher.publishMany) return false;
    try {
      await this.deps.publisher.publishMany(rows.map((event) => ({ id: event.id, subject: event.subject, data: JSON.stringify(event.payload), headers: event.headers })));
      return true;
    } catch {
      // The per-actor path below finds and sets aside the actor whose event fails, and logs it.
      return false;
    }
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
