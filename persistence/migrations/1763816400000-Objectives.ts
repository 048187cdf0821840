// The objectives read model (issue 9): one `objectives` row per objective and
// one `objective_events` row per public objective event, written only by the
// objective actor's projector in its fenced turns
// (persistence/repositories/objectives.store.ts), read by the API.
import type { MigrationInterface, QueryRunner } from 'typeorm';

// Statuses after which nothing runs (isTerminal in src/objectives/objective-state.ts).
// The store's countRunningByAgent repeats this predicate word for word, so the
// planner proves the partial index ix_objectives_agent_running usable.
const RUNNING = `status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')`;

// Full-text search (as in migration TenantsSearchBundles): a generated,
// weighted tsvector over what an objective is created with, A: the external id
// (split on / _ . : like names), B: the label values, C: the first user message
// (initialMessage, else `data` as JSON; the first 100,000 characters). Only
// columns fixed at creation (erasure aside) feed it, so the projector's info
// updates never recompute it nor touch its GIN index, and can stay HOT.
const SEARCH_TSV = `setweight(to_tsvector('english'::regconfig, translate(coalesce(external_id, ''), '/_.:', '    ')), 'A')
  || setweight(to_tsvector('english'::regconfig, labels), 'B')
  || setweight(to_tsvector('english'::regconfig, left(coalesce(initial_message, data::text, ''), 100000)), 'C')`;

export class Objectives1763816400000 implements MigrationInterface {
  name = 'Objectives1763816400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // No foreign key to agents, variations, tenants, subjects, schedules or the
    // parent objective: an agent may be force-deleted (and tenants, subjects
    // erased) while its objectives exist, and the objective's history stays.
    // Workspace and account references are kept like every workspace table's.
    // `info` is the ObjectiveInfoChange as the actor last projected it,
    // `sequence` the sequence of its last event (a stale write is skipped) and
    // `status` its info.status, as a column for the filters and the count.
    // fillfactor 80 leaves room on each page for the few info updates an
    // objective gets, which then stay on the page (HOT) when status is unchanged.
    await queryRunner.query(`
      CREATE TABLE objectives (
        id text CONSTRAINT pk_objectives PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_objectives_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_objectives_workspace REFERENCES workspaces(id),
        agent_id text NOT NULL,
        variation_id text NOT NULL,
        profile_id text,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        data jsonb,
        initial_message text,
        episodic_key text,
        memory_layer_ids jsonb NOT NULL DEFAULT '[]',
        tenant_id text,
        subject_id text,
        parent_objective_id text,
        schedule_id text,
        status text NOT NULL,
        info jsonb NOT NULL,
        sequence integer NOT NULL DEFAULT 0,
        start_key text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search_tsv tsvector GENERATED ALWAYS AS (${SEARCH_TSV}) STORED
      ) WITH (fillfactor = 80)`);
    // Keyset paging of the workspace's list; every filter below narrows it.
    await queryRunner.query('CREATE INDEX ix_objectives_workspace ON objectives (workspace_id, id)');
    await queryRunner.query('CREATE INDEX ix_objectives_agent ON objectives (agent_id, id)');
    await queryRunner.query(`CREATE INDEX ix_objectives_agent_running ON objectives (agent_id, status) WHERE ${RUNNING}`);
    await queryRunner.query('CREATE INDEX ix_objectives_tenant ON objectives (tenant_id, id) WHERE tenant_id IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_objectives_subject ON objectives (subject_id, id) WHERE subject_id IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_objectives_schedule ON objectives (schedule_id, id) WHERE schedule_id IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_objectives_parent ON objectives (parent_objective_id, id) WHERE parent_objective_id IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_objectives_external_id ON objectives (workspace_id, external_id, id) WHERE external_id IS NOT NULL');
    // A creating request's scoped Idempotency-Key names one objective per workspace.
    await queryRunner.query('CREATE UNIQUE INDEX uq_objectives_start_key ON objectives (workspace_id, start_key) WHERE start_key IS NOT NULL');
    await queryRunner.query('CREATE INDEX ix_objectives_search ON objectives USING gin (search_tsv)');

    // One row per public event; `envelope` is the webhook envelope
    // ({timestamp, type, data}) and `webhook_type` its type, from which webhook
    // deliveries are queued. Deleting an objective deletes its events.
    await queryRunner.query(`
      CREATE TABLE objective_events (
        id text CONSTRAINT pk_objective_events PRIMARY KEY,
        objective_id text NOT NULL CONSTRAINT fk_objective_events_objective REFERENCES objectives(id) ON DELETE CASCADE,
        workspace_id text NOT NULL,
        sequence integer NOT NULL CONSTRAINT ck_objective_events_sequence CHECK (sequence > 0),
        type text NOT NULL,
        created_at timestamptz NOT NULL,
        data jsonb NOT NULL,
        webhook_type text NOT NULL,
        envelope jsonb NOT NULL,
        CONSTRAINT uq_objective_events_sequence UNIQUE (objective_id, sequence)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS objective_events');
    await queryRunner.query('DROP TABLE IF EXISTS objectives');
  }
}
