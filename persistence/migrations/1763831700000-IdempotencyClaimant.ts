// The node that holds an Idempotency-Key claim in progress, so a retry can
// take the claim over as soon as that node's lease has expired (it died)
// instead of after a fixed time; the partial index serves a node's start,
// which drops the claims its earlier run left.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyClaimant1763831700000 implements MigrationInterface {
  name = 'IdempotencyClaimant1763831700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE idempotency_records ADD COLUMN claimed_by text');
    await queryRunner.query('CREATE INDEX idempotency_records_claims_in_progress ON idempotency_records (claimed_by) WHERE status IS NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX idempotency_records_claims_in_progress');
    await queryRunner.query('ALTER TABLE idempotency_records DROP COLUMN claimed_by');
  }
}
