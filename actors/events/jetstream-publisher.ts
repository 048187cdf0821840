// The EventPublisher port over JetStream. `prepare` creates the declared
// streams (the runtime's and the ones actor kinds declare) or adds the
// subjects they lack, with a duplicate window of at least 10 minutes and the
// declared maximum age. On an existing stream a node only ever raises the
// maximum age (or sets it on a stream that has none): a stream may be shared
// by every cluster on the NATS server (OBJECTIVE_EVENTS is), and one
// configured with a shorter retention (staging next to production) must not
// cut the others'; it keeps the stream's and warns how to lower it on
// purpose. Replicas (AGENTRT_JETSTREAM_REPLICAS) are raised the same way, never
// lowered. Each event is published with its id as message id, so a retry
// after a crash within the window is stored once, and with its headers.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { mergeStreamDeclarations } from '../../src/events/stream-declarations';
import type { EventPublisher, PublishedEvent, StreamDeclaration } from '../../src/ports/event-publisher';
import { defaultRuntimeLogger, type RuntimeLogger } from '../runtime/runtime-logger';

const TEN_MINUTES_NS = 10 * 60 * 1_000_000_000;
const NS_PER_MS = 1_000_000;

export interface JetStreamPublisherOptions {
  /** Publish timeout. @default 5000 */
  timeoutMs?: number;
  /** Where the warning of a retention kept goes. @default defaultRuntimeLogger() */
  logger?: RuntimeLogger;
  /** Replicas of every stream declared (an existing stream with fewer is raised). @default 1 */
  replicas?: number;
}

/** A maximum age as the nats CLI takes it (`--max-age=36h`, `--max-age=90m`, `--max-age=45s`). */
function natsDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.ceil(ms / 1000)}s`;
}

/** Publishes to JetStream streams on a shared connection (closing the publisher leaves the connection open). */
export class JetStreamPublisher implements EventPublisher {
  private readonly client: JetStreamClient;
  private readonly timeoutMs: number;
  private readonly logger: RuntimeLogger;
  private readonly replicas: number;
  private manager: JetStreamManager | undefined;

  constructor(
    private readonly connection: NatsConnection,
    options: JetStreamPublisherOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.logger = options.logger ?? defaultRuntimeLogger();
    this.replicas = options.replicas ?? 1;
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

  /**
   * Deletes the filters' messages one by one, their bytes overwritten
   * (`erase`). Not a purge by filter: on the 2.9 server a filtered purge moves
   * every consumer of the stream past the last purged message, so a durable
   * (the webhook intake, a user's) skipped the other subjects' messages it had
   * not read yet in that range.
   */
  async purgeSubjects(stream: string, filters: readonly string[]): Promise<void> {
    this.manager ??= await jetstreamManager(this.connection, { timeout: this.timeoutMs });
    for (const filter of filters) {
      for (const sequence of await this.sequencesOf(this.manager, stream, filter)) {
        try {
          await this.manager.streams.deleteMessage(stream, sequence, true);
        } catch (error) {
          // Gone already (a run before this one, or the stream's age limit): what a purge wants.
          if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound)) throw error;
        }
      }
    }
  }

  async close(): Promise<void> {
    this.manager = undefined;
  }

  private async prepareStream(manager: JetStreamManager, stream: StreamDeclaration): Promise<void> {
    const existing = await this.streamInfo(manager, stream.name);
    // JetStream counts in nanoseconds; 0 is "no limit". The duplicate window may not exceed the age limit.
    const declared = stream.maxAgeMs === undefined ? 0 : stream.maxAgeMs * NS_PER_MS;
    const window = (duplicateWindow: number, maxAge: number) => (maxAge > 0 ? Math.min(duplicateWindow, maxAge) : duplicateWindow);
    if (!existing) {
      await manager.streams.add({
        name: stream.name, subjects: stream.subjects, duplicate_window: window(TEN_MINUTES_NS, declared), max_age: declared, num_replicas: this.replicas,
      });
      return;
    }
    const current = existing.config.max_age;
    // A stream without a limit (as versions before retention made OBJECTIVE_EVENTS) takes the declared one.
    const maxAge = declared > 0 && (current === 0 || declared > current) ? declared : current;
    if (declared > 0 && declared < current) this.warnRetentionKept(stream.name, current, declared);
    const missing = stream.subjects.filter((subject) => !existing.config.subjects?.includes(subject));
    const duplicateWindow = window(Math.max(existing.config.duplicate_window, TEN_MINUTES_NS), maxAge);
    const replicas = Math.max(existing.config.num_replicas || 1, this.replicas);
    const unchanged = existing.config.duplicate_window === duplicateWindow && current === maxAge && (existing.config.num_replicas || 1) === replicas;
    if (missing.length === 0 && unchanged) return;
    await manager.streams.update(stream.name, {
      subjects: [...(existing.config.subjects ?? []), ...missing],
      duplicate_window: duplicateWindow,
      max_age: maxAge,
      num_replicas: replicas,
    });
  }

  private warnRetentionKept(stream: string, currentNs: number, declaredNs: number): void {
    const declared = natsDuration(declaredNs / NS_PER_MS);
    this.logger.warn(
      { stream, streamMaxAge: natsDuration(currentNs / NS_PER_MS), configuredMaxAge: declared },
      `stream ${stream} keeps messages longer than this node is configured for (AGENTRT_EVENT_RETENTION): the longer retention is kept, ` +
        `since other clusters on this NATS server may rely on it. To shorten it on purpose: nats stream edit ${stream} --max-age=${declared}`,
    );
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

  private async streamInfo(manager: JetStreamManager, name: string): Promise<StreamInfo | null> {
    try {
      return await manager.streams.info(name);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return null;
      throw error;
    }
  }
}
