// The EventConsumers port over JetStream: one durable pull consumer per
// (stream, durable name), explicit acks, shared by every node that consumes
// it (the server hands each message to one pull request at a time). The
// client library re-issues its pulls after a reconnect; when the consumption
// itself ends (the consumer or the stream was deleted, a terminal error) this
// module recreates the consumer and starts again, with a growing pause.
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerConfig,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { resolveConsumerSpec, type ResolvedConsumerSpec } from '../../src/events/consumer-spec';
import {
  DurableConsumerConflictError,
  StreamNotFoundError,
  type ConsumedEvent,
  type ConsumerHandle,
  type DurableConsumerSpec,
  type EventConsumers,
} from '../../src/ports/event-consumer';
import type { RuntimeLogger } from '../runtime/runtime-logger';

const NANOS_PER_MS = 1_000_000;
/** Messages pulled ahead of the handler: enough to save round trips, few enough that they rarely wait out their ack wait in the buffer. */
const MAX_PREFETCH = 64;
const RESTART_DELAY_MIN_MS = 250;
const RESTART_DELAY_MAX_MS = 10_000;

export interface JetStreamConsumersOptions {
  logger: RuntimeLogger;
  /** Timeout of JetStream API calls and acks. @default 5000 */
  timeoutMs?: number;
  /** Replicas of every durable consumer created (an existing one with fewer is raised). @default 1 */
  replicas?: number;
}

type MessageHandler = (event: ConsumedEvent) => Promise<void>;

/** The library ended a consumption we did not stop (logged, then the consumption is restarted). */
class ConsumptionEndedError extends Error {
  constructor(stream: string, durableName: string) {
    super(`consumption of ${stream}/${durableName} ended without a stop`);
    this.name = 'ConsumptionEndedError';
  }
}

/** Durable JetStream consumers on a shared connection (stopping a consumer leaves the connection open). */
export class JetStreamConsumers implements EventConsumers {
  private readonly client: JetStreamClient;
  private readonly timeoutMs: number;
  private readonly replicas: number;
  private manager: JetStreamManager | undefined;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: JetStreamConsumersOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.replicas = options.replicas ?? 1;
    this.client = jetstream(connection, { timeout: this.timeoutMs });
  }

  async consume(spec: DurableConsumerSpec, handler: MessageHandler): Promise<ConsumerHandle> {
    const resolved = resolveConsumerSpec(spec);
    await this.ensureConsumer(resolved);
    const run = new JetStreamConsumerRun(this.connection, this.client, resolved, handler, this.options.logger, () => this.ensureConsumer(resolved));
    run.start();
    return run;
  }

  /**
   * Creates the durable consumer (after its predecessor's acknowledged
   * messages when it takes one over, else from `notBefore` or the beginning),
   * or brings an existing one's ack wait and
   * maximum pending to the spec (the filter subject cannot change on 2.9).
   */
  private async ensureConsumer(spec: ResolvedConsumerSpec): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection, { timeout: this.timeoutMs });
    const wanted = { ack_wait: spec.ackWaitMs * NANOS_PER_MS, max_ack_pending: spec.maxAckPending };
    const existing = await this.consumerInfo(this.manager, spec);
    if (!existing) {
      const predecessor = spec.takeOverFrom ? await this.consumerInfo(this.manager, { ...spec, durableName: spec.takeOverFrom }) : null;
      const start: Partial<ConsumerConfig> = predecessor
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: acknowledgedThrough(predecessor) + 1 }
        : spec.notBefore
          ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: spec.notBefore.toISOString() }
          : { deliver_policy: DeliverPolicy.All };
      const config: Partial<ConsumerConfig> = {
        durable_name: spec.durableName,
        ack_policy: AckPolicy.Explicit,
        ...start,
        ...wanted,
        num_replicas: this.replicas,
        ...(spec.filterSubject ? { filter_subject: spec.filterSubject } : {}),
      };
      await this.call(spec, () => this.manager!.consumers.add(spec.stream, config));
      return;
    }
    const existingFilter = existing.config.filter_subject || undefined;
    if (existingFilter !== spec.filterSubject) throw new DurableConsumerConflictError(spec.stream, spec.durableName, existingFilter, spec.filterSubject);
    // 0 replicas: the consumer follows its stream's, which prepare raises.
    const replicas = existing.config.num_replicas ? Math.max(existing.config.num_replicas, this.replicas) : 0;
    if (existing.config.ack_wait === wanted.ack_wait && existing.config.max_ack_pending === wanted.max_ack_pending && (existing.config.num_replicas ?? 0) === replicas) return;
    await this.call(spec, () => this.manager!.consumers.update(spec.stream, spec.durableName, { ...wanted, ...(replicas ? { num_replicas: replicas } : {}) }));
  }

  private async consumerInfo(manager: JetStreamManager, spec: ResolvedConsumerSpec): Promise<ConsumerInfo | null> {
    try {
      return await this.call(spec, () => manager.consumers.info(spec.stream, spec.durableName));
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return null;
      throw error;
    }
  }

  /** Runs a JetStream API call, turning "stream not found" into our typed error. */
  private async call<T>(spec: ResolvedConsumerSpec, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) throw new StreamNotFoundError(spec.stream, { cause: error });
      throw error;
    }
  }
}

