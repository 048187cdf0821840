// Polls Postgres for the shards this node owns: due reminders are delivered to
// their actors, and actors with commands left unprocessed (their bus message
// was lost while the shard moved) are woken to read them.
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import type { RuntimeLogger } from './runtime-logger';
import type { ShardHost } from './shard-host';

export interface ReminderPollerDeps {
  reminders: ActorReminderRepository;
  commands: ActorCommandRepository;
  host: ShardHost;
  pollMs: number;
  logger: RuntimeLogger;
}

const BATCH = 500;
// A delivery dropped by a stopping actor never calls done; retry it after this.
const IN_FLIGHT_TTL_MS = 30_000;
// A reminder whose handler keeps failing is retried with a doubling delay, up to this.
const MAX_RETRY_DELAY_MS = 5 * 60_000;

/** The reminder and stale-command poller of one node. */
export class ReminderPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Deliveries not yet handled, by key, with the time they were sent (forgotten after IN_FLIGHT_TTL_MS). */
  private readonly inFlight = new Map<string, number>();
  /** Reminders delivered and handled; one still due at the next poll failed. */
  private readonly handled = new Set<string>();
  /** Failed reminders: how often, and not before when to deliver again. */
  private readonly retries = new Map<string, { failures: number; notBefore: number }>();

  constructor(private readonly deps: ReminderPollerDeps) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.deps.pollMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
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
    const listed = new Set<string>();
    for (const due of await this.deps.reminders.listDue(shards, BATCH)) {
      const key = `r:${due.kind}:${due.actorId}:${due.name}:${due.dueAt.getTime()}`;
      listed.add(key);
      if (!this.reminderMayGo(key)) continue;
      const reminder = { name: due.name, dueAt: due.dueAt, payload: due.payload };
      this.deliverOnce(key, due.kind, due.actorId, due.shard, (done) => ({ type: 'reminder', reminder, done }), () => this.handled.add(key));
    }
    // Reminders no longer due were fired (deleted) or left this node: forget them.
    for (const key of this.retries.keys()) if (!listed.has(key)) this.retries.delete(key);
    for (const key of this.handled) if (!listed.has(key)) this.handled.delete(key);
    for (const actor of await this.deps.commands.listActorsWithPending(shards, Math.max(2 * this.deps.pollMs, 2000), BATCH)) {
      this.deliverOnce(`c:${actor.kind}:${actor.actorId}`, actor.kind, actor.actorId, actor.shard, (done) => ({ type: 'pending', done }));
    }
  }

  /**
   * False while a failing reminder waits out its backoff. A reminder handled
   * and still due has failed: its next delivery waits pollMs * 2^failures.
   */
  private reminderMayGo(key: string): boolean {
    if (this.handled.delete(key)) {
      const failures = (this.retries.get(key)?.failures ?? 0) + 1;
      this.retries.set(key, { failures, notBefore: Date.now() + Math.min(MAX_RETRY_DELAY_MS, this.deps.pollMs * 2 ** failures) });
    }
    const retry = this.retries.get(key);
    return retry === undefined || Date.now() >= retry.notBefore;
  }

  private deliverOnce(
    key: string,
    kind: string,
    id: string,
    shard: number,
    message: (done: () => void) => Parameters<ShardHost['deliver']>[3],
    onHandled?: () => void,
  ): void {
    const sentAt = this.inFlight.get(key);
    if (sentAt !== undefined && Date.now() - sentAt < IN_FLIGHT_TTL_MS) return;
    this.inFlight.set(key, Date.now());
    const done = () => {
      this.inFlight.delete(key);
      onHandled?.();
    };
    if (!this.deps.host.deliver(kind, id, shard, message(done))) this.inFlight.delete(key);
  }
}
