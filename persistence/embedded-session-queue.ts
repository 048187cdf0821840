// The message queue between the embedded database's socket connections and its
// one backend session. PGlite has a single session, so every connection's
// protocol messages run through one queue. The queue pglite-socket ships with
// keeps a connection's messages together only inside a transaction: outside
// one, the messages of two extended-protocol queries (Parse, Bind, Execute,
// Sync, which pg sends for every query with parameters) interleave, the second
// connection's Bind replaces the first one's unnamed portal, and a query fails
// with `portal "" does not exist` (or runs with another query's statement).
// This queue also keeps a connection's extended-protocol messages together up
// to their Sync.
//
// While one connection holds the session (a transaction, or an exchange before
// its Sync), every other connection waits. A holder that stays silent while
// others wait (a transaction left open, or code that waits inside a
// transaction for a query of another connection) would stop the whole node, so
// after `holdTimeoutMs` its connection is closed and its transaction rolled
// back: that request fails, the others go on.
import type { PGlite } from '@electric-sql/pglite';

/** Frontend messages that open (or continue) an extended-protocol exchange, ended by Sync. */
const EXTENDED_QUERY_MESSAGES = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((letter) => letter.charCodeAt(0)));
const SYNC = 'S'.charCodeAt(0);
/** A complete Sync message: type, then its length (4). */
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);

interface PendingMessage {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

export interface SessionQueueOptions {
  /** Longest silence of the session's holder while other connections wait. */
  holdTimeoutMs: number;
  /** Closes a connection (its handler then calls clearQueueForHandler and clearTransactionIfNeeded). */
  terminate(handlerId: number): void;
  /** Told when a silent holder was closed. */
  onHoldTimeout?(handlerId: number, holdTimeoutMs: number): void;
}

/** Same interface as pglite-socket's QueryQueueManager, which the socket handlers call. */
export class EmbeddedSessionQueue {
  private queue: PendingMessage[] = [];
  private processing = false;
  /** The connection whose message ran last (it owns an open transaction). */
  private lastHandlerId: number | null = null;
  /** The connection in the middle of an extended-protocol exchange (before its Sync). */
  private extendedQueryHandlerId: number | null = null;

  /** Fires when the holder stays silent too long while others wait. */
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: PGlite,
    private readonly options: SessionQueueOptions,
  ) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.processQueue();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
    this.queue = this.queue.filter((pending) => {
      if (pending.handlerId !== handlerId) return true;
      pending.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  /** A connection went away: end what it left open in the session, then serve the others. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.holder() === handlerId) this.disarmHoldTimer();
    if (this.extendedQueryHandlerId === handlerId) {
      this.extendedQueryHandlerId = null;
      // Ends the exchange (and leaves the error state a failed one puts the session in).
      await this.db.runExclusive(() => this.db.execProtocolRaw(SYNC_MESSAGE)).catch(() => undefined);
    }
    if (this.lastHandlerId === handlerId) {
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => undefined);
      this.lastHandlerId = null;
    }
    await this.processQueue();
  }

  /** The connection the session belongs to until its exchange or transaction ends, if any. */
  private holder(): number | null {
    if (this.extendedQueryHandlerId !== null) return this.extendedQueryHandlerId;
    return this.db.isInTransaction() ? this.lastHandlerId : null;
  }

  private async processQueue(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const holder = this.holder();
        // The holder's next message has not arrived yet: wait for it (enqueue restarts the loop).
        const index = holder === null ? 0 : this.queue.findIndex((pending) => pending.handlerId === holder);
        if (index === -1) {
          this.watchHolder(holder!);
          break;
        }
        const [pending] = this.queue.splice(index, 1);
        await this.run(pending);
      }
    } finally {
      this.processing = false;
    }
  }

  /**
   * Closes the holder's connection if it is still the silent holder after
   * holdTimeoutMs. Armed once per silence: messages of waiting connections do
   * not postpone it; any message run (the holder's) disarms it.
   */
  private watchHolder(holder: number): void {
    if (this.holdTimer) return;
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      if (this.processing || this.holder() !== holder || !this.queue.some((pending) => pending.handlerId !== holder)) return;
      this.options.onHoldTimeout?.(holder, this.options.holdTimeoutMs);
      this.options.terminate(holder);
    }, this.options.holdTimeoutMs);
    this.holdTimer.unref();
  }

  private disarmHoldTimer(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  private async run(pending: PendingMessage): Promise<void> {
    this.disarmHoldTimer();
    let bytes = 0;
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(pending.message, {
          onRawData: (data) => {
            bytes += data.length;
            pending.onData(data);
          },
        }),
      );
    } catch (error) {
      pending.reject(error);
      return;
    } finally {
      this.lastHandlerId = pending.handlerId;
      const type = pending.message[0];
      if (EXTENDED_QUERY_MESSAGES.has(type)) this.extendedQueryHandlerId = pending.handlerId;
      else if (type === SYNC) this.extendedQueryHandlerId = null;
    }
    pending.resolve(bytes);
  }
}
