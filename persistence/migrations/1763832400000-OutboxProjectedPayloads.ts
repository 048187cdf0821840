// An outbox row whose payload its kind's read model stores in the same turn
// (an objective event: its objective_events row) keeps none: NULL, read back
// from the read model when the relay reads the row (actor-outbox.repository.ts).
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OutboxProjectedPayloads1763832400000 implements MigrationInterface {
  name = 'OutboxProjectedPayloads1763832400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE actor_outbox ALTER COLUMN payload DROP NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Rows that keep no payload could not be published any more: drop them only once published.
    await queryRunner.query('DELETE FROM actor_outbox WHERE payload IS NULL AND published_at IS NOT NULL');
    await queryRunner.query("UPDATE actor_outbox SET payload = 'null'::jsonb WHERE payload IS NULL");
    await queryRunner.query('ALTER TABLE actor_outbox ALTER COLUMN payload SET NOT NULL');
  }
}
