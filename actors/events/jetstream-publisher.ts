// The EventPublisher port over JetStream: the streams (the runtime's and the
// ones actor kinds declare) are created at start if absent (duplicate window
// at least 10 minutes); each event is published with its id as message id, so
// a retry after a crash is stored once, and with its headers.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { headers as natsHeaders } from '@nats-io/nats-core';
import type { EventPublisher, PublishedEvent, StreamDeclaration } from '../../src/ports/event-publisher';

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

  /** Creates the publisher's own stream and every declared one if absent; raises a duplicate window under 10 minutes. */
  async prepare(streams: StreamDeclaration[] = []): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection);
    for (const stream of [{ name: this.options.stream, subjects: this.options.subjects }, ...streams]) {
      const existing = await this.manager.streams.info(stream.name).catch(() => null);
      if (!existing) {
        await this.manager.streams.add({ name: stream.name, subjects: stream.subjects, duplicate_window: TEN_MINUTES_NS });
        continue;
      }
      if (existing.config.duplicate_window < TEN_MINUTES_NS) {
        await this.manager.streams.update(stream.name, { duplicate_window: TEN_MINUTES_NS });
      }
    }
  }

  async publish(event: PublishedEvent): Promise<void> {
    const headers = event.headers && Object.keys(event.headers).length ? natsHeaders() : undefined;
    for (const [name, value] of Object.entries(event.headers ?? {})) headers!.set(name, value);
    await this.client.publish(event.subject, event.data, { msgID: event.id, timeout: this.options.timeoutMs ?? 5000, headers });
  }

  async close(): Promise<void> {
    this.manager = undefined;
  }
}
