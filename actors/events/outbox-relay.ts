// The outbox relay of one node: publishes the unpublished events of the shards
// it owns and marks them published. Each actor's events leave one at a time in
// the order the actor wrote them; different actors publish side by side. An
// actor whose event fails to publish is set aside for a while (its later
// events wait, keeping its order) while the others go on: one bad subject
// never stalls the rest. JetStream being down delays events, never loses them:
// a failure of the whole publisher (PublisherUnavailableError: the connection
// is lost) sets no actor aside and ends the pass, logged once per outage, and
// the relay reads its backlog again as soon as the publisher says it is back
// (onAvailable), not at its next poll.
//
// Two ways in. The rows a turn of this node committed are handed over in
// memory (offer) and published without reading them back: reading the
// outbox table was most of the runtime's database time, because each read
// walks the index entries of rows already published until vacuum removes
// them. The table itself is read (the backlog) when a shard opens (its
// previous owner may have left events), while a publication has failed, on
// flush, and every pollMs as a safety net. While a backlog read is due,
// offered rows are dropped: they are committed, so the read finds them, in
// their place among the others. A row that keeps no payload of its own
// (OutgoingEvent.payloadProjected) is published from memory in the first
// way and with the payload its kind's read model holds in the second.
import type { StreamDeclaration } from '../../src/ports/actor-behavior';
import { PublisherUnavailableError, type EventPublisher } from '../../src/ports/event-publisher';
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
  /**
   * How long rows offered by a turn wait for the rows of the turns that
   * commit right after it, so that they go out in one publication. 0: each
   * offer starts a pass at once. @default 0
   */
  lingerMs?: number;
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
  /** Rows committed by this node's turns, in commit order, not yet taken by a pass. */
  private offered: OutboxEvent[] = [];
  /** The next pass reads the table instead of publishing what was offered. */
  private backlogDue = true;
  private prepared = false;
  private lastFailureLogAt = 0;
  /** The publisher's outage is logged (once, until it is back). */
  private unavailableLogged = false;
  private stopListening: (() => void) | undefined;
  /** Set while offered rows wait for their linger (OutboxRelayDeps.lingerMs). */
  private lingering: NodeJS.Timeout | undefined;
  /** Actors (persistence keys) whose last publication failed, until when they are left out. */
  private readonly pausedActors = new Map<string, number>();

  constructor(private readonly deps: OutboxRelayDeps) {}

  start(): void {
    this.timer = setInterval(() => this.readBacklog(), this.deps.pollMs);
    this.stopListening = this.deps.publisher.onAvailable?.(() => this.resume());
  }

  /** The publisher is back after an outage: every actor is tried again, the backlog at once. */
  resume(): void {
    this.pausedActors.clear();
    this.unavailableLogged = false;
    this.readBacklog();
  }

  /** Rows a turn of this node has just committed, in their write order. */
  offer(rows: readonly OutboxEvent[]): void {
    if (!this.backlogDue) this.offered.push(...rows);
    if (!this.deps.lingerMs) {
      this.nudge();
      return;
    }
    // A burst of turns (a second's schedule fires, their objectives) commits over a few milliseconds: one
    // publication for all of it, rather than one per batch competing with the burst's own writes.
    this.lingering ??= setTimeout(() => {
      this.lingering = undefined;
      this.nudge();
    }, this.deps.lingerMs);
  }

  /** Makes the next pass read the owned shards' outbox (a shard opened, or the safety poll). */
  readBacklog(): void {
    this.backlogDue = true;
    this.offered = [];
    this.nudge();
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
    this.stopListening?.();
    this.stopListening = undefined;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.again = false;
    await this.running;
  }

  /** Publishes until the outbox of the owned shards is empty or publication fails. */
  async flush(): Promise<void> {
    // Through the serialised passes: a pass of its own beside them could publish
    // a row offered during its read ahead of that actor's older rows.
    this.readBacklog();
    while (this.running) {
      await this.running;
      if (!this.backlogDue) break;
    }
  }

  /** Creates the declared streams once (retried by the next pass after a failure). */
  async prepare(): Promise<void> {
    if (this.prepared) return;
    await this.deps.publisher.prepare(this.deps.streams);
    this.prepared = true;
  }

  private async pass(): Promise<void> {
    const offered = this.offered;
    this.offered = [];
    try {
      await this.prepare();
      if (this.backlogDue || this.pausedActors.size) {
        // Cleared before the read: a shard opening during it asks for another.
        this.backlogDue = false;
        try {
          while (await this.publishBatch());
        } finally {
          await this.updateLag();
        }
      } else if (offered.length) {
        await this.publishOffered(offered);
      }
      this.unavailableLogged = false;
    } catch (error) {
      this.backlogDue = true;
      this.logFailure(error);
    }
  }

  /** The rows offered since the last pass, of the shards still owned. */
  private async publishOffered(rows: OutboxEvent[]): Promise<void> {
    const owned = new Set(this.deps.shards());
    const mine = rows.filter((row) => owned.has(row.shard));
    await this.publishRows(mine);
    runtimeMetrics.outboxLag.set(mine.length ? (Date.now() - mine[0].createdAt.getTime()) / 1000 : 0);
  }

  private excludedActors(): string[] {
    const now = Date.now();
    for (const [key, until] of this.pausedActors) if (until <= now) this.pausedActors.delete(key);
    return [...this.pausedActors.keys()];
  }

  /** @returns true when a full batch was published and more may wait. */
  private async publishBatch(): Promise<boolean> {
    const rows = await this.deps.outbox.listUnpublished(this.deps.shards(), BATCH, this.excludedActors());
    const lost = rows.filter((row) => row.payload === undefined);
    if (lost.length) {
      // The read model that kept their payloads no longer holds them: their content was deleted, and holding
      // them back would hold back their actors' later events for ever.
      this.deps.logger.error({ ids: lost.map((row) => row.id) }, 'outbox rows whose payload their read model no longer holds; marked published without publishing');
      await this.deps.outbox.markPublished(lost.map((row) => row.id));
    }
    const { published, failed } = await this.publishRows(lost.length ? rows.filter((row) => row.payload !== undefined) : rows);
    return rows.length === BATCH && (published + lost.length > 0 || !failed);
  }

  /**
   * Publishes rows in outbox order and marks what went out: in one write when
   * the publisher offers it, else actor by actor, setting aside an actor whose
   * event fails (its later rows wait for the backlog read).
   */
  private async publishRows(rows: OutboxEvent[]): Promise<{ published: number; failed: boolean }> {
    if (!rows.length) return { published: 0, failed: false };
    if (await this.publishFromOutbox(rows)) {
      runtimeMetrics.outboxPublished.inc(rows.length);
      return { published: rows.length, failed: false };
    }
    if (await this.publishAllAtOnce(rows)) {
      await this.deps.outbox.markPublished(rows.map((row) => row.id));
      runtimeMetrics.outboxPublished.inc(rows.length);
      return { published: rows.length, failed: false };
    }
    const byActor = new Map<string, OutboxEvent[]>();
    for (const row of rows) {
      const key = row.actorKey ?? row.id;
      byActor.set(key, [...(byActor.get(key) ?? []), row]);
    }
    const published: string[] = [];
    let failed = false;
    let unavailable: PublisherUnavailableError | undefined;
    await Promise.all(
      [...byActor].map(async ([key, events]) => {
        for (const event of events) {
          if (unavailable) return;
          try {
            await this.deps.publisher.publish({ id: event.id, subject: event.subject, data: JSON.stringify(event.payload), headers: event.headers });
            published.push(event.id);
          } catch (error) {
            failed = true;
            // The whole publisher is down: no actor's fault, and the others would fail alike.
            if (error instanceof PublisherUnavailableError) unavailable ??= error;
            else {
              this.pausedActors.set(key, Date.now() + FAILED_ACTOR_PAUSE_MS);
              this.logFailure(error);
            }
            return;
          }
        }
      }),
    );
    await this.deps.outbox.markPublished(published);
    runtimeMetrics.outboxPublished.inc(published.length);
    // Ends the pass; the backlog read after it finds what is left, in order.
    if (unavailable) throw unavailable;
    return { published: published.length, failed };
  }

  /**
   * The whole batch published and marked in one write, the payloads taken
   * from the outbox table (or given, for rows that keep none), when the
   * publisher offers it (the embedded log).
   * @returns false when it does not, or the write failed (as publishAllAtOnce)
   */
  private async publishFromOutbox(rows: OutboxEvent[]): Promise<boolean> {
    if (!this.deps.publisher.publishFromOutbox) return false;
    try {
      await this.deps.publisher.publishFromOutbox(rows.map((event) => ({
        id: event.id, subject: event.subject, payload: event.payload, headers: event.headers, ...(event.payloadProjected ? { payloadProjected: true } : {}),
      })));
      return true;
    } catch {
      return false;
    }
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
    if (error instanceof PublisherUnavailableError) {
      // One line per outage (the connection's own loss and return are reported by DependencyHealth).
      if (this.unavailableLogged) return;
      this.unavailableLogged = true;
      this.deps.logger.warn({ err: error }, 'event streams unreachable; the outbox is published once they are back');
      return;
    }
    if (Date.now() - this.lastFailureLogAt < 30_000) return;
    this.lastFailureLogAt = Date.now();
    this.deps.logger.warn({ err: error }, 'outbox publication failed; retrying');
  }
}
