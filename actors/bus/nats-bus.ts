// The Bus port over core NATS (nats.js v3): request/reply over one inbox
// subscription of our own, callback subscriptions. Translates the client's
// errors into the port's. The client re-sends every subscription (the inbox
// included) after a reconnect; `connected()` says whether it is connected now.
// Types come from nats-core, which transport-node pins exactly and re-exports at
// run time; its `lib/mod.d.ts` only resolves the `internal` subpath under node16.
import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMessage, type BusSubscription } from '../../src/ports/bus';
import { closeNatsConnection, NatsConnectionWatch } from './nats-connection';

function toBusMessage(msg: Msg): BusMessage {
  return {
    subject: msg.subject,
    data: msg.string(),
    respond: (data: string) => {
      if (msg.reply) msg.respond(data);
    },
  };
}

/** A request waiting for its reply. */
interface Waiter {
  subject: string;
  resolve: (data: string) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/** The inbox every reply to this bus's requests arrives on: `<prefix><token>`, one token per request. */
interface ReplyInbox {
  prefix: string;
  waiting: Map<string, Waiter>;
  next: number;
}

/** nats-server's answer to a request on a subject nobody subscribes to (headers only, no payload). */
const isNoResponders = (msg: Msg) => msg.data.length === 0 && msg.headers?.code === 503;

/** A Bus on an open NATS connection. `close()` drains it unless the connection is shared (`ownsConnection: false`). */
export class NatsBus implements Bus {
  private inbox: ReplyInbox | undefined;
  private readonly watch: NatsConnectionWatch;

  constructor(
    private readonly connection: NatsConnection,
    private readonly ownsConnection = true,
  ) {
    this.watch = NatsConnectionWatch.of(connection);
  }

  /** False while the client reconnects (subscriptions and the reply inbox come back with the connection) and once closed. */
  connected(): boolean {
    return this.watch.connected();
  }

  /**
   * Publishes with a reply subject on this bus's inbox and waits for the
   * reply. The same wire exchange as nats.js's `request`, without the three
   * Error objects (stack traces included) it builds for every request.
   */
  request(subject: string, data: string, timeoutMs: number): Promise<string> {
    const inbox = (this.inbox ??= this.openInbox());
    const token = (inbox.next++).toString(36);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        inbox.waiting.delete(token);
        reject(new RequestTimeoutError(subject, timeoutMs));
      }, timeoutMs);
      inbox.waiting.set(token, { subject, resolve, reject, timer });
      try {
        this.connection.publish(subject, data, { reply: inbox.prefix + token });
      } catch (error) {
        clearTimeout(timer);
        inbox.waiting.delete(token);
        reject(error);
      }
    });
  }

  publish(subject: string, data: string): void {
    this.connection.publish(subject, data);
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void): BusSubscription {
    const subscription: Subscription = this.connection.subscribe(pattern, {
      callback: (error, msg) => {
        if (error) return;
        try {
          handler(toBusMessage(msg));
        } catch (failure) {
          // A throw here would close the client's reader: every subscription of the connection would go silent.
          process.emitWarning(`bus handler for ${msg.subject} failed: ${(failure as Error)?.message ?? String(failure)}`);
        }
      },
    });
    return { unsubscribe: () => subscription.unsubscribe() };
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await closeNatsConnection(this.connection);
  }

  // The server handles one connection's SUB before its later PUBs: the first request's reply cannot miss the inbox.
  private openInbox(): ReplyInbox {
    const inbox: ReplyInbox = { prefix: `_INBOX.${randomBytes(12).toString('hex')}.`, waiting: new Map(), next: 0 };
    this.connection.subscribe(`${inbox.prefix}*`, {
      callback: (error, msg) => {
        if (error) return;
        const token = msg.subject.slice(inbox.prefix.length);
        const waiter = inbox.waiting.get(token);
        if (!waiter) return; // timed out already
        inbox.waiting.delete(token);
        clearTimeout(waiter.timer);
        if (isNoResponders(msg)) waiter.reject(new NoRespondersError(waiter.subject));
        else waiter.resolve(msg.string());
      },
    });
    // Requests still waiting when the connection closes would otherwise wait out their timeouts.
    void this.connection.closed().then(() => {
      for (const waiter of inbox.waiting.values()) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error('the NATS connection closed before the reply'));
      }
      inbox.waiting.clear();
    });
    return inbox;
  }
}
