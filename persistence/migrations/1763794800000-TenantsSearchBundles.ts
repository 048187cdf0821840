// Tenants and subjects (upserted by externalId), and the full-text search
// columns and indexes over agents, tools, tool sets and memory entries.
import type { MigrationInterface, QueryRunner } from 'typeorm';

// Full-text search (persistence/repositories/search.store.ts): a generated,
// weighted tsvector per searchable row (A: name, B: description and title,
// C: memory entry content), so every writer keeps the index current in its own
// transaction. Names are split on / _ . : so `billing/refund_policy` matches
// `refund`. Content past 100,000 characters is not indexed (a tsvector holds
// at most 1 MB). (concat_ws is not immutable, so the expressions use ||.)
const SPLIT_NAME = (column: string) => `translate(${column}, '/_.:', '    ')`;
const NAME_AND_DESCRIPTION = `setweight(to_tsvector('english'::regconfig, ${SPLIT_NAME('name')}), 'A')
  || setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')`;
const SEARCH_COLUMNS: Array<[table: string, expression: string]> = [
  ['agents', NAME_AND_DESCRIPTION],
  ['tools', NAME_AND_DESCRIPTION],
  ['tool_sets', NAME_AND_DESCRIPTION],
  [
    'memory_entries',
    `setweight(to_tsvector('english'::regconfig, ${SPLIT_NAME('key')} || CASE WHEN name <> key THEN ' ' || ${SPLIT_NAME('name')} ELSE '' END), 'A')
  || setweight(to_tsvector('english'::regconfig, coalesce(title, '') || ' ' || coalesce(description, '')), 'B')
  || setweight(to_tsvector('english'::regconfig, left(content, 100000)), 'C')`,
  ],
];

export class TenantsSearchBundles1763794800000 implements MigrationInterface {
  name = 'TenantsSearchBundles1763794800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE tenants (
        id text CONSTRAINT pk_tenants PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_tenants_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_tenants_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text NOT NULL,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_tenants_external_id UNIQUE (workspace_id, external_id)
      )`);
    await queryRunner.query(`CREATE INDEX ix_tenants_workspace ON tenants (workspace_id, id)`);
    await queryRunner.query(`
      CREATE TABLE subjects (
        id text CONSTRAINT pk_subjects PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_subjects_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_subjects_workspace REFERENCES workspaces(id),
        tenant_id text CONSTRAINT fk_subjects_tenant REFERENCES tenants(id) ON DELETE CASCADE,
        name text NOT NULL,
        external_id text NOT NULL,
        email text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A subject's identity is its externalId within its tenant, or within the
    // workspace for subjects asserted without a tenant.
    await queryRunner.query(`
      CREATE UNIQUE INDEX uq_subjects_tenant_external_id ON subjects (workspace_id, tenant_id, external_id)
      WHERE tenant_id IS NOT NULL`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX uq_subjects_external_id ON subjects (workspace_id, external_id)
      WHERE tenant_id IS NULL`);
    await queryRunner.query(`CREATE INDEX ix_subjects_tenant ON subjects (tenant_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_subjects_workspace ON subjects (workspace_id, id)`);
    for (const [table, expression] of SEARCH_COLUMNS) {
      await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (${expression}) STORED`);
      await queryRunner.query(`CREATE INDEX ix_${table}_search ON ${table} USING gin (search_tsv)`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table] of SEARCH_COLUMNS) {
      await queryRunner.query(`DROP INDEX IF EXISTS ix_${table}_search`);
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS search_tsv`);
    }
    await queryRunner.query(`DROP TABLE IF EXISTS subjects`);
    await queryRunner.query(`DROP TABLE IF EXISTS tenants`);
  }
}
