// The EventConsumers port over JetStream: one durable pull consumer per
// (stream, durable name), explicit acks, shared by every node that consumes
// it (the server hands each message to one pull request at a time). The
// client library re-issues its pulls after a reconnect; when the consumption
// itself ends (the consumer or the stream was deleted, a terminal error) this
// module has the node's JetStreamTopology declare what the server lost (its
// streams and durables, once per incident) and starts again, with a growing
// pause. While the connection is lost a consumption only waits for it (it
// never gives up: the connection reconnects for ever), and the connection's
// return ends any pause at once.
import { jetstream, type ConsumerMessages, type JetStreamClient, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { resolveConsumerSpec, type ResolvedConsumerSpec } from '../../src/events/consumer-spec';
import type { ConsumedEvent, ConsumerHandle, DurableConsumerSpec, EventConsumers } from '../../src/ports/event-consumer';
import { isNatsConnectionFailure, NatsConnectionWatch } from '../bus/nats-connection';
import type { RuntimeLogger } from '../runtime/runtime-logger';
import { JetStreamTopology } from './jetstream-topology';
/** Messages pulled ahead of the handler: enough to save round trips, few enough that they rarely wait out their ack wait in the buffer. */
const MAX_PREFETCH = 64;
/** How long one pull request waits for messages before the library issues the next (see supervise). */
const PULL_EXPIRES_MS = 5_000;
const RESTART_DELAY_MIN_MS = 250;
const RESTART_DELAY_MAX_MS = 10_000;

export interface JetStreamConsumersOptions {
  logger: RuntimeLogger;
  /** Timeout of JetStream API calls and acks. @default 5000 */
  timeoutMs?: number;
  /** Replicas of every durable consumer created (an existing one with fewer is raised); ignored with `topology`. @default 1 */
  replicas?: number;
  /** The node's topology, shared with its JetStreamPublisher (which declares the streams). @default one of its own */
  topology?: JetStreamTopology;
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
  private readonly topology: JetStreamTopology;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: JetStreamConsumersOptions,
  ) {
    const timeoutMs = options.timeoutMs ?? 5000;
    this.client = jetstream(connection, { timeout: timeoutMs });
    this.topology = options.topology ?? new JetStreamTopology(connection, { logger: options.logger, timeoutMs, replicas: options.replicas });
  }

  /**
   * Creates the durable consumer (after its predecessor's acknowledged
   * messages when it takes one over, else from `notBefore` or the beginning),
   * or brings an existing one's ack wait, maximum pending and replicas to the
   * spec (the filter subject cannot change on 2.9), and consumes it.
   */
  async consume(spec: DurableConsumerSpec, handler: MessageHandler): Promise<ConsumerHandle> {
    const resolved = resolveConsumerSpec(spec);
    await this.topology.useConsumer(resolved);
    const run = new JetStreamConsumerRun(this.connection, this.client, resolved, handler, this.options.logger, this.topology);
    run.start();
    return run;
  }
}

/** One consumption: pulls, hands messages to the handler one at a time, restarts after a failure, stops on request. */
class JetStreamConsumerRun implements ConsumerHandle {
  private stopping = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private wakeFromPause: (() => void) | undefined;
  private readonly watch: NatsConnectionWatch;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly connection: NatsConnection,
    private readonly client: JetStreamClient,
    private readonly spec: ResolvedConsumerSpec,
    private readonly handler: MessageHandler,
    private readonly logger: RuntimeLogger,
    private readonly topology: JetStreamTopology,
  ) {
    this.watch = NatsConnectionWatch.of(connection);
  }

  start(): void {
    // The connection's return ends a pause at once: the consumer was waiting for it, not for its turn.
    this.stopWatching = this.watch.onReconnect(() => this.wakeFromPause?.());
    this.loop = this.supervise().finally(() => {
      this.stopWatching?.();
      this.topology.release(this.spec);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.messages?.stop();
    this.wakeFromPause?.();
    await this.loop;
  }

  private async supervise(): Promise<void> {
    let failures = 0;
    // Ends only on stop or when the connection is closed (the node stops): a lost connection comes back.
    while (!this.stopping && !this.connection.isClosed()) {
      try {
        if (!this.watch.connected()) {
          await this.untilReconnected();
          continue;
        }
        if (failures > 0) {
          // Whatever ended the consumption, the server may have lost the stream or the durable (a new, empty server).
          await this.topology.restore();
          await this.topology.declareConsumer(this.spec);
        }
        const consumer = await this.client.consumers.get(this.spec.stream, this.spec.durableName);
        // Without abort_on_missing_resource a deleted consumer would be retried forever by the library; we recreate it instead.
        // A pull lives PULL_EXPIRES_MS (heartbeats at half of it): the library re-pulls after two missed heartbeats, so
        // with its default of 30 s a consumer whose leader moved (a NATS cluster lost a server) sat idle 20-34 s.
        this.messages = await consumer.consume({
          max_messages: Math.min(this.spec.maxAckPending, MAX_PREFETCH), expires: PULL_EXPIRES_MS, abort_on_missing_resource: true,
        });
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
        // A lost connection is reported once by the connection's watch (DependencyHealth), not by every consumer.
        if (isNatsConnectionFailure(error, this.connection)) {
          if (this.watch.connected()) await this.pause(RESTART_DELAY_MIN_MS); // connected, yet no answer in time
          continue;
        }
        this.logger.warn({ err: error, stream: this.spec.stream, durable: this.spec.durableName, failures }, 'durable consumer stopped; restarting');
        await this.pause(Math.min(RESTART_DELAY_MIN_MS * 2 ** (failures - 1), RESTART_DELAY_MAX_MS));
      }
    }
  }

  /** Waits for the connection to come back (or the stop). */
  private async untilReconnected(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wakeFromPause = resolve;
      void this.watch.nextReconnect().then(resolve);
    });
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
