// The embedded event log: in embedded mode (no NATS) the streams the runtime
// publishes to, their messages and their durable consumers live here, so
// events and consumer positions survive a restart of the node like they do in
// JetStream. One row per (consumer, message) not yet acked holds its delivery
// state: how often it was delivered and when it may be delivered (again).
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class EmbeddedEventLog1763812800000 implements MigrationInterface {
  name = 'EmbeddedEventLog1763812800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE embedded_streams (
        name text CONSTRAINT pk_embedded_streams PRIMARY KEY,
        subjects text[] NOT NULL,
        last_seq bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE embedded_stream_messages (
        stream text NOT NULL CONSTRAINT fk_embedded_stream_messages_stream REFERENCES embedded_streams (name) ON DELETE CASCADE,
        seq bigint NOT NULL,
        subject text NOT NULL,
        message_id text NOT NULL,
        payload text NOT NULL,
        headers jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_embedded_stream_messages PRIMARY KEY (stream, seq),
        CONSTRAINT uq_embedded_stream_messages_message_id UNIQUE (stream, message_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE embedded_stream_consumers (
        stream text NOT NULL CONSTRAINT fk_embedded_stream_consumers_stream REFERENCES embedded_streams (name) ON DELETE CASCADE,
        durable_name text NOT NULL,
        filter_subject text,
        filter_regex text,
        ack_wait_ms integer NOT NULL CONSTRAINT ck_embedded_stream_consumers_ack_wait CHECK (ack_wait_ms > 0),
        max_ack_pending integer NOT NULL CONSTRAINT ck_embedded_stream_consumers_max_ack_pending CHECK (max_ack_pending > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_embedded_stream_consumers PRIMARY KEY (stream, durable_name),
        CONSTRAINT ck_embedded_stream_consumers_filter CHECK ((filter_subject IS NULL) = (filter_regex IS NULL))
      )`);
    await queryRunner.query(`
      CREATE TABLE embedded_stream_deliveries (
        stream text NOT NULL,
        durable_name text NOT NULL,
        seq bigint NOT NULL,
        delivery_count integer NOT NULL DEFAULT 0,
        visible_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_embedded_stream_deliveries PRIMARY KEY (stream, durable_name, seq),
        CONSTRAINT fk_embedded_stream_deliveries_consumer FOREIGN KEY (stream, durable_name)
          REFERENCES embedded_stream_consumers (stream, durable_name) ON DELETE CASCADE,
        CONSTRAINT fk_embedded_stream_deliveries_message FOREIGN KEY (stream, seq)
          REFERENCES embedded_stream_messages (stream, seq) ON DELETE CASCADE
      )`);
    // Deleting a message (a future retention sweep) looks its deliveries up by (stream, seq); the primary key leads with the durable name.
    await queryRunner.query('CREATE INDEX ix_embedded_stream_deliveries_message ON embedded_stream_deliveries (stream, seq)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE embedded_stream_deliveries');
    await queryRunner.query('DROP TABLE embedded_stream_consumers');
    await queryRunner.query('DROP TABLE embedded_stream_messages');
    await queryRunner.query('DROP TABLE embedded_streams');
  }
}
