// Memory layers, memory entries and uploads.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class MemoryAndUploads1763787600000 implements MigrationInterface {
  name = 'MemoryAndUploads1763787600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE memory_layers (
        id text CONSTRAINT pk_memory_layers PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_memory_layers_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_memory_layers_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        bundle_key text,
        type text NOT NULL,
        description text,
        expires_at timestamptz,
        system_managed boolean NOT NULL DEFAULT false,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_memory_layers_workspace ON memory_layers (workspace_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_memory_layers_expires_at ON memory_layers (expires_at) WHERE expires_at IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE memory_entries (
        id text CONSTRAINT pk_memory_entries PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_memory_entries_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_memory_entries_workspace REFERENCES workspaces(id),
        memory_layer_id text NOT NULL CONSTRAINT fk_memory_entries_layer REFERENCES memory_layers(id) ON DELETE CASCADE,
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        key text NOT NULL,
        title text,
        description text,
        content text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- spec 2.12 rules 5 and 6: keys are case-sensitive and unique within their layer
        CONSTRAINT uq_memory_entries_key UNIQUE (memory_layer_id, key)
      )`);
    await queryRunner.query(`CREATE INDEX ix_memory_entries_layer ON memory_entries (memory_layer_id, id)`);
    await queryRunner.query(`
      CREATE TABLE uploads (
        id text CONSTRAINT pk_uploads PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_uploads_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_uploads_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        filename text NOT NULL,
        content_type text NOT NULL,
        size_bytes bigint NOT NULL CONSTRAINT ck_uploads_size_bytes CHECK (size_bytes >= 0),
        status text NOT NULL,
        storage_key text NOT NULL,
        expires_at timestamptz NOT NULL,
        completed_at timestamptz,
        consumed_at timestamptz,
        consumed_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_uploads_workspace ON uploads (workspace_id, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['uploads', 'memory_entries', 'memory_layers']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
