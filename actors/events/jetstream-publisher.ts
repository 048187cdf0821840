// The EventPublisher port over JetStream. `prepare` creates the declared
// streams (the runtime's and the ones actor kinds declare) or adds the
// subjects they lack, with a duplicate window of at least 10 minutes and the
// declared maximum age (set on an existing stream too: a retention added or
// changed in the configuration holds from the next start); each
// event is published with its id as message id, so a retry after a crash
// within the window is stored once, and with its headers.
import { jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { mergeStreamDeclarations } from '../../src/events/stream-declarations';
import type { EventPublisher, PublishedEvent, StreamDeclaration } from '../../src/ports/event-publisher';

const TEN_MINUTES_NS = 10 * 60 * 1_000_000_000;

export interface JetStreamPublisherOptions {
  /** Publish timeout. @default 5000 */
  timeoutMs?: number;
}

/** Publishes to JetStream streams on a shared connection (closing the publisher leaves the connection open). */
export class JetStreamPublisher implements EventPublisher {
  private readonly client: JetStreamClient;
  private readonly timeoutMs: number;
  private manager: JetStreamManager | undefined;

  constructor(
    private readonly connection: NatsConnection,
    options: JetStreamPublisherOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.client = jetstream(connection, { timeout: this.timeoutMs });
  }

  async prepare(streams: StreamDeclaration[]): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection, { timeout: this.timeoutMs });
    for (const stream of mergeStreamDeclarations(streams)) await this.prepareStream(this.manager, stream);
  }

  async publish(event: PublishedEvent): Promise<void> {
    const entries = Object.entries(event.headers ?? {});
    const headers = entries.length > 0 ? natsHeaders() : undefined;
    for (const [name, value] of entries) headers!.set(name, value);
    await this.client.publish(event.subject, event.data, { msgID: event.id, timeout: this.timeoutMs, headers });
  }

  async purgeSubjects(stream: string, filters: readonly string[]): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection, { timeout: this.timeoutMs });
    for (const filter of filters) await this.manager.streams.purge(stream, { filter });
  }

  async close(): Promise<void> {
    this.manager = undefined;
  }

  private async prepareStream(manager: JetStreamManager, stream: StreamDeclaration): Promise<void> {
    const existing = await this.streamInfo(manager, stream.name);
    // JetStream counts in nanoseconds; 0 is "no limit". The duplicate window may not exceed the age limit.
    const maxAge = stream.maxAgeMs === undefined ? 0 : stream.maxAgeMs * 1_000_000;
    const window = (duplicateWindow: number) => (maxAge > 0 ? Math.min(duplicateWindow, maxAge) : duplicateWindow);
    if (!existing) {
      await manager.streams.add({ name: stream.name, subjects: stream.subjects, duplicate_window: window(TEN_MINUTES_NS), max_age: maxAge });
      return;
    }
    const missing = stream.subjects.filter((subject) => !existing.config.subjects?.includes(subject));
    const duplicateWindow = window(Math.max(existing.config.duplicate_window, TEN_MINUTES_NS));
    const ageKept = stream.maxAgeMs === undefined || existing.config.max_age === maxAge;
    if (missing.length === 0 && existing.config.duplicate_window === duplicateWindow && ageKept) return;
    await manager.streams.update(stream.name, {
      subjects: [...(existing.config.subjects ?? []), ...missing],
      duplicate_window: duplicateWindow,
      ...(stream.maxAgeMs === undefined ? {} : { max_age: maxAge }),
    });
  }

  private async streamInfo(manager: JetStreamManager, name: string): Promise<StreamInfo | null> {
    try {
      return await manager.streams.info(name);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return null;
      throw error;
    }
  }
}
