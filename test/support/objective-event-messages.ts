// Reads one objective's messages of the OBJECTIVE_EVENTS stream from NATS, as
// a user consuming the stream directly would: an ephemeral pull consumer
// filtered on the objective (server 2.9 has no multi-filter ordered
// consumers), fetched until the expected count or the deadline.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export async function objectiveEventMessages<T>(natsUrl: string, objectiveId: string, expected: number, timeoutMs: number, read: (message: JsMsg) => T): Promise<T[]> {
  const connection = await connect({ servers: natsUrl });
  try {
    const manager = await jetstreamManager(connection);
    // By stream sequence: a message read twice (by two consumers, below) counts once.
    const messages = new Map<number, T>();
    const deadline = Date.now() + timeoutMs;
    while (messages.size < expected && Date.now() < deadline) {
      // A consumer of its own per pass, from the stream's start: with no acks, a message the server handed to a
      // fetch that then failed is never handed again to that consumer.
      const info = await manager.consumers.add('OBJECTIVE_EVENTS', {
        filter_subject: `objective_events.*.*.*.${objectiveId}.>`, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, inactive_threshold: 60_000_000_000,
      });
      const consumer = await jetstream(connection).consumers.get('OBJECTIVE_EVENTS', info.name);
      try {
        while (messages.size < expected && Date.now() < deadline) {
          const batch = await consumer.fetch({ max_messages: expected, expires: 1000 });
          let received = 0;
          for await (const message of batch) {
            received += 1;
            messages.set(message.info.streamSequence, read(message));
          }
          // Nothing more came within the expiry: read again from the start with a new consumer.
          if (received === 0) break;
        }
      } catch (error) {
        // A fetch gives up after two missed idle heartbeats (half its expiry each), which a busy box can make
        // it miss just before the request expires; what it was handed is lost to this consumer: start again.
        if (!(error instanceof Error && error.message.includes('heartbeats missed'))) throw error;
      } finally {
        await manager.consumers.delete('OBJECTIVE_EVENTS', info.name).catch(() => undefined);
      }
    }
    return [...messages.entries()].sort(([a], [b]) => a - b).map(([, message]) => message);
  } finally {
    await connection.close();
  }
}
