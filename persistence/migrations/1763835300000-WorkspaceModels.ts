// Workspace models (api-decisions.md "Extensions"): a models row may name the
// AI provider key that serves it and the model id sent upstream; catalog rows
// leave both null. A provider key with a baseUrl may hold no apiKey (a local
// model server without authentication).
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WorkspaceModels1763835300000 implements MigrationInterface {
  name = 'WorkspaceModels1763835300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE models
        ADD COLUMN ai_provider_key_id text CONSTRAINT fk_models_ai_provider_key REFERENCES ai_provider_keys(id),
        ADD COLUMN upstream_model text,
        ADD CONSTRAINT ck_models_workspace_model CHECK ((ai_provider_key_id IS NULL) = (upstream_model IS NULL))`);
    // The provider key's delete check and the foreign key's own check read models by key.
    await queryRunner.query('CREATE INDEX ix_models_ai_provider_key ON models (ai_provider_key_id) WHERE ai_provider_key_id IS NOT NULL');
    // Deleting or renaming a workspace model looks for the variations that name it.
    await queryRunner.query('CREATE INDEX ix_agent_variations_model ON agent_variations (workspace_id, model_id) WHERE model_id IS NOT NULL');
    await queryRunner.query('ALTER TABLE ai_provider_keys ALTER COLUMN api_key_ciphertext DROP NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DELETE FROM models WHERE ai_provider_key_id IS NOT NULL');
    await queryRunner.query('DELETE FROM ai_provider_keys WHERE api_key_ciphertext IS NULL');
    await queryRunner.query('ALTER TABLE ai_provider_keys ALTER COLUMN api_key_ciphertext SET NOT NULL');
    await queryRunner.query('DROP INDEX IF EXISTS ix_agent_variations_model');
    await queryRunner.query('DROP INDEX IF EXISTS ix_models_ai_provider_key');
    await queryRunner.query('ALTER TABLE models DROP CONSTRAINT ck_models_workspace_model, DROP COLUMN upstream_model, DROP COLUMN ai_provider_key_id');
  }
}
