// Workspace data keys (envelope encryption), workspace secrets, AI provider keys
// and models.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WorkspaceData1763784000000 implements MigrationInterface {
  name = 'WorkspaceData1763784000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE workspace_data_keys (
        workspace_id text CONSTRAINT pk_workspace_data_keys PRIMARY KEY
          CONSTRAINT fk_workspace_data_keys_workspace REFERENCES workspaces(id),
        -- the workspace's AES-256 data key, sealed under the master key
        wrapped_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        rewrapped_at timestamptz
      )`);
    await queryRunner.query(`
      CREATE TABLE workspace_secrets (
        id text CONSTRAINT pk_workspace_secrets PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_workspace_secrets_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_workspace_secrets_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        value_ciphertext text,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_workspace_secrets_name UNIQUE (workspace_id, name)
      )`);
    await queryRunner.query(`CREATE INDEX ix_workspace_secrets_workspace ON workspace_secrets (workspace_id, id)`);
    await queryRunner.query(`
      CREATE TABLE ai_provider_keys (
        id text CONSTRAINT pk_ai_provider_keys PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_ai_provider_keys_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_ai_provider_keys_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        provider text NOT NULL,
        api_key_ciphertext text NOT NULL,
        openrouter_base_url text,
        promotional boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_ai_provider_keys_workspace ON ai_provider_keys (workspace_id, id)`);
    await queryRunner.query(`
      CREATE TABLE models (
        id text CONSTRAINT pk_models PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_models_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_models_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        family text NOT NULL,
        provider text NOT NULL,
        input_price_per_million_tokens text NOT NULL,
        output_price_per_million_tokens text NOT NULL,
        max_input_tokens integer NOT NULL,
        max_output_tokens integer NOT NULL,
        status text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_models_name UNIQUE (workspace_id, name)
      )`);
    await queryRunner.query(`CREATE INDEX ix_models_workspace ON models (workspace_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_models_workspace_provider ON models (workspace_id, provider, status)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['models', 'ai_provider_keys', 'workspace_secrets', 'workspace_data_keys']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
