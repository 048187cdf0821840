// The cluster's id (a ULID made by its first node to start, see
// ActorClusterRepository.ensureClusterId): the names a cluster uses on a NATS
// server shared with other clusters (subjects, its event stream, its durable
// consumers) carry it, so two clusters never take each other's messages.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ClusterId1763830900000 implements MigrationInterface {
  name = 'ClusterId1763830900000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE actor_cluster ADD COLUMN cluster_id text CONSTRAINT ck_actor_cluster_cluster_id CHECK (cluster_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE actor_cluster DROP COLUMN cluster_id');
  }
}
