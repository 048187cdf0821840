// The event streams of embedded mode (no NATS), kept in the node's database:
// the EventPublisher (an event is stored in the declared stream whose subjects
// match, once per id) and the EventConsumers (durable consumers with the
// JetStream guarantees of src/ports/event-consumer.ts) in one object, plus
// in-process listeners for live views (SSE). Consumers poll their table at a
// modest interval; a publication, an ack or a nak in this process wakes them
// at once, and a consumer whose next message is due later sleeps until then.
import { resolveConsumerSpec, type ResolvedConsumerSpec } from '../../src/events/consumer-spec';
import { mergeStreamDeclarations } from '../../src/events/stream-declarations';
import { subjectMatches, subjectPatternRegex } from '../../src/events/subject-pattern';
import type { ConsumedEvent, ConsumerHandle, DurableConsumerSpec, EventConsumers } from '../../src/ports/event-consumer';
import { NoStreamForSubjectError, type EventPublisher, type OutboxPublication, type PublishedEvent, type StreamDeclaration } from '../../src/ports/event-publisher';
import { EmbeddedEventLogRepository, type ClaimedMessage } from '../../persistence/runtime/embedded-event-log.repository';
import type { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import type { RuntimeLogger } from '../runtime/runtime-logger';

export interface EmbeddedEventLogOptions {
  logger: RuntimeLogger;
  /** Longest sleep of an idle consumer: bounds how late it sees messages stored by another process. @default 1000 */
  pollIntervalMs?: number;
  /** Period of the expiry of messages past their stream's maximum age. @default 60000 */
  expiryIntervalMs?: number;
}

/** Messages a consumer claims at once: each starts its ack wait when claimed, so a batch stays small. */
const MAX_CLAIM = 16;
const FAILURE_PAUSE_MIN_MS = 100;
/** Messages expired per statement: each its own short statement, so appends and claims go on between them. */
const EXPIRY_BATCH = 1000;
const FAILURE_PAUSE_MAX_MS = 5000;

type MessageHandler = (event: ConsumedEvent) => Promise<void>;

/** Streams and durable consumers in the database, for a node without NATS. */
export class EmbeddedEventLog implements EventPublisher, EventConsumers {
  private readonly repository: EmbeddedEventLogRepository;
  private readonly pollIntervalMs: number;
  private readonly listeners = new Set<(event: PublishedEvent) => void>();
  private readonly runs = new Set<EmbeddedConsumerRun>();
  private streams: StreamDeclaration[] | undefined;
  /** The maximum age of each declared stream that has one (JetStream's max_age, kept by expireNow). */
  private readonly maxAges = new Map<string, number>();
  private expiryTimer: NodeJS.Timeout | undefined;
  private expiring: Promise<void> | undefined;

  constructor(
    database: RuntimeDatabase,
    private readonly options: EmbeddedEventLogOptions,
  ) {
    this.repository = new EmbeddedEventLogRepository(database);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  async prepare(streams: StreamDeclaration[]): Promise<void> {
    const merged = mergeStreamDeclarations(streams);
    await this.repository.declareStreams(merged);
    this.streams = await this.repository.listStreams();
    for (const stream of merged) if (stream.maxAgeMs !== undefined) this.maxAges.set(stream.name, stream.maxAgeMs);
    if (this.maxAges.size > 0 && !this.expiryTimer) {
      this.expiryTimer = setInterval(() => {
        this.expireNow().catch((error: unknown) => this.options.logger.warn({ err: error }, 'event log expiry failed; retrying at the next interval'));
      }, this.options.expiryIntervalMs ?? 60_000);
      this.expiryTimer.unref();
    }
  }

  /** Deletes the messages past their stream's maximum age now (the timer does it every expiryIntervalMs). */
  expireNow(): Promise<void> {
    this.expiring ??= (async () => {
      try {
        for (const [stream, maxAgeMs] of this.maxAges) {
          const cutoff = new Date(Date.now() - maxAgeMs);
          while ((await this.repository.expire(stream, cutoff, EXPIRY_BATCH)) > 0) { /* next batch */ }
        }
      } finally {
        this.expiring = undefined;
      }
    })();
    return this.expiring;
  }

  /** @throws NoStreamForSubjectError when no declared stream captures the subject. */
  async publish(event: PublishedEvent): Promise<void> {
    const stream = await this.streamFor(event.subject);
    const seq = await this.repository.append({ stream, subject: event.subject, messageId: event.id, payload: event.data, headers: event.headers ?? {} });
    if (seq === null) return;
    for (const run of this.runs) if (run.stream === stream) run.wake();
    for (const listener of this.listeners) {
      // The event is stored: a failing listener must not make the publisher retry it.
      try {
        listener(event);
      } catch (error) {
        this.options.logger.warn({ err: error, subject: event.subject, id: event.id }, 'event listener failed');
      }
    }
  }

  /**
   * Stores the events in one statement (see EmbeddedEventLogRepository.appendMany).
   * Listeners hear the events stored by this call, duplicates left out, as with publish.
   * @throws NoStreamForSubjectError when no declared stream captures one of the subjects (nothing is stored).
   */
  async publishMany(events: PublishedEvent[]): Promise<void> {
    const messages = [];
    for (const event of events) {
      messages.push({ stream: await this.streamFor(event.subject), subject: event.subject, messageId: event.id, payload: event.data, headers: event.headers ?? {} });
    }
    const stored = await this.repository.appendMany(messages);
    this.heard(events, stored);
  }

  /** Wakes the consumers of the streams that stored something, and tells listeners of the events stored (duplicates left out). */
  private heard(events: ReadonlyArray<PublishedEvent | OutboxPublication>, stored: Array<{ stream: string; messageId: string }>): void {
    const streams = new Set(stored.map((message) => message.stream));
    for (const run of this.runs) if (streams.has(run.stream)) run.wake();
    if (this.listeners.size === 0) return;
    const storedIds = new Set(stored.map((message) => message.messageId));
    for (const event of events) {
      if (!storedIds.has(event.id)) continue;
      const published: PublishedEvent = 'data' in event ? event : { id: event.id, subject: event.subject, data: JSON.stringify(event.payload), headers: event.headers };
      try {
        for (const listener of this.listeners) listener(published);
      } catch (error) {
        this.options.logger.warn({ err: error, subject: event.subject, id: event.id }, 'event listener failed');
      }
    }
  }

  /**
   * Stores outbox rows and marks them published in one statement (see
   * EmbeddedEventLogRepository.appendFromOutbox): the payloads are copied
   * inside the database, not sent again. Listeners hear the events stored.
   * @throws NoStreamForSubjectError when no declared stream captures one of the subjects (nothing is stored).
   */
  async publishFromOutbox(events: OutboxPublication[]): Promise<void> {
    const rows = [];
    for (const event of events) {
      rows.push({ id: event.id, stream: await this.streamFor(event.subject), ...(event.payloadProjected ? { payload: JSON.stringify(event.payload) } : {}) });
    }
    const stored = await this.repository.appendFromOutbox(rows);
    this.heard(events, stored);
  }

  async purgeSubjects(stream: string, filters: readonly string[]): Promise<void> {
    await this.repository.purge(stream, filters.map(subjectPatternRegex));
  }

  /** Calls `listener` for every event stored from now on (duplicates left out); returns the unsubscribe function. */
  subscribe(listener: (event: PublishedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async consume(spec: DurableConsumerSpec, handler: MessageHandler): Promise<ConsumerHandle> {
    const resolved = resolveConsumerSpec(spec);
    await this.repository.ensureConsumer(resolved);
    const run = new EmbeddedConsumerRun(this.repository, resolved, handler, {
      logger: this.options.logger,
      pollIntervalMs: this.pollIntervalMs,
      // An ack or a nak can make room (maximum pending) or a message visible for the durable's other consumers here.
      onSettled: () => {
        for (const other of this.runs) if (other.stream === resolved.stream && other.durableName === resolved.durableName) other.wake();
      },
      onStopped: () => this.runs.delete(run),
    });
    this.runs.add(run);
    run.start();
    return run;
  }

  /** Stops every consumer and forgets the listeners; the database stays open (the caller owns it). */
  async close(): Promise<void> {
    this.listeners.clear();
    clearInterval(this.expiryTimer);
    this.expiryTimer = undefined;
    await this.expiring?.catch(() => undefined);
    await Promise.all([...this.runs].map((run) => run.stop()));
  }

  private async streamFor(subject: string): Promise<string> {
    const find = () => this.streams?.find((stream) => stream.subjects.some((pattern) => subjectMatches(pattern, subject)))?.name;
    // Another process (or an earlier run of this node) may have declared it: the database is the authority.
    const known = find() ?? ((this.streams = await this.repository.listStreams()), find());
    if (!known) throw new NoStreamForSubjectError(subject);
    return known;
  }
}

interface RunOptions {
  logger: RuntimeLogger;
  pollIntervalMs: number;
  onSettled: () => void;
  onStopped: () => void;
}

/** One consumer: claims, hands messages to the handler one at a time, sleeps until the next is due, stops on request. */
class EmbeddedConsumerRun implements ConsumerHandle {
  /**
   * Acks not yet written: they ride on the next claim (the webhook intake acks
   * every objective event), which an ack wakes the loop for. An ack made while
   * a handler runs is written alone on the next tick instead (with the others
   * waiting then): the handler may be waiting for it, and the loop for the
   * handler. Once the loop has ended, an ack is written alone.
   */
  private waitingAcks: WaitingAck[] = [];
  private handling = false;
  private flushScheduled = false;
  private loopEnded = false;

  readonly stream: string;
  readonly durableName: string;
  private stopping = false;
  private wakeRequested = false;
  private wakeSleeper: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly repository: EmbeddedEventLogRepository,
    private readonly spec: ResolvedConsumerSpec,
    private readonly handler: MessageHandler,
    private readonly options: RunOptions,
  ) {
    this.stream = spec.stream;
    this.durableName = spec.durableName;
  }

  start(): void {
    this.loop = this.run().finally(async () => {
      this.loopEnded = true;
      await this.writeWaitingAcks();
      this.options.onStopped();
    });
  }

  /** Ends the sleep in progress, or the next one. */
  wake(): void {
    this.wakeRequested = true;
    this.wakeSleeper?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        this.wakeRequested = false;
        const claimed = await this.claimWithAcks();
        failures = 0;
        if (claimed.length === 0) {
          const due = await this.repository.nextRedeliveryInMs(this.spec);
          await this.sleep(due === null ? this.options.pollIntervalMs : Math.min(Math.max(due, 0) + 1, this.options.pollIntervalMs));
          continue;
        }
        for (const message of claimed) {
          if (this.stopping) await this.release(message);
          else await this.handle(message);
        }
      } catch (error) {
        failures++;
        this.options.logger.warn({ err: error, stream: this.stream, durable: this.durableName, failures }, 'embedded consumer failed; retrying');
        await this.sleep(Math.min(FAILURE_PAUSE_MIN_MS * 2 ** (failures - 1), FAILURE_PAUSE_MAX_MS));
      }
    }
  }

  /** Writes the waiting acks and claims the next messages, in one call. */
  private async claimWithAcks(): Promise<ClaimedMessage[]> {
    const acks = this.waitingAcks;
    this.waitingAcks = [];
    let claimed: ClaimedMessage[];
    try {
      claimed = await this.repository.claim(this.spec, Math.min(this.spec.maxAckPending, MAX_CLAIM), acks.map((ack) => ack.seq));
    } catch (error) {
      for (const ack of acks) ack.reject(error);
      throw error;
    }
    for (const ack of acks) ack.resolve();
    return claimed;
  }

  private ack(seq: number): Promise<void> {
    if (this.loopEnded) return this.repository.ack(this.spec, [seq]);
    return new Promise((resolve, reject) => {
      this.waitingAcks.push({ seq, resolve, reject });
      if (!this.handling) {
        this.wake();
      } else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          void this.writeWaitingAcks();
        });
      }
    });
  }

  /** The waiting acks written alone (a handler may wait for them; the loop has ended). */
  private async writeWaitingAcks(): Promise<void> {
    const acks = this.waitingAcks;
    this.waitingAcks = [];
    if (!acks.length) return;
    try {
      await this.repository.ack(this.spec, acks.map((ack) => ack.seq));
      for (const ack of acks) ack.resolve();
    } catch (error) {
      for (const ack of acks) ack.reject(error);
    }
  }

  private async handle(message: ClaimedMessage): Promise<void> {
    const event = this.toConsumedEvent(message);
    this.handling = true;
    try {
      await this.handler(event);
    } catch (error) {
      this.options.logger.warn({ err: error, subject: message.subject, id: message.messageId, deliveryCount: message.deliveryCount }, 'event handler failed; redelivering');
      await event.nak(this.spec.errorRedeliveryDelayMs).catch(() => undefined);
    } finally {
      this.handling = false;
    }
  }

  /** Hands a claimed message back for immediate redelivery (stopping before it was handled). */
  private async release(message: ClaimedMessage): Promise<void> {
    await this.repository.nak(this.spec, message.seq, message.deliveryCount, 0).catch(() => undefined);
    this.options.onSettled();
  }

  private toConsumedEvent(message: ClaimedMessage): ConsumedEvent {
    // Like a JetStream message: the first ack or nak counts, later ones are ignored.
    let settled = false;
    const settle = async (write: () => Promise<void>) => {
      if (settled) return;
      settled = true;
      await write();
      this.options.onSettled();
    };
    return {
      id: message.messageId,
      subject: message.subject,
      data: message.payload,
      headers: { ...message.headers },
      streamSequence: message.seq,
      deliveryCount: message.deliveryCount,
      ack: () => settle(() => this.ack(message.seq)),
      nak: (delayMs) => settle(() => this.repository.nak(this.spec, message.seq, message.deliveryCount, Math.max(0, delayMs ?? 0))),
    };
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakeRequested || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleeper = () => {
        this.wakeSleeper = undefined;
        done();
      };
    });
  }
}

interface WaitingAck {
  seq: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}
