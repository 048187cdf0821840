// The event publication port: how the outbox relay hands events to the
// streams outside the runtime. JetStreamPublisher (cluster) and
// EmbeddedEventLog (embedded mode, stored in the database) implement it;
// MemoryEventPublisher is an in-memory stand-in for unit tests. Events are
// read back through the durable consumer port (event-consumer.ts).

/** A stream: its name and the subject patterns (`*` one token, `>` the rest) it captures. */
export interface StreamDeclaration {
  name: string;
  subjects: string[];
  /** How long the stream keeps a message (JetStream `max_age`); absent: for ever. */
  maxAgeMs?: number;
}

/** One event leaving the runtime. */
export interface PublishedEvent {
  /** Unique event id; publication is idempotent per id (JetStream message id). */
  id: string;
  subject: string;
  /** JSON payload. */
  data: string;
  /** Message headers (the runtime sets `Agentrt-Actor-Key` and `Agentrt-Actor-Sequence`). */
  headers?: Record<string, string>;
}

/** Raised by `publish` when no declared stream captures the event's subject (nothing was stored). */
export class NoStreamForSubjectError extends Error {
  constructor(subject: string) {
    super(`no stream captures subject ${subject}`);
    this.name = 'NoStreamForSubjectError';
  }
}

/**
 * Raised by `publish` when the stream service as a whole is unreachable (the
 * connection is lost or closed, or it answers nothing in time): nothing was
 * published, and every other event would fail alike until it is back.
 */
export class PublisherUnavailableError extends Error {
  constructor(options?: ErrorOptions) {
    super('the event streams are unreachable; nothing was published', options);
    this.name = 'PublisherUnavailableError';
  }
}

/** Durable publication. A thrown error means "not published, try again later". */
export interface EventPublisher {
  /**
   * Creates every declared stream, or adds the declared subjects an existing
   * one lacks (subjects are never removed: nodes of an older version may still
   * publish on them during a rolling deploy), with a duplicate window of at
   * least 10 minutes and the declared maximum age (an existing stream takes
   * the declared one). Declarations with the same name are merged. Idempotent.
   */
  prepare(streams: StreamDeclaration[]): Promise<void>;
  /**
   * Stores one event in the stream capturing its subject. Publishing the same
   * id twice within the duplicate window stores it once.
   * @throws NoStreamForSubjectError (embedded) or the NATS error (cluster) when no stream captures the subject.
   */
  publish(event: PublishedEvent): Promise<void>;
  /**
   * Stores several events as one write, each as `publish` would, in array
   * order (so events of one actor, in order, keep their order), all or none.
   * Optional: a publisher for which one write of many is cheaper than many
   * writes offers it (the embedded log, whose appends of one stream queue on
   * one row); the outbox relay falls back to `publish` one by one when it is
   * absent or when the batch fails (so one bad event holds back only its actor).
   */
  publishMany?(events: PublishedEvent[]): Promise<void>;
  /**
   * Publishes rows of the actor outbox and marks them published, as one
   * write, taking their payloads from the outbox table instead of having them
   * sent again. Optional: only a publisher that keeps its streams in the
   * runtime's own database offers it (the embedded log); the relay then
   * needs no separate mark. All or none, in array order, like publishMany.
   */
  publishFromOutbox?(events: OutboxPublication[]): Promise<void>;
  /**
   * Removes every message of the stream whose subject one of the filters
   * (`*` one token, `>` the rest) takes: an erasure's content must not stay
   * readable by a consumer that starts from the beginning. Idempotent.
   * Optional only for stand-ins in tests; both real publishers offer it.
   */
  purgeSubjects?(stream: string, filters: readonly string[]): Promise<void>;
  /**
   * Calls `listener` each time publication may work again after an outage
   * (the connection is back): the relay then publishes its backlog at once
   * rather than at its next poll. Returns the listener's removal. Optional:
   * a publisher that cannot be unreachable has no such moment.
   */
  onAvailable?(listener: () => void): () => void;
  close(): Promise<void>;
}

/** An outbox row to publish from the outbox table (its payload stays there; `payload` is for in-process listeners). */
export interface OutboxPublication {
  id: string;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
  /** The table keeps no payload for this row (OutgoingEvent.payloadProjected): `payload` is the one to store. */
  payloadProjected?: boolean;
}
