// Service-wide keys (the API key token signing key), stored wrapped by the
// master key like workspace data keys, so master-key rotation rewraps them.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ServiceKeys1763798400000 implements MigrationInterface {
  name = 'ServiceKeys1763798400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE service_keys (
        purpose text CONSTRAINT pk_service_keys PRIMARY KEY,
        wrapped_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        rewrapped_at timestamptz
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS service_keys');
  }
}
