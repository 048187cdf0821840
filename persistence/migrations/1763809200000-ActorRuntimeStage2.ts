// The actor runtime's second stage: command ids in the journal (a retried
// command is recognised durably within the dedupe window), outbox rows in
// write order with the actor's own sequence (not in id order: ids carry node
// clocks), durable commands in write order, reminder retries kept in the
// database (a failing reminder backs off without starving due ones), and the
// index of actors with work in flight that a new shard owner resumes.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ActorRuntimeStage21763809200000 implements MigrationInterface {
  name = 'ActorRuntimeStage21763809200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE actor_journal ADD COLUMN command_id text');
    await queryRunner.query(
      'CREATE UNIQUE INDEX uq_actor_journal_key_command ON actor_journal (persistence_key, command_id) WHERE command_id IS NOT NULL',
    );

    await queryRunner.query('ALTER TABLE actor_outbox ADD COLUMN position bigserial');
    await queryRunner.query('ALTER TABLE actor_outbox ADD COLUMN persistence_key text');
    await queryRunner.query('ALTER TABLE actor_outbox ADD COLUMN actor_seq bigint');
    await queryRunner.query('ALTER TABLE actor_outbox ADD COLUMN headers jsonb');
    await queryRunner.query('DROP INDEX ix_actor_outbox_unpublished');
    await queryRunner.query('CREATE INDEX ix_actor_outbox_unpublished ON actor_outbox (shard, position) WHERE published_at IS NULL');

    await queryRunner.query('ALTER TABLE actor_commands ADD COLUMN position bigserial');
    await queryRunner.query('DROP INDEX ix_actor_commands_pending');
    await queryRunner.query(
      'CREATE INDEX ix_actor_commands_pending ON actor_commands (shard, kind, actor_id, position) WHERE processed_at IS NULL',
    );

    await queryRunner.query('ALTER TABLE actor_reminders ADD COLUMN attempts integer NOT NULL DEFAULT 0');
    await queryRunner.query('ALTER TABLE actor_reminders ADD COLUMN next_attempt_at timestamptz');
    await queryRunner.query('UPDATE actor_reminders SET next_attempt_at = due_at');
    await queryRunner.query('ALTER TABLE actor_reminders ALTER COLUMN next_attempt_at SET NOT NULL');
    await queryRunner.query('DROP INDEX ix_actor_reminders_shard_due');
    await queryRunner.query('CREATE INDEX ix_actor_reminders_shard_next ON actor_reminders (shard, next_attempt_at)');

    await queryRunner.query(`
      CREATE TABLE actor_work (
        kind text NOT NULL,
        actor_id text NOT NULL,
        shard integer NOT NULL,
        since timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_actor_work PRIMARY KEY (kind, actor_id)
      )`);
    await queryRunner.query('CREATE INDEX ix_actor_work_shard ON actor_work (shard)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE actor_work');
    await queryRunner.query('DROP INDEX ix_actor_reminders_shard_next');
    await queryRunner.query('CREATE INDEX ix_actor_reminders_shard_due ON actor_reminders (shard, due_at)');
    await queryRunner.query('ALTER TABLE actor_reminders DROP COLUMN next_attempt_at, DROP COLUMN attempts');
    await queryRunner.query('DROP INDEX ix_actor_commands_pending');
    await queryRunner.query('ALTER TABLE actor_commands DROP COLUMN position');
    await queryRunner.query('CREATE INDEX ix_actor_commands_pending ON actor_commands (shard, kind, actor_id, id) WHERE processed_at IS NULL');
    await queryRunner.query('DROP INDEX ix_actor_outbox_unpublished');
    await queryRunner.query('ALTER TABLE actor_outbox DROP COLUMN headers, DROP COLUMN actor_seq, DROP COLUMN persistence_key, DROP COLUMN position');
    await queryRunner.query('CREATE INDEX ix_actor_outbox_unpublished ON actor_outbox (shard, id) WHERE published_at IS NULL');
    await queryRunner.query('DROP INDEX uq_actor_journal_key_command');
    await queryRunner.query('ALTER TABLE actor_journal DROP COLUMN command_id');
  }
}
