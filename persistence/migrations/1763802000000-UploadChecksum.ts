// The SHA-256 of an upload's bytes, taken when it completes, so bytes that
// change afterwards (a late PUT to a still-valid URL) are never consumed.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UploadChecksum1763802000000 implements MigrationInterface {
  name = 'UploadChecksum1763802000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE uploads ADD COLUMN content_sha256 text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE uploads DROP COLUMN content_sha256');
  }
}
