// Accounts, workspaces, profiles, memberships, API keys and idempotency records.
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763776800000 implements MigrationInterface {
  name = 'Foundation1763776800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE accounts (
        id text CONSTRAINT pk_accounts PRIMARY KEY,
        -- equal to id; kept so every resource row carries the same metadata columns
        account_id text NOT NULL CONSTRAINT ck_accounts_account_id CHECK (account_id = id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        billing_email text,
        description text,
        domain text,
        webhook_signing_secret text NOT NULL,
        previous_webhook_signing_secret text,
        webhook_signing_secret_rotated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE workspaces (
        id text CONSTRAINT pk_workspaces PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_workspaces_account REFERENCES accounts(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        description text,
        status text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_workspaces_account ON workspaces (account_id, id)`);
    await queryRunner.query(`
      CREATE TABLE profiles (
        id text CONSTRAINT pk_profiles PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_profiles_account REFERENCES accounts(id),
        type text NOT NULL,
        email text,
        name text NOT NULL,
        display_name text,
        admin boolean NOT NULL DEFAULT false,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX uq_profiles_user_email ON profiles (account_id, lower(email))
      WHERE type = 'PROFILE_TYPE_USER'`);
    await queryRunner.query(`CREATE INDEX ix_profiles_email ON profiles (lower(email))`);
    await queryRunner.query(`
      CREATE TABLE workspace_members (
        id text CONSTRAINT pk_workspace_members PRIMARY KEY,
        workspace_id text NOT NULL CONSTRAINT fk_workspace_members_workspace REFERENCES workspaces(id),
        profile_id text NOT NULL CONSTRAINT fk_workspace_members_profile REFERENCES profiles(id),
        added_at timestamptz NOT NULL DEFAULT now(),
        removed_at timestamptz,
        CONSTRAINT uq_workspace_members_profile UNIQUE (workspace_id, profile_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id text CONSTRAINT pk_api_keys PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_api_keys_account REFERENCES accounts(id),
        workspace_id text CONSTRAINT fk_api_keys_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        principal_profile_id text NOT NULL CONSTRAINT fk_api_keys_principal REFERENCES profiles(id),
        description text,
        permissions jsonb NOT NULL DEFAULT '[]',
        system boolean NOT NULL DEFAULT false,
        state text NOT NULL,
        token_version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_api_keys_workspace ON api_keys (workspace_id, id)`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_api_keys_system ON api_keys (account_id) WHERE system`);
    await queryRunner.query(`
      CREATE TABLE idempotency_records (
        principal_key text NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        status integer,
        body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_idempotency_records PRIMARY KEY (principal_key, idempotency_key)
      )`);
    await queryRunner.query(`CREATE INDEX ix_idempotency_records_created ON idempotency_records (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['idempotency_records', 'api_keys', 'workspace_members', 'profiles', 'workspaces', 'accounts']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
