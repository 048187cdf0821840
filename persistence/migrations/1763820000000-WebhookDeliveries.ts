// The webhook deliveries read model (spec 2.16): one row per objective event
// sent to an agent's webhook URL, written only by the webhook endpoint actor's
// projector in its fenced turns (persistence/repositories/webhook-deliveries.store.ts),
// read by the API (list, retry).
import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES = ['PENDING', 'COMPLETED', 'FAILED', 'DISABLED'].map((status) => `'WEBHOOK_DELIVERY_STATUS_${status}'`).join(', ');

export class WebhookDeliveries1763820000000 implements MigrationInterface {
  name = 'WebhookDeliveries1763820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Like objectives: no foreign key to agents, so a (force-)deleted agent
    // keeps its delivery history and nothing here blocks the delete; account
    // and workspace are referenced like every workspace table's. A delivery
    // belongs to its objective the way the objective's events do, and goes
    // with it. The objective row always exists first: the delivery is queued
    // from its event, which the objective actor commits with the row.
    // `revision` orders the actor's writes (a stale projection is skipped).
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id text CONSTRAINT pk_webhook_deliveries PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_webhook_deliveries_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_webhook_deliveries_workspace REFERENCES workspaces(id),
        agent_id text NOT NULL,
        profile_id text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        objective_id text NOT NULL CONSTRAINT fk_webhook_deliveries_objective REFERENCES objectives(id) ON DELETE CASCADE,
        objective_event_id text NOT NULL,
        sequence integer NOT NULL,
        event_type text NOT NULL,
        endpoint_id text NOT NULL,
        webhook_url text NOT NULL,
        status text NOT NULL CONSTRAINT ck_webhook_deliveries_status CHECK (status IN (${STATUSES})),
        attempt_count integer NOT NULL DEFAULT 0,
        last_attempt_at timestamptz,
        next_attempt_at timestamptz,
        latency_ms integer,
        http_status_code integer,
        response_content_length bigint,
        response_headers jsonb,
        error_message text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        revision integer NOT NULL
      )`);
    // Keyset paging of an agent's list, alone and under each filter.
    await queryRunner.query('CREATE INDEX ix_webhook_deliveries_agent ON webhook_deliveries (agent_id, id)');
    await queryRunner.query('CREATE INDEX ix_webhook_deliveries_agent_status ON webhook_deliveries (agent_id, status, id)');
    await queryRunner.query('CREATE INDEX ix_webhook_deliveries_agent_objective ON webhook_deliveries (agent_id, objective_id, id)');
    await queryRunner.query('CREATE INDEX ix_webhook_deliveries_agent_event_type ON webhook_deliveries (agent_id, event_type, id)');
    // The cascade from objectives looks deliveries up by objective.
    await queryRunner.query('CREATE INDEX ix_webhook_deliveries_objective ON webhook_deliveries (objective_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS webhook_deliveries');
  }
}