/**
 * The stream sequence up to which a durable has every message acknowledged.
 * With nothing pending that is all it was delivered: its ack floor alone says
 * 0 for a durable that started past the beginning and has acknowledged nothing since.
 */
function acknowledgedThrough(consumer: ConsumerInfo): number {
  return consumer.num_ack_pending === 0 ? Math.max(consumer.ack_floor.stream_seq, consumer.delivered.stream_seq) : consumer.ack_floor.stream_seq;
}

/** One consumption: pulls, hands messages to the handler one at a time, restarts after a failure, stops on request. */
class JetStreamConsumerRun implements ConsumerHandle {
  private stopping = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private wakeFromPause: (() => void) | undefined;

  constructor(
    private readonly connection: NatsConnection,
    private readonly client: JetStreamClient,
    private readonly spec: ResolvedConsumerSpec,
    private readonly handler: MessageHandler,
    private readonly logger: RuntimeLogger,
    private readonly ensureConsumer: () => Promise<void>,
  ) {}

  start(): void {
    this.loop = this.supervise();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.messages?.stop();
    this.wakeFromPause?.();
    await this.loop;
  }

  private async supervise(): Promise<void> {
    let failures = 0;
    while (!this.stopping && !this.connection.isClosed()) {
      try {
        if (failures > 0) await this.ensureConsumer();
        const consumer = await this.client.consumers.get(this.spec.stream, this.spec.durableName);
        // Without abort_on_missing_resource a deleted consumer would be retried forever by the library; we recreate it instead.
        this.messages = await consumer.consume({ max_messages: Math.min(this.spec.maxAckPending, MAX_PREFETCH), abort_on_missing_resource: true });
        if (this.stopping) this.messages.stop();
        for await (const message of this.messages) {
          // Messages pulled ahead are left pending, not nak'ed: the 2.9 server may hand a nak'ed message straight back to
          // the pull request this stop abandons (lost until its ack wait), and it re-sent a message twice after a burst of naks.
          if (this.stopping) break;
          await this.handle(message);
          failures = 0;
        }
        if (this.stopping || this.connection.isClosed()) break;
        throw new ConsumptionEndedError(this.spec.stream, this.spec.durableName);
      } catch (error) {
        if (this.stopping || this.connection.isClosed()) break;
        failures++;
        this.logger.warn({ err: error, stream: this.spec.stream, durable: this.spec.durableName, failures }, 'durable consumer stopped; restarting');
        await this.pause(Math.min(RESTART_DELAY_MIN_MS * 2 ** (failures - 1), RESTART_DELAY_MAX_MS));
      }
    }
  }

  private async handle(message: JsMsg): Promise<void> {
    const event = toConsumedEvent(message, this.connection);
    try {
      await this.handler(event);
    } catch (error) {
      this.logger.warn({ err: error, subject: message.subject, id: event.id, deliveryCount: event.deliveryCount }, 'event handler failed; redelivering');
      await event.nak(this.spec.errorRedeliveryDelayMs).catch(() => undefined);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeFromPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

function toConsumedEvent(message: JsMsg, connection: NatsConnection): ConsumedEvent {
  const headers: Record<string, string> = {};
  let id = '';
  for (const name of message.headers?.keys() ?? []) {
    const value = message.headers!.get(name);
    if (name.toLowerCase() === 'nats-msg-id') id = value;
    else if (!name.toLowerCase().startsWith('nats-')) headers[name] = value;
  }
  return {
    // A message published without an id (not by an EventPublisher) is named by its place in the stream.
    id: id || `${message.info.stream}:${message.info.streamSequence}`,
    subject: message.subject,
    data: message.string(),
    headers,
    streamSequence: message.info.streamSequence,
    deliveryCount: message.info.deliveryCount,
    // Not ackAck: waiting for the server's confirmation cost a request (and its
    // reply, timer and error objects) per event. A lost ack only means a
    // redelivery after the ack wait, which consumers de-duplicate by event id.
    ack: async () => {
      message.ack();
    },
    nak: async (delayMs) => {
      message.nak(delayMs && delayMs > 0 ? delayMs : undefined);
      // A nak has no reply; the flush's round trip tells us the server has it.
      await connection.flush();
    },
  };
}
