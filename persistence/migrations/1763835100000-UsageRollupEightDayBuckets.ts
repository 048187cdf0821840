// Usage roll-ups gain 8-day buckets (bucket_hours 192, aligned on the Unix
// epoch like the days; src/usage/usage-rollup.ts): a report reads a range's
// whole 8-day buckets before its days and hours. The rows already there get
// theirs summed from their day rows, each day inside one 8-day bucket, so
// reads agree with what was recorded before. One statement, in the
// migration's transaction; the table is small until traffic grows it.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UsageRollupEightDayBuckets1763835100000 implements MigrationInterface {
  name = 'UsageRollupEightDayBuckets1763835100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      INSERT INTO usage_rollups AS u (workspace_id, dimension, key, bucket_hours, bucket_start, prompt_tokens, completion_tokens, cost_cents, objective_count)
      SELECT workspace_id, dimension, key, 192, to_timestamp(floor(extract(epoch FROM bucket_start) / (192 * 3600)) * 192 * 3600),
        sum(prompt_tokens), sum(completion_tokens), sum(cost_cents), sum(objective_count)
      FROM usage_rollups WHERE bucket_hours = 24
      GROUP BY 1, 2, 3, 5
      ON CONFLICT (workspace_id, dimension, key, bucket_hours, bucket_start) DO NOTHING`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DELETE FROM usage_rollups WHERE bucket_hours = 192');
  }
}
