// Indexes for retention (actors/runtime/retention-sweeper.ts): published
// outbox rows and processed commands are found oldest first by the time they
// were published or processed, so a purge batch reads only the rows it
// deletes instead of scanning tables that hold a whole window of rows. Partial
// (NOT NULL): rows still waiting are never purge candidates, and the indexes
// stay out of the insert path of the turn writer. The journal needs no new
// index: its purge walks the snapshots by key and reads each key's covered
// prefix through uq_actor_journal_key_sequence.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ActorRetentionIndexes1763812900000 implements MigrationInterface {
  name = 'ActorRetentionIndexes1763812900000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX ix_actor_outbox_published_at ON actor_outbox (published_at) WHERE published_at IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_actor_commands_processed_at ON actor_commands (processed_at) WHERE processed_at IS NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX ix_actor_commands_processed_at');
    await queryRunner.query('DROP INDEX ix_actor_outbox_published_at');
  }
}
