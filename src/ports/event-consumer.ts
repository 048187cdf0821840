// The durable consumer port: how actors (the webhook endpoints first) read the
// streams the runtime publishes to, with a position every node shares and
// that outlives them. JetStreamConsumers (cluster, a durable JetStream pull
// consumer) and EmbeddedEventLog (embedded mode, kept in the database)
// implement it with the same guarantees, checked by one contract suite
// (test/runtime/event-consumers.test.ts).
//
// Guarantees, both implementations:
// - At least once. A delivered message stays pending until it is acked; it is
//   delivered again (deliveryCount + 1) when it is nak'ed (after the nak
//   delay) or when it was not acked within `ackWaitMs` of its delivery.
// - The handler must ack or nak. One that throws is nak'ed with
//   `errorRedeliveryDelayMs`; one that returns without either leaves the
//   message pending, so it comes back after `ackWaitMs`. Ack or nak after the
//   first is ignored.
// - Durable. What was acked is kept by the broker (JetStream) or the database
//   (embedded): a consumer stopped and started again with the same durable
//   name, on this node or after a restart of the node, goes on after the last
//   acked message; nothing acked comes back, nothing unacked is lost. A new
//   durable starts at the beginning of the stream.
// - Shared. Consumers with the same stream and durable name (one per node)
//   share the messages: each message is with one of them at a time.
// - One at a time. A handle calls its handler for one message at a time, in
//   the order the messages were delivered to it.
// - Order. With `maxAckPending: 1` a single message of the durable is pending
//   at a time, across all nodes, so messages are handled in stream order (and
//   every subject in its publication order), redeliveries included. The one
//   exception: a message whose ack wait passes while its handler still runs is
//   delivered again (maybe to another node) beside the running call; keep
//   `ackWaitMs` above the handler's running time and handlers idempotent.
//   With a larger `maxAckPending` first deliveries come in stream order, but a
//   redelivered message comes after later ones, and nodes handle messages side
//   by side: no order holds, even within a subject.

/** What to consume and how. */
export interface DurableConsumerSpec {
  stream: string;
  /** Shared by every node consuming together; `[A-Za-z0-9_-]{1,64}`. */
  durableName: string;
  /** Only messages whose subject matches this pattern (`*`, `>`); every message of the stream when unset. Fixed at creation. */
  filterSubject?: string;
  /** How long a delivered message may stay unacked before it is delivered again. @default 30000 */
  ackWaitMs?: number;
  /** How many messages may be pending (delivered, not acked) at once, across all nodes. @default 1000 */
  maxAckPending?: number;
  /** The nak delay applied when the handler throws. @default 1000 */
  errorRedeliveryDelayMs?: number;
  /**
   * The durable this one replaces (a name an earlier version used): a new
   * durable starts after that one's acknowledged messages, not at the
   * beginning of the stream, when it exists. The old durable is left as it
   * is. JetStream only: the embedded log never renamed a durable.
   */
  takeOverFrom?: string;
  /**
   * A new durable without a predecessor to take over starts at the first
   * message stored at or after this time, not at the beginning of the stream
   * (older messages cannot concern it: a cluster's durable on a stream shared
   * with other clusters). JetStream only: the embedded log is the cluster's own.
   */
  notBefore?: Date;
}

/** One delivery of one stored message. */
export interface ConsumedEvent {
  /** The message id given at publication (the event id); `<stream>:<sequence>` for a message published to JetStream without one. */
  id: string;
  subject: string;
  /** The payload as published. */
  data: string;
  /** The publisher's headers (NATS's own `Nats-*` headers left out: the message id is `id`). */
  headers: Record<string, string>;
  /** The message's position in its stream: increases with publication order (gaps possible in embedded mode). */
  streamSequence: number;
  /** 1 for the first delivery, then one more per redelivery. */
  deliveryCount: number;
  /**
   * Marks the message done: it is not delivered again. On JetStream the ack
   * is sent without waiting for the server's confirmation, so a lost ack
   * means one redelivery after the ack wait: handlers must be idempotent by
   * `id` (they are: at-least-once delivery).
   */
  ack(): Promise<void>;
  /** Hands the message back: delivered again after `delayMs` (at once when unset or 0). */
  nak(delayMs?: number): Promise<void>;
}

/** A running consumer. */
export interface ConsumerHandle {
  /**
   * Stops: no handler call starts once this is called; resolves when the
   * running one has returned. Messages received but not handled yet are
   * delivered again, at the latest after their ack wait (the embedded log
   * hands them back at once; JetStream keeps them pending, see
   * jetstream-consumers.ts). The durable position stays.
   */
  stop(): Promise<void>;
}

/** Raised when the stream to consume from has not been declared (EventPublisher.prepare). */
export class StreamNotFoundError extends Error {
  constructor(stream: string, options?: ErrorOptions) {
    super(`stream ${stream} not found`, options);
    this.name = 'StreamNotFoundError';
  }
}

/** Raised when a durable consumer exists with another filter subject, which cannot change once created. */
export class DurableConsumerConflictError extends Error {
  constructor(stream: string, durableName: string, existingFilter: string | undefined, requestedFilter: string | undefined) {
    super(
      `durable consumer ${durableName} of stream ${stream} filters ${existingFilter ?? 'nothing'}, not ${requestedFilter ?? 'nothing'}: use another durable name`,
    );
    this.name = 'DurableConsumerConflictError';
  }
}

/** Durable consumers on the declared streams. */
export interface EventConsumers {
  /**
   * Creates the durable consumer if absent (or updates its ack wait and
   * maximum pending) and starts handing its messages to `handler`.
   * @throws StreamNotFoundError when the stream is not declared.
   * @throws DurableConsumerConflictError when the durable exists with another filter subject.
   * @throws InvalidArgumentError on a malformed spec.
   */
  consume(spec: DurableConsumerSpec, handler: (event: ConsumedEvent) => Promise<void>): Promise<ConsumerHandle>;
}
