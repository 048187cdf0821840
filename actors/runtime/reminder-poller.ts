// Polls Postgres for the shards this node owns: due reminders are delivered to
// their actors, and actors with stored commands left unprocessed (their bus
// message was lost while the shard moved) are woken to apply them. Only kinds
// this node hosts are read, and a failing reminder waits for its next attempt
// time in the database, so neither can fill a poll's batch ahead of due work.
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import type { RuntimeLogger } from './runtime-logger';
import type { ShardHost } from './shard-host';

export interface ReminderPollerDeps {
  reminders: ActorReminderRepository;
  commands: ActorCommandRepository;
  host: ShardHost;
  kinds: string[];
  pollMs: number;
  logger: RuntimeLogger;
}

const BATCH = 500;
// A delivery dropped by a stopping actor never calls done; retry it after this.
const IN_FLIGHT_TTL_MS = 30_000;

/** The reminder and stale-command poller of one node. */
export class ReminderPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Deliveries not yet handled, by key, with the time they were sent (forgotten after IN_FLIGHT_TTL_MS). */
  private readonly inFlight = new Map<string, number>();
  /** Reminders due before the next poll, timed here so they fire on time, by delivery key. */
  private readonly timed = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: ReminderPollerDeps) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.deps.pollMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const timer of this.timed.values()) clearTimeout(timer);
    this.timed.clear();
    await this.running;
  }

  /** Runs one poll unless one is in progress. */
  tick(): void {
    if (this.running) return;
    this.running = this.poll()
      .catch((error) => this.deps.logger.warn({ err: error }, 'reminder poll failed'))
      .finally(() => (this.running = undefined));
  }

  private async poll(): Promise<void> {
    const shards = this.deps.host.owned();
    // The waits are counted on the database's clock from the poll's statement, which ran about when it
    // was asked: the time the answer took to arrive and be read (a busy event loop) is taken off them.
    const askedAt = performance.now();
    // Due before the next poll: timed here, so a reminder fires on time rather than up to a poll late.
    for (const due of await this.deps.reminders.listDue(shards, this.deps.kinds, BATCH, this.deps.pollMs)) {
      const key = `r:${due.kind}:${due.actorId}:${due.name}:${due.dueAt.getTime()}:${due.attempts}`;
      const reminder = { name: due.name, dueAt: due.dueAt, payload: due.payload, attempts: due.attempts };
      const deliver = () => this.deliverOnce(key, due.kind, due.actorId, due.shard, (done) => ({ type: 'reminder', reminder, done }));
      const remainingMs = due.waitMs - (performance.now() - askedAt);
      if (remainingMs <= 0) deliver();
      else if (!this.timed.has(key)) {
        // A reminder moved or cancelled meanwhile is recognised as stale by its actor; a shard given up refuses the delivery.
        // Rounded up, plus one: the loop's timers count whole milliseconds and can run one early.
        this.timed.set(key, setTimeout(() => {
          this.timed.delete(key);
          deliver();
        }, Math.ceil(remainingMs) + 1));
      }
    }
    for (const actor of await this.deps.commands.listActorsWithPending(shards, this.deps.kinds, Math.max(2 * this.deps.pollMs, 2000), BATCH)) {
      this.deliverOnce(`c:${actor.kind}:${actor.actorId}`, actor.kind, actor.actorId, actor.shard, (done) => ({ type: 'stored', done }));
    }
  }

  private deliverOnce(key: string, kind: string, id: string, shard: number, message: (done: () => void) => Parameters<ShardHost['deliver']>[3]): void {
    const sentAt = this.inFlight.get(key);
    if (sentAt !== undefined && Date.now() - sentAt < IN_FLIGHT_TTL_MS) return;
    this.inFlight.set(key, Date.now());
    const done = () => this.inFlight.delete(key);
    if (!this.deps.host.deliver(kind, id, shard, message(done))) this.inFlight.delete(key);
  }
}
