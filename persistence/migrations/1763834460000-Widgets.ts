// Widgets and widget sessions (api-decisions.md "Widgets"). A widget's
// hostname is unique across every account (the widget host finds the widget
// by the request's Host): the unique index makes two concurrent creates of one
// hostname end in one widget and one ALREADY_EXISTS. Sessions go with their
// widget (deleting it revokes them) and with their tenant or subject (erasing
// one revokes its visitors' sessions).
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Widgets1763834460000 implements MigrationInterface {
  name = 'Widgets1763834460000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Like schedules: no foreign key to agents, so deleting an agent is never
    // blocked by a widget (its sessions then create no objective).
    await queryRunner.query(`
      CREATE TABLE widgets (
        id text CONSTRAINT pk_widgets PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_widgets_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_widgets_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        agent_id text NOT NULL,
        hostname text NOT NULL CONSTRAINT ck_widgets_hostname_lower CHECK (hostname = lower(hostname)),
        allowed_origins jsonb NOT NULL,
        title text,
        greeting text,
        theme text NOT NULL CONSTRAINT ck_widgets_theme CHECK (theme IN ('THEME_LIGHT', 'THEME_DARK', 'THEME_AUTO')),
        allow_visitor_approvals boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query('CREATE UNIQUE INDEX uq_widgets_hostname ON widgets (hostname)');
    await queryRunner.query('CREATE INDEX ix_widgets_workspace ON widgets (workspace_id, id)');

    await queryRunner.query(`
      CREATE TABLE widget_sessions (
        id text CONSTRAINT pk_widget_sessions PRIMARY KEY,
        widget_id text NOT NULL CONSTRAINT fk_widget_sessions_widget REFERENCES widgets(id) ON DELETE CASCADE,
        account_id text NOT NULL CONSTRAINT fk_widget_sessions_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_widget_sessions_workspace REFERENCES workspaces(id),
        tenant_id text CONSTRAINT fk_widget_sessions_tenant REFERENCES tenants(id) ON DELETE CASCADE,
        subject_id text CONSTRAINT fk_widget_sessions_subject REFERENCES subjects(id) ON DELETE CASCADE,
        secrets_ciphertext text,
        profile_id text,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query('CREATE INDEX ix_widget_sessions_widget ON widget_sessions (widget_id)');
    await queryRunner.query('CREATE INDEX ix_widget_sessions_expires_at ON widget_sessions (expires_at)');
    await queryRunner.query('CREATE INDEX ix_widget_sessions_tenant ON widget_sessions (tenant_id) WHERE tenant_id IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_widget_sessions_subject ON widget_sessions (subject_id) WHERE subject_id IS NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS widget_sessions');
    await queryRunner.query('DROP TABLE IF EXISTS widgets');
  }
}
