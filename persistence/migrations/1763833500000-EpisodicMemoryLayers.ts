// Episodic memory (issue 25 item 3): the system-managed EPISODIC layer of a
// (workspace, episodic key) is found by its key. The partial unique index is
// what makes its creation race-safe: objectives starting together with one key
// meet on it (INSERT ... ON CONFLICT) and share one layer. Layers created by
// clients keep a NULL key and are not constrained.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class EpisodicMemoryLayers1763833500000 implements MigrationInterface {
  name = 'EpisodicMemoryLayers1763833500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE memory_layers ADD COLUMN episodic_key text');
    await queryRunner.query('CREATE UNIQUE INDEX uq_memory_layers_episodic_key ON memory_layers (workspace_id, episodic_key) WHERE episodic_key IS NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX IF EXISTS uq_memory_layers_episodic_key');
    await queryRunner.query('ALTER TABLE memory_layers DROP COLUMN IF EXISTS episodic_key');
  }
}
