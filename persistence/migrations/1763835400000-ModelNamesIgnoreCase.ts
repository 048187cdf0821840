// A workspace's model names are unique ignoring case (api-decisions.md
// "Extensions"): `local/Qwen` and `local/qwen` would be two models a reader
// cannot tell apart, and `OPENAI/GPT-4O-MINI` would pass for the catalog's
// `openai/gpt-4o-mini`. uq_models_name stays for the exact look-ups by name.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ModelNamesIgnoreCase1763835400000 implements MigrationInterface {
  name = 'ModelNamesIgnoreCase1763835400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const clashes: Array<{ workspace_id: string; names: string[] }> = await queryRunner.query(
      'SELECT workspace_id, array_agg(name ORDER BY name) AS names FROM models GROUP BY workspace_id, lower(name) HAVING count(*) > 1 LIMIT 10',
    );
    if (clashes.length) {
      const listed = clashes.map((clash) => `${clash.workspace_id}: ${clash.names.join(', ')}`).join('; ');
      throw new Error(`model names that differ only in case (${listed}): rename or delete all but one of each with the previous version, then start again`);
    }
    await queryRunner.query('CREATE UNIQUE INDEX uq_models_name_ignoring_case ON models (workspace_id, lower(name))');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX IF EXISTS uq_models_name_ignoring_case');
  }
}
