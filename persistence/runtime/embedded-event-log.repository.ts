// The embedded event log's tables (migration 1763812800000-EmbeddedEventLog):
// streams, their messages, durable consumers and the delivery state of every
// unacked (consumer, message). Every statement is short and no transaction
// waits on anything but the database: the embedded database (PGlite) runs one
// transaction at a time for the whole node.
//
// Why it is safe on a real Postgres with concurrent callers too:
// - An append bumps its stream's `last_seq` (a row lock held until commit), so
//   sequences are committed in order and a consumer never skips one.
// - An append writes the delivery rows of the consumers that exist; creating a
//   consumer locks the messages table against appends (SHARE ROW EXCLUSIVE,
//   taken before the append's snapshot) while it copies the existing
//   messages, so a message is neither missed nor given twice.
// - A claim first locks its consumer row, then claims in a statement of its
//   own (a function: one round trip), so two claimers of one durable never
//   take the same message nor exceed its maximum pending together.
// - Nothing is deleted but acked delivery rows: messages are kept, like a
//   JetStream stream without limits, and a durable never loses its position.
import type { StreamDeclaration } from '../../src/ports/event-publisher';
import { DurableConsumerConflictError, StreamNotFoundError } from '../../src/ports/event-consumer';
import { subjectPatternRegex } from '../../src/events/subject-pattern';
import type { ResolvedConsumerSpec } from '../../src/events/consumer-spec';
import type { RuntimeDatabase } from './runtime-database';
import { STILL_UNPUBLISHED } from './actor-outbox.repository';

/** One message to store. */
export interface AppendedMessage {
  stream: string;
  subject: string;
  messageId: string;
  payload: string;
  headers: Record<string, string>;
}

/** One message handed to a consumer, with its delivery count after this delivery. */
export interface ClaimedMessage {
  seq: number;
  subject: string;
  messageId: string;
  payload: string;
  headers: Record<string, string>;
  deliveryCount: number;
}

/** The consumer a claim, ack or nak is for. */
export interface ConsumerKey {
  stream: string;
  durableName: string;
}

/**
 * The end of an append, after a CTE `input(stream, subject, message_id,
 * payload, headers, ord)`: each stream's `last_seq` bumped once by the number
 * of its new messages (one row lock per stream and batch), which are numbered
 * in `ord` order, ids stored before left out, a delivery row for every
 * consumer whose filter takes a message; answers the messages stored.
 */
const APPEND_INPUT = `fresh AS (
         SELECT i.*, row_number() OVER (PARTITION BY i.stream ORDER BY i.ord) AS n, count(*) OVER (PARTITION BY i.stream) AS total
         FROM input i
         WHERE NOT EXISTS (SELECT 1 FROM embedded_stream_messages m WHERE m.stream = i.stream AND m.message_id = i.message_id)
       ), stream AS (
         UPDATE embedded_streams s SET last_seq = s.last_seq + t.total
         FROM (SELECT stream, max(total) AS total FROM fresh GROUP BY stream) t
         WHERE s.name = t.stream
         RETURNING s.name, s.last_seq
       ), message AS (
         INSERT INTO embedded_stream_messages (stream, seq, subject, message_id, payload, headers)
         SELECT f.stream, stream.last_seq - f.total + f.n, f.subject, f.message_id, f.payload, f.headers
         FROM fresh f JOIN stream ON stream.name = f.stream
         ON CONFLICT ON CONSTRAINT uq_embedded_stream_messages_message_id DO NOTHING
         RETURNING stream, seq, subject, message_id
       ), deliveries AS (
         INSERT INTO embedded_stream_deliveries (stream, durable_name, seq)
         SELECT consumer.stream, consumer.durable_name, message.seq
         FROM message JOIN embedded_stream_consumers consumer
           ON consumer.stream = message.stream AND (consumer.filter_regex IS NULL OR message.subject ~ consumer.filter_regex)
       )
       SELECT stream, message_id FROM message`;

