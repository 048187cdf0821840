// The EventPublisher port over JetStream: the stream is created at start if
// absent (duplicate window at least 10 minutes), each event is published with
// its id as message id, so a retry after a crash is stored once.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { EventPublisher, PublishedEvent } from '../../src/ports/event-publisher';

const TEN_MINUTES_NS = 10 * 60 * 1_000_000_000;

export interface JetStreamPublisherOptions {
  /** Stream name, e.g. AGENTRT_EVENTS. */
  stream: string;
  /** Subjects the stream captures, e.g. `agentrt.events.>`. */
  subjects: string[];
  /** Publish timeout. @default 5000 */
  timeoutMs?: number;
}

/** Publishes to a JetStream stream on a shared connection (closing the publisher leaves the connection open). */
export class JetStreamPublisher implements EventPublisher {
  private readonly client: JetStreamClient;
  private manager: JetStreamManager | undefined;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: JetStreamPublisherOptions,
  ) {
    this.client = jetstream(connection, { timeout: options.timeoutMs ?? 5000 });
  }

  async prepare(): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection);
    const existing = await this.manager.streams.info(this.options.stream).catch(() => null);
    if (!existing) {
      await this.manager.streams.add({ name: this.options.stream, subjects: this.options.subjects, duplicate_window: TEN_MINUTES_NS });
      return;
    }
    if (existing.config.duplicate_window < TEN_MINUTES_NS) {
      await this.manager.streams.update(this.options.stream, { duplicate_window: TEN_MINUTES_NS });
    }
  }

  async publish(event: PublishedEvent): Promise<void> {
    await this.client.publish(event.subject, event.data, { msgID: event.id, timeout: this.options.timeoutMs ?? 5000 });
  }

  async close(): Promise<void> {
    this.manager = undefined;
  }
}
