// Widget host (issue 26 item 3): an objective created by a widget session
// names it, so the session sees only its own objectives and its tool calls
// read the session's secrets. Nullable: every other objective has none.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WidgetHostObjectiveSessions1763834600000 implements MigrationInterface {
  name = 'WidgetHostObjectiveSessions1763834600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE objectives ADD COLUMN IF NOT EXISTS widget_session_id text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE objectives DROP COLUMN IF EXISTS widget_session_id');
  }
}
