// The message bus port: request/reply and subscriptions on dot-separated
// subjects with `*` and `>` wildcards. NatsBus and MemoryBus implement it; no
// code above this interface knows which one runs.
import { UnavailableError } from '../errors';
import { unavailableMessage } from './dependency-health';

/** A message received by a subscription. */
export interface BusMessage {
  readonly subject: string;
  /** The UTF-8 payload. */
  readonly data: string;
  /** Replies to the requester; a no-op when the sender did not ask for a reply. */
  respond(data: string): void;
}

/** A live subscription; `unsubscribe` is synchronous and idempotent, after it no message is handed over. */
export interface BusSubscription {
  unsubscribe(): void;
}

/** Raised by `request` when no subscriber listens on the subject (the shard is unowned or moving). */
export class NoRespondersError extends Error {
  constructor(subject: string) {
    super(`no responders on ${subject}`);
    this.name = 'NoRespondersError';
  }
}

/** Raised by `request` when no reply came within the timeout. */
export class RequestTimeoutError extends Error {
  constructor(subject: string, timeoutMs: number) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/**
 * What a call over the bus answers while the bus cannot reach its server:
 * UNAVAILABLE naming the message bus, retry after 1 s. A class of its own so
 * that the runtime's logger knows it for the NATS outage it is (one warning
 * per outage, not one per call) and the database's classifier never takes its
 * socket error for Postgres's.
 */
export class BusUnavailableError extends UnavailableError {
  constructor(options: { cause?: unknown } = {}) {
    super(unavailableMessage('nats'), { retryAfterSeconds: 1, cause: options.cause });
    this.name = 'BusUnavailableError';
  }
}

/** Request/reply and subscriptions. Messages on one subject from one sender arrive in order. */
export interface Bus {
  /**
   * Sends a request and waits for the first reply.
   * @throws NoRespondersError when nobody subscribes to the subject.
   * @throws RequestTimeoutError when no reply arrives within `timeoutMs`.
   */
  request(subject: string, data: string, timeoutMs: number): Promise<string>;
  /** Fire-and-forget publication; delivered to current subscribers, lost when there are none. */
  publish(subject: string, data: string): void;
  /**
   * Subscribes with a subject pattern; the handler runs once per message, in
   * arrival order. A handler that throws loses that message only (reported as
   * a process warning); the subscription and the bus keep working.
   */
  subscribe(pattern: string, handler: (message: BusMessage) => void): BusSubscription;
  /**
   * Whether the bus reaches its server now: false while a networked bus has
   * lost its connection (it reconnects on its own; requests sent meanwhile
   * wait for it or time out), so a caller can answer "unavailable" at once.
   * Optional: an in-process bus is always connected.
   */
  connected?(): boolean;
  /** Flushes pending publications and closes; later calls fail. */
  close(): Promise<void>;
}
