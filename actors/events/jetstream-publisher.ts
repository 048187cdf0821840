// The EventPublisher port over JetStream. `prepare` declares the streams
// (the runtime's and the ones actor kinds declare) through the node's
// JetStreamTopology (jetstream-topology.ts: created or given the subjects
// they lack, retention and replicas only ever raised). Each event is
// published with its id as message id, so a retry after a crash within the
// duplicate window is stored once, and with its headers. A publication that
// meets a server without the stream ("no responders": a NATS server replaced
// by an empty one) has the topology declare everything again (once per
// incident) and is tried once more; one that fails for the whole connection
// is reported as PublisherUnavailableError, and `onAvailable` tells the relay
// when the connection is back.
import { AckPolicy, DeliverPolicy, jetstream, JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { PublisherUnavailableError, type EventPublisher, type PublishedEvent, type StreamDeclaration } from '../../src/ports/event-publisher';
import { isNatsConnectionFailure, NatsConnectionWatch } from '../bus/nats-connection';
import { defaultRuntimeLogger, type RuntimeLogger } from '../runtime/runtime-logger';
import { isLostTopology, JetStreamTopology } from './jetstream-topology';

export interface JetStreamPublisherOptions {
  /** Publish timeout. @default 5000 */
  timeoutMs?: number;
  /** Where the warning of a retention kept goes. @default defaultRuntimeLogger() */
  logger?: RuntimeLogger;
  /** Replicas of every stream declared (an existing stream with fewer is raised); ignored with `topology`. @default 1 */
  replicas?: number;
  /** The node's topology, shared with its JetStreamConsumers. @default one of its own */
  topology?: JetStreamTopology;
}

/** Publishes to JetStream streams on a shared connection (closing the publisher leaves the connection open). */
export class JetStreamPublisher implements EventPublisher {
  private readonly client: JetStreamClient;
  private readonly timeoutMs: number;
  private readonly topology: JetStreamTopology;
  private readonly watch: NatsConnectionWatch;

  constructor(
    private readonly connection: NatsConnection,
    options: JetStreamPublisherOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    const logger: RuntimeLogger = options.logger ?? defaultRuntimeLogger();
    this.topology = options.topology ?? new JetStreamTopology(connection, { logger, timeoutMs: this.timeoutMs, replicas: options.replicas });
    this.client = jetstream(connection, { timeout: this.timeoutMs });
    this.watch = NatsConnectionWatch.of(connection);
  }

  async prepare(streams: StreamDeclaration[]): Promise<void> {
    this.failFastWhileDisconnected();
    try {
      await this.topology.declareStreams(streams);
    } catch (error) {
      throw this.unavailableOr(error);
    }
  }

  /** @throws PublisherUnavailableError when the connection failed; the server's error otherwise */
  async publish(event: PublishedEvent): Promise<void> {
    const entries = Object.entries(event.headers ?? {});
    const headers = entries.length > 0 ? natsHeaders() : undefined;
    for (const [name, value] of entries) headers!.set(name, value);
    // Ended by a loss of the connection at once: the relay then waits for the return instead of the timeout.
    const publish = () => this.watch.endedByDisconnect(this.client.publish(event.subject, event.data, { msgID: event.id, timeout: this.timeoutMs, headers }));
    this.failFastWhileDisconnected();
    try {
      await publish();
    } catch (error) {
      if (!isLostTopology(error)) throw this.unavailableOr(error);
      try {
        await this.topology.restore();
      } catch (failure) {
        // Streams that cannot be declared: no event can be stored, whichever its subject.
        throw new PublisherUnavailableError({ cause: failure });
      }
      try {
        await publish();
      } catch (failure) {
        throw this.unavailableOr(failure);
      }
    }
  }

  onAvailable(listener: () => void): () => void {
    return this.watch.onReconnect(listener);
  }

  /**
   * Deletes the filters' messages one by one, their bytes overwritten
   * (`erase`). Not a purge by filter: on the 2.9 server a filtered purge moves
   * every consumer of the stream past the last purged message, so a durable
   * (the webhook intake, a user's) skipped the other subjects' messages it had
   * not read yet in that range. Refused at once while the connection is
   * lost; a stream the server lost has the topology declare everything again
   * (the new stream holds nothing to purge).
   * @throws PublisherUnavailableError when the connection failed
   */
  async purgeSubjects(stream: string, filters: readonly string[]): Promise<void> {
    this.failFastWhileDisconnected();
    try {
      await this.deleteMessagesOf(stream, filters);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw this.unavailableOr(error);
      try {
        await this.topology.restore();
      } catch (failure) {
        throw this.unavailableOr(failure);
      }
    }
  }

  private async deleteMessagesOf(stream: string, filters: readonly string[]): Promise<void> {
    const manager = await this.topology.manager();
    for (const filter of filters) {
      for (const sequence of await this.sequencesOf(manager, stream, filter)) {
        try {
          await manager.streams.deleteMessage(stream, sequence, true);
        } catch (error) {
          // Gone already (a run before this one, or the stream's age limit): what a purge wants.
          if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound)) throw error;
        }
      }
    }
  }

  async close(): Promise<void> {
    // The connection is the node's; nothing of the publisher's own to release.
  }

  /**
   * The client drops what is sent while it reconnects (its buffer is reset on
   * the new connection): a request then only ends at its timeout, after the
   * connection may well be back. Refused at once instead.
   */
  private failFastWhileDisconnected(): void {
    if (!this.watch.connected()) throw new PublisherUnavailableError({ cause: new Error('the NATS connection is lost; reconnecting') });
  }

  private unavailableOr(error: unknown): unknown {
    return isNatsConnectionFailure(error, this.connection) ? new PublisherUnavailableError({ cause: error }) : error;
  }

  /** The stream sequences of the messages the filter takes now: read through an ephemeral consumer of their headers only. */
  private async sequencesOf(manager: JetStreamManager, stream: string, filter: string): Promise<number[]> {
    const info = await manager.consumers.add(stream, {
      filter_subject: filter, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, headers_only: true, inactive_threshold: 60_000_000_000,
    });
    const sequences: number[] = [];
    try {
      const consumer = await this.client.consumers.get(stream, info.name);
      let remaining = info.num_pending;
      while (remaining > 0) {
        let received = 0;
        for await (const message of await consumer.fetch({ max_messages: Math.min(remaining, 256), expires: 2000 })) {
          received += 1;
          sequences.push(message.info.streamSequence);
          remaining = message.info.pending;
        }
        if (received === 0) remaining = (await consumer.info()).num_pending;
      }
    } finally {
      await manager.consumers.delete(stream, info.name).catch(() => undefined);
    }
    return sequences;
  }
}
