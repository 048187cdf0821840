// The agent schedules read model (spec 2.15, api-decisions.md "Schedules"): one
// row per schedule, written only by the schedule actor's projector in its fenced
// turns (persistence/repositories/schedules.store.ts), read by the API. Also the
// key that lets a schedule create at most one objective per nominal fire time.
import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = ['ACTIVE', 'PAUSED', 'ARCHIVED'].map((status) => `'AGENT_SCHEDULE_STATUS_${status}'`).join(', ');

export class Schedules1763823600000 implements MigrationInterface {
  name = 'Schedules1763823600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Like objectives: no foreign key to agents, so deleting an agent is never
    // blocked by its schedules (the actor finds the agent gone at the next
    // fire and records why in info.lastError); account and workspace are
    // referenced like every workspace table's. `status` is spec.status as a
    // column for the list filter; `revision` orders the actor's writes (a
    // stale projection is skipped).
    await queryRunner.query(`
      CREATE TABLE agent_schedules (
        id text CONSTRAINT pk_agent_schedules PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_agent_schedules_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_agent_schedules_workspace REFERENCES workspaces(id),
        agent_id text NOT NULL,
        profile_id text NOT NULL,
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        bundle_key text,
        spec jsonb NOT NULL,
        status text NOT NULL CONSTRAINT ck_agent_schedules_status CHECK (status IN (${STATUSES})),
        info jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        revision integer NOT NULL
      )`);
    // Keyset paging of an agent's list, alone and under the status filter.
    await queryRunner.query('CREATE INDEX ix_agent_schedules_agent ON agent_schedules (agent_id, id)');
    await queryRunner.query('CREATE INDEX ix_agent_schedules_agent_status ON agent_schedules (agent_id, status, id)');
    // Every schedule of a status across agents (the active ones a node must keep timers for).
    await queryRunner.query('CREATE INDEX ix_agent_schedules_status ON agent_schedules (status, id)');

    // One objective per (schedule, nominal fire time), even across failover:
    // the schedule actor's create of a fire's objective loses to this key when
    // an earlier owner of the schedule already created it.
    await queryRunner.query('ALTER TABLE objectives ADD COLUMN schedule_fire_time timestamptz');
    await queryRunner.query(`
      CREATE UNIQUE INDEX uq_objectives_schedule_fire_time ON objectives (schedule_id, schedule_fire_time)
      WHERE schedule_id IS NOT NULL AND schedule_fire_time IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX IF EXISTS uq_objectives_schedule_fire_time');
    await queryRunner.query('ALTER TABLE objectives DROP COLUMN IF EXISTS schedule_fire_time');
    await queryRunner.query('DROP TABLE IF EXISTS agent_schedules');
  }
}
