// Usage roll-ups gain a `slot` in their keys (persistence/repositories/
// usage.store.ts): a batch of turns adds to the rows of one slot, picked at
// random, so concurrent batches of the same agent, model or tenant hour
// (every turn of a busy agent adds to the same rows) seldom wait for each
// other's commit; a report sums a key's slots. Existing rows are slot 0.
import type { MigrationInterface, QueryRunner } from 'typeorm';

const SUMS = 'prompt_tokens, completion_tokens, cost_cents, objective_count';

export class UsageRollupSlots1763835200000 implements MigrationInterface {
  name = 'UsageRollupSlots1763835200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE usage_rollups ADD COLUMN slot smallint NOT NULL DEFAULT 0,
        DROP CONSTRAINT pk_usage_rollups,
        ADD CONSTRAINT pk_usage_rollups PRIMARY KEY (workspace_id, dimension, key, bucket_hours, bucket_start, slot) INCLUDE (${SUMS})`);
    await queryRunner.query(`
      ALTER TABLE usage_rollup_keys ADD COLUMN slot smallint NOT NULL DEFAULT 0,
        DROP CONSTRAINT pk_usage_rollup_keys,
        ADD CONSTRAINT pk_usage_rollup_keys PRIMARY KEY (workspace_id, dimension, key, slot)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Each key's slots summed into one row again.
    await queryRunner.query(`
      CREATE TEMPORARY TABLE usage_rollups_summed ON COMMIT DROP AS
      SELECT workspace_id, dimension, key, bucket_hours, bucket_start,
        sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens, sum(cost_cents) AS cost_cents, sum(objective_count)::int AS objective_count
      FROM usage_rollups GROUP BY 1, 2, 3, 4, 5`);
    await queryRunner.query('DELETE FROM usage_rollups');
    await queryRunner.query(`
      ALTER TABLE usage_rollups DROP CONSTRAINT pk_usage_rollups, DROP COLUMN slot,
        ADD CONSTRAINT pk_usage_rollups PRIMARY KEY (workspace_id, dimension, key, bucket_hours, bucket_start) INCLUDE (${SUMS})`);
    await queryRunner.query(`INSERT INTO usage_rollups (workspace_id, dimension, key, bucket_hours, bucket_start, ${SUMS}) SELECT * FROM usage_rollups_summed`);
    await queryRunner.query(`
      CREATE TEMPORARY TABLE usage_rollup_keys_summed ON COMMIT DROP AS
      SELECT workspace_id, dimension, key, min(first_hour) AS first_hour, max(last_hour) AS last_hour FROM usage_rollup_keys GROUP BY 1, 2, 3`);
    await queryRunner.query('DELETE FROM usage_rollup_keys');
    await queryRunner.query(`
      ALTER TABLE usage_rollup_keys DROP CONSTRAINT pk_usage_rollup_keys, DROP COLUMN slot,
        ADD CONSTRAINT pk_usage_rollup_keys PRIMARY KEY (workspace_id, dimension, key)`);
    await queryRunner.query('INSERT INTO usage_rollup_keys SELECT * FROM usage_rollup_keys_summed');
  }
}