/** Reads and writes the embedded streams. */
export class EmbeddedEventLogRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /** Creates the streams, or adds the subjects they lack (keeping the existing ones and their order). */
  async declareStreams(streams: StreamDeclaration[]): Promise<void> {
    for (const stream of streams) {
      await this.database.query(
        `INSERT INTO embedded_streams (name, subjects) VALUES ($1, $2)
         ON CONFLICT ON CONSTRAINT pk_embedded_streams DO UPDATE
           SET subjects = embedded_streams.subjects
             || ARRAY(SELECT subject FROM unnest(EXCLUDED.subjects) WITH ORDINALITY AS declared(subject, position)
                      WHERE subject <> ALL (embedded_streams.subjects) ORDER BY position)
         WHERE NOT EXCLUDED.subjects <@ embedded_streams.subjects`,
        [stream.name, stream.subjects],
      );
    }
  }

  /**
   * Deletes the stream's messages whose subject matches one of the regular
   * expressions (subjectPatternRegex), with their pending deliveries (the
   * foreign key cascades): a purge by subject, as JetStream's.
   */
  async purge(stream: string, subjectRegexes: readonly string[]): Promise<void> {
    if (!subjectRegexes.length) return;
    await this.database.query('DELETE FROM embedded_stream_messages WHERE stream = $1 AND subject ~ ANY($2::text[])', [stream, subjectRegexes]);
  }

  /**
   * Deletes up to `limit` of the stream's oldest messages stored before
   * `cutoff` (a stream's maximum age), their pending deliveries with them.
   * Reads the first `limit` messages by sequence only (stored in time order),
   * so a stream with nothing to expire costs one short index read.
   * @returns how many were deleted
   */
  async expire(stream: string, cutoff: Date, limit: number): Promise<number> {
    const [row] = await this.database.query<{ count: number }>(
      `WITH expired AS (
         DELETE FROM embedded_stream_messages WHERE stream = $1 AND seq <= (
           SELECT max(seq) FROM (SELECT seq, created_at FROM embedded_stream_messages WHERE stream = $1 ORDER BY seq LIMIT $3) oldest
           WHERE created_at < $2)
         RETURNING 1)
       SELECT count(*)::int AS count FROM expired`,
      [stream, cutoff, limit],
    );
    return row?.count ?? 0;
  }

  /** Every stream with its subjects. */
  async listStreams(): Promise<StreamDeclaration[]> {
    const rows = await this.database.query<{ name: string; subjects: string[] }>('SELECT name, subjects FROM embedded_streams ORDER BY name');
    return rows.map((row) => ({ name: row.name, subjects: row.subjects }));
  }

  /**
   * Stores a message with the next sequence of its stream and a delivery row
   * for every consumer whose filter takes it, in one statement.
   * @returns the message's sequence, or null when the id was stored before (or the stream does not exist).
   */
  async append(message: AppendedMessage): Promise<number | null> {
    const rows = await this.database.query<{ seq: string }>(
      `WITH stream AS (
         UPDATE embedded_streams SET last_seq = last_seq + 1
         WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM embedded_stream_messages WHERE stream = $1 AND message_id = $3)
         RETURNING name, last_seq
       ), message AS (
         INSERT INTO embedded_stream_messages (stream, seq, subject, message_id, payload, headers)
         SELECT name, last_seq, $2, $3, $4, $5::jsonb FROM stream
         ON CONFLICT ON CONSTRAINT uq_embedded_stream_messages_message_id DO NOTHING
         RETURNING stream, seq, subject
       ), deliveries AS (
         INSERT INTO embedded_stream_deliveries (stream, durable_name, seq)
         SELECT consumer.stream, consumer.durable_name, message.seq
         FROM message JOIN embedded_stream_consumers consumer
           ON consumer.stream = message.stream AND (consumer.filter_regex IS NULL OR message.subject ~ consumer.filter_regex)
       )
       SELECT seq FROM message`,
      [message.stream, message.subject, message.messageId, message.payload, JSON.stringify(message.headers)],
    );
    return rows.length ? Number(rows[0].seq) : null;
  }

  /**
   * Stores several messages as append would, in one statement: each stream's
   * `last_seq` is bumped once by the number of its new messages (one row lock
   * per stream and batch instead of one per message), which are numbered in
   * array order. Messages whose id was stored before are left out.
   * @returns the stream and id of each message stored (the new ones).
   */
  async appendMany(messages: AppendedMessage[]): Promise<Array<{ stream: string; messageId: string }>> {
    if (!messages.length) return [];
    const rows = await this.database.query<{ stream: string; message_id: string }>(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS i(stream, subject, message_id, payload, headers, ord)
       ), ${APPEND_INPUT}`,
      [
        messages.map((message) => message.stream),
        messages.map((message) => message.subject),
        messages.map((message) => message.messageId),
        messages.map((message) => message.payload),
        messages.map((message) => JSON.stringify(message.headers)),
      ],
    );
    return rows.map((row) => ({ stream: row.stream, messageId: row.message_id }));
  }

  /**
   * Stores outbox rows as appendMany would, taking subject, payload and
   * headers from `actor_outbox` (the payload given here for a row that keeps
   * none), and marks those rows published, in one statement: a row is stored
   * and marked together or neither. Rows already marked are left out, and so
   * are ids the stream holds already (still marked).
   * @returns the stream and id of each message stored (the new ones).
   */
  async appendFromOutbox(rows: Array<{ id: string; stream: string; payload?: string }>): Promise<Array<{ stream: string; messageId: string }>> {
    if (!rows.length) return [];
    const stored = await this.database.query<{ stream: string; message_id: string }>(
      `WITH marked AS (
         UPDATE actor_outbox SET published_at = now() WHERE id = ANY($1::text[]) AND ${STILL_UNPUBLISHED}
         RETURNING id, subject, payload, headers
       ), input AS (
         SELECT o.stream, m.subject, m.id AS message_id, coalesce(m.payload::text, o.payload) AS payload, coalesce(m.headers, '{}'::jsonb) AS headers, o.ord
         FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), json_array_elements_text($3::json)) WITH ORDINALITY AS o(id, stream, payload, ord)
         JOIN marked m ON m.id = o.id
       ), ${APPEND_INPUT}`,
      // The payloads as one JSON array: as a text[] the driver would escape every quote of every payload into an array literal.
      [rows.map((row) => row.id), rows.map((row) => row.stream), JSON.stringify(rows.map((row) => row.payload ?? null))],
      { preparedAs: 'agentrt_embedded_append_from_outbox' },
    );
    return stored.map((row) => ({ stream: row.stream, messageId: row.message_id }));
  }

  /**
   * Creates the durable consumer with a delivery row for every message its
   * filter takes (a new durable starts at the beginning of the stream), or
   * brings an existing one's ack wait and maximum pending to the spec.
   * @throws StreamNotFoundError when the stream is not declared.
   * @throws DurableConsumerConflictError when the durable exists with another filter.
   */
  async ensureConsumer(spec: ResolvedConsumerSpec): Promise<void> {
    for (;;) {
      const [existing] = await this.database.query<{ filter_subject: string | null; ack_wait_ms: number; max_ack_pending: number }>(
        'SELECT filter_subject, ack_wait_ms, max_ack_pending FROM embedded_stream_consumers WHERE stream = $1 AND durable_name = $2',
        [spec.stream, spec.durableName],
      );
      if (existing) return this.updateConsumer(spec, existing);
      if (await this.createConsumer(spec)) return;
      // Another caller created it between our read and our insert: check its filter like any existing one.
    }
  }

  /**
   * Removes the acked messages from the consumer's pending ones, then hands
   * its next deliverable messages over, in stream order: messages due for
   * redelivery, then new ones while fewer than its maximum are pending. Each
   * becomes invisible for the ack wait. One call of embedded_stream_claim
   * (migration EmbeddedStreamClaim): the acks, the consumer's lock and the
   * claim in one round trip.
   */
  async claim(consumer: ConsumerKey, limit: number, acked: readonly number[] = []): Promise<ClaimedMessage[]> {
    const rows = await this.database.query<{ seq: string; subject: string; message_id: string; payload: string; headers: Record<string, string>; delivery_count: number }>(
      'SELECT seq, subject, message_id, payload, headers, delivery_count FROM embedded_stream_claim($1, $2, $3::int, $4::bigint[])',
      [consumer.stream, consumer.durableName, limit, acked],
      { preparedAs: 'agentrt_embedded_stream_claim' },
    );
    return rows
      .map((row) => ({ seq: Number(row.seq), subject: row.subject, messageId: row.message_id, payload: row.payload, headers: row.headers, deliveryCount: row.delivery_count }))
      .sort((a, b) => a.seq - b.seq);
  }

  /** Milliseconds until the consumer's next pending message may be delivered again, or null when none waits. */
  async nextRedeliveryInMs(consumer: ConsumerKey): Promise<number | null> {
    const [row] = await this.database.query<{ wait_ms: number | null }>(
      `SELECT (EXTRACT(EPOCH FROM min(visible_at) - now()) * 1000)::double precision AS wait_ms
       FROM embedded_stream_deliveries WHERE stream = $1 AND durable_name = $2 AND delivery_count > 0`,
      [consumer.stream, consumer.durableName],
    );
    return row?.wait_ms ?? null;
  }

  /** Removes the messages from the consumer's pending ones: they are never delivered to it again. */
  async ack(consumer: ConsumerKey, seqs: readonly number[]): Promise<void> {
    await this.database.query('DELETE FROM embedded_stream_deliveries WHERE stream = $1 AND durable_name = $2 AND seq = ANY($3::bigint[])', [consumer.stream, consumer.durableName, seqs]);
  }

  /**
   * Makes the message deliverable again after `delayMs`, unless it was
   * redelivered since `deliveryCount` (a later delivery owns it now).
   */
  async nak(consumer: ConsumerKey, seq: number, deliveryCount: number, delayMs: number): Promise<void> {
    await this.database.query(
      `UPDATE embedded_stream_deliveries SET visible_at = now() + $5::double precision * interval '1 millisecond'
       WHERE stream = $1 AND durable_name = $2 AND seq = $3 AND delivery_count = $4`,
      [consumer.stream, consumer.durableName, seq, deliveryCount, delayMs],
    );
  }

  private async updateConsumer(spec: ResolvedConsumerSpec, existing: { filter_subject: string | null; ack_wait_ms: number; max_ack_pending: number }): Promise<void> {
    const existingFilter = existing.filter_subject ?? undefined;
    if (existingFilter !== spec.filterSubject) throw new DurableConsumerConflictError(spec.stream, spec.durableName, existingFilter, spec.filterSubject);
    if (existing.ack_wait_ms === spec.ackWaitMs && existing.max_ack_pending === spec.maxAckPending) return;
    await this.database.query('UPDATE embedded_stream_consumers SET ack_wait_ms = $3, max_ack_pending = $4 WHERE stream = $1 AND durable_name = $2', [
      spec.stream,
      spec.durableName,
      spec.ackWaitMs,
      spec.maxAckPending,
    ]);
  }

  /** @returns false when the consumer existed already (created by a concurrent caller). */
  private async createConsumer(spec: ResolvedConsumerSpec): Promise<boolean> {
    const filterRegex = spec.filterSubject === undefined ? null : subjectPatternRegex(spec.filterSubject);
    return this.database.transaction(async (sql) => {
      const [stream] = await sql.query('SELECT 1 FROM embedded_streams WHERE name = $1', [spec.stream]);
      if (!stream) throw new StreamNotFoundError(spec.stream);
      await sql.query('LOCK TABLE embedded_stream_messages IN SHARE ROW EXCLUSIVE MODE');
      const created = await sql.query(
        `INSERT INTO embedded_stream_consumers (stream, durable_name, filter_subject, filter_regex, ack_wait_ms, max_ack_pending)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT ON CONSTRAINT pk_embedded_stream_consumers DO NOTHING RETURNING 1`,
        [spec.stream, spec.durableName, spec.filterSubject ?? null, filterRegex, spec.ackWaitMs, spec.maxAckPending],
      );
      if (created.length === 0) return false;
      await sql.query(
        `INSERT INTO embedded_stream_deliveries (stream, durable_name, seq)
         SELECT stream, $2, seq FROM embedded_stream_messages WHERE stream = $1 AND ($3::text IS NULL OR subject ~ $3)`,
        [spec.stream, spec.durableName, filterRegex],
      );
      return true;
    });
  }
}
