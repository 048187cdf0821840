// The event publication port: how the outbox relay hands events to subscribers
// outside the runtime. JetStreamPublisher and MemoryEventPublisher implement it.

/** One event leaving the runtime. */
export interface PublishedEvent {
  /** Unique event id; publication is idempotent per id (JetStream message id). */
  id: string;
  subject: string;
  /** JSON payload. */
  data: string;
}

/** Durable publication. A thrown error means "not published, try again later". */
export interface EventPublisher {
  /** Creates streams or other resources if absent. Idempotent. */
  prepare(): Promise<void>;
  /**
   * Publishes one event. Publishing the same id twice within the duplicate
   * window stores it once.
   */
  publish(event: PublishedEvent): Promise<void>;
  close(): Promise<void>;
}
