// The variation constraints beyond the spec (issue 24 items 3 and 4;
// api-decisions.md "Extensions"): model turns per run, tokens and cents per
// objective, and how long a model call's retryable failures are retried.
// Null keeps the default (50 turns, no token or cost limit, the node's
// AGENTRT_MODEL_RETRY_BUDGET_MS).
import type { MigrationInterface, QueryRunner } from 'typeorm';

export class VariationBudgets1763830800000 implements MigrationInterface {
  name = 'VariationBudgets1763830800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE agent_variations
        ADD COLUMN max_model_turns integer CONSTRAINT ck_agent_variations_max_model_turns CHECK (max_model_turns >= 0),
        ADD COLUMN max_tokens integer CONSTRAINT ck_agent_variations_max_tokens CHECK (max_tokens >= 0),
        ADD COLUMN max_cost_cents double precision CONSTRAINT ck_agent_variations_max_cost_cents CHECK (max_cost_cents >= 0),
        ADD COLUMN model_retry_budget_seconds integer CONSTRAINT ck_agent_variations_model_retry_budget_seconds CHECK (model_retry_budget_seconds >= 0)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE agent_variations
        DROP COLUMN max_model_turns, DROP COLUMN max_tokens, DROP COLUMN max_cost_cents, DROP COLUMN model_retry_budget_seconds`);
  }
}
