// Reads one objective's messages of the OBJECTIVE_EVENTS stream from NATS, as
// a user consuming the stream directly would: an ephemeral pull consumer
// filtered on the objective (server 2.9 has no multi-filter ordered
// consumers), fetched until the expected count or the deadline.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

export async function objectiveEventMessages<T>(natsUrl: string, objectiveId: string, expected: number, timeoutMs: number, read: (message: JsMsg) => T): Promise<T[]> {
  const connection = await connect({ servers: natsUrl });
  try {
    const info = await (await jetstreamManager(connection)).consumers.add('OBJECTIVE_EVENTS', {
      filter_subject: `objective_events.*.*.*.${objectiveId}.>`, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, inactive_threshold: 60_000_000_000,
    });
    const consumer = await jetstream(connection).consumers.get('OBJECTIVE_EVENTS', info.name);
    const messages: T[] = [];
    const deadline = Date.now() + timeoutMs;
    while (messages.length < expected && Date.now() < deadline) {
      const batch = await consumer.fetch({ max_messages: expected - messages.length, expires: 1000 });
      try {
        for await (const message of batch) messages.push(read(message));
      } catch (error) {
        // A fetch gives up after two missed idle heartbeats (half its expiry each), which a busy box can make
        // it miss just before the request expires: fetch again until the deadline, as after an expiry.
        if (!(error instanceof Error && error.message.includes('heartbeats missed'))) throw error;
      }
    }
    return messages;
  } finally {
    await connection.close();
  }
}
