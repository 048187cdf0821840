// The event publication port: how the outbox relay hands events to subscribers
// outside the runtime. JetStreamPublisher and MemoryEventPublisher implement it.

/** A stream to create at start: its name and the subjects it captures. */
export interface StreamDeclaration {
  name: string;
  subjects: string[];
}

/** One event leaving the runtime. */
export interface PublishedEvent {
  /** Unique event id; publication is idempotent per id (JetStream message id). */
  id: string;
  subject: string;
  /** JSON payload. */
  data: string;
  /** Message headers (the runtime sets the actor key and the actor's event sequence). */
  headers?: Record<string, string>;
}

/** Durable publication. A thrown error means "not published, try again later". */
export interface EventPublisher {
  /** Creates the streams if absent (duplicate window at least 10 minutes). Idempotent. */
  prepare(streams: StreamDeclaration[]): Promise<void>;
  /**
   * Publishes one event. Publishing the same id twice within the duplicate
   * window stores it once.
   */
  publish(event: PublishedEvent): Promise<void>;
  close(): Promise<void>;
}
