// The Bus port over core NATS (nats.js v3): request/reply with the mux inbox,
// callback subscriptions. Translates the client's errors into the port's.
// Types come from nats-core, which transport-node pins exactly and re-exports at
// run time; its `lib/mod.d.ts` only resolves the `internal` subpath under node16.
import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMessage, type BusSubscription } from '../../src/ports/bus';

function toBusMessage(msg: Msg): BusMessage {
  return {
    subject: msg.subject,
    data: msg.string(),
    respond: (data: string) => {
      if (msg.reply) msg.respond(data);
    },
  };
}

interface ClientError {
  name?: string;
  cause?: ClientError;
  isNoResponders?: () => boolean;
}

// nats.js raises RequestError (cause NoRespondersError) or TimeoutError; matched by name
// so this file needs no run-time import of nats-core.
function translateRequestError(error: unknown, subject: string, timeoutMs: number): unknown {
  const failure = error as ClientError;
  if (failure?.isNoResponders?.() || failure?.name === 'NoRespondersError') return new NoRespondersError(subject);
  if (failure?.name === 'TimeoutError' || failure?.cause?.name === 'TimeoutError') return new RequestTimeoutError(subject, timeoutMs);
  return error;
}

/** A Bus on an open NATS connection. `close()` drains it unless the connection is shared (`ownsConnection: false`). */
export class NatsBus implements Bus {
  constructor(
    private readonly connection: NatsConnection,
    private readonly ownsConnection = true,
  ) {}

  async request(subject: string, data: string, timeoutMs: number): Promise<string> {
    try {
      const reply = await this.connection.request(subject, data, { timeout: timeoutMs });
      return reply.string();
    } catch (error) {
      throw translateRequestError(error, subject, timeoutMs);
    }
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
    if (this.ownsConnection && !this.connection.isClosed()) await this.connection.drain();
  }
}
