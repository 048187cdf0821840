// A durable consumer's claim of the embedded event log as one call: the acks
// the consumer has made since its last claim are deleted, its row is locked,
// and its next messages are taken, each step a statement of its own inside
// the function (a PL/pgSQL statement takes a new snapshot, so the claim sees
// every claim committed before the lock was granted: two claimers of one
// durable never take one message nor exceed its maximum pending together).
// The client used to send BEGIN, the lock, the claim, COMMIT and the acks'
// DELETE: five statements, each a round trip and a wake-up of the backend.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class EmbeddedStreamClaim1763827200000 implements MigrationInterface {
  name = 'EmbeddedStreamClaim1763827200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION embedded_stream_claim(p_stream text, p_durable text, p_limit integer, p_acked bigint[])
      RETURNS TABLE (seq bigint, subject text, message_id text, payload text, headers jsonb, delivery_count integer)
      LANGUAGE plpgsql VOLATILE AS $claim$
      #variable_conflict use_column
      DECLARE
        v_ack_wait_ms integer;
        v_max_ack_pending integer;
      BEGIN
        IF cardinality(p_acked) > 0 THEN
          DELETE FROM embedded_stream_deliveries d WHERE d.stream = p_stream AND d.durable_name = p_durable AND d.seq = ANY(p_acked);
        END IF;
        -- NO KEY UPDATE: claimers of the durable queue behind each other, appends checking their foreign key do not.
        SELECT c.ack_wait_ms, c.max_ack_pending INTO v_ack_wait_ms, v_max_ack_pending
        FROM embedded_stream_consumers c WHERE c.stream = p_stream AND c.durable_name = p_durable FOR NO KEY UPDATE;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        RETURN QUERY
        WITH pending AS (
          SELECT count(*)::int AS n FROM embedded_stream_deliveries d WHERE d.stream = p_stream AND d.durable_name = p_durable AND d.delivery_count > 0
        ), candidates AS (
          (SELECT d.seq FROM embedded_stream_deliveries d
           WHERE d.stream = p_stream AND d.durable_name = p_durable AND d.delivery_count > 0 AND d.visible_at <= now() ORDER BY d.seq LIMIT p_limit)
          UNION ALL
          (SELECT d.seq FROM embedded_stream_deliveries d
           WHERE d.stream = p_stream AND d.durable_name = p_durable AND d.delivery_count = 0 ORDER BY d.seq
           LIMIT GREATEST(0, LEAST(p_limit, v_max_ack_pending - (SELECT n FROM pending))))
        ), picked AS (
          SELECT candidates.seq FROM candidates ORDER BY candidates.seq LIMIT p_limit
        )
        UPDATE embedded_stream_deliveries delivery
        SET delivery_count = delivery.delivery_count + 1, visible_at = now() + v_ack_wait_ms * interval '1 millisecond'
        FROM picked JOIN embedded_stream_messages message ON message.stream = p_stream AND message.seq = picked.seq
        WHERE delivery.stream = p_stream AND delivery.durable_name = p_durable AND delivery.seq = picked.seq
        RETURNING delivery.seq, message.subject, message.message_id, message.payload, message.headers, delivery.delivery_count;
      END
      $claim$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP FUNCTION embedded_stream_claim(text, text, integer, bigint[])');
  }
}
