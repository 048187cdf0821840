// Agents, variations, their assignments (tools, tool sets, sub-agents, memory
// layers), tools, tool sets and variation feedback (issue 4, spec 2.13-2.14).
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Columns every workspace resource row carries (spec 2.2), bundle key included. */
function resourceColumns(table: string): string {
  return `
        id text CONSTRAINT pk_${table} PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_${table}_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_${table}_workspace REFERENCES workspaces(id),
        name text NOT NULL,
        external_id text,
        labels jsonb NOT NULL DEFAULT '{}',
        profile_id text,
        bundle_key text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()`;
}

export class AgentsAndTools1763791200000 implements MigrationInterface {
  name = 'AgentsAndTools1763791200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE agents (${resourceColumns('agents')},
        status text NOT NULL,
        variation_selection_mode text NOT NULL,
        description text,
        input_data_schema jsonb,
        output_definition jsonb,
        webhook_events_url text
      )`);
    await queryRunner.query(`CREATE INDEX ix_agents_workspace ON agents (workspace_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_agents_bundle ON agents (workspace_id, bundle_key) WHERE bundle_key IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE agent_variations (${resourceColumns('agent_variations')},
        agent_id text NOT NULL CONSTRAINT fk_agent_variations_agent REFERENCES agents(id) ON DELETE CASCADE,
        description text,
        prompt text,
        model_id text,
        temperature double precision CONSTRAINT ck_agent_variations_temperature CHECK (temperature BETWEEN 0 AND 1),
        max_sub_objectives integer CONSTRAINT ck_agent_variations_max_sub_objectives CHECK (max_sub_objectives >= 0),
        max_tool_calls integer CONSTRAINT ck_agent_variations_max_tool_calls CHECK (max_tool_calls >= 0),
        trigger_threshold double precision NOT NULL DEFAULT 0.75 CONSTRAINT ck_agent_variations_trigger_threshold CHECK (trigger_threshold BETWEEN 0 AND 1),
        summarization_instructions text,
        preserve_recent_results integer NOT NULL DEFAULT 2 CONSTRAINT ck_agent_variations_preserve_recent CHECK (preserve_recent_results >= 0),
        enable_episodic_memory boolean NOT NULL DEFAULT false,
        episodic_memory_ttl integer CONSTRAINT ck_agent_variations_episodic_ttl CHECK (episodic_memory_ttl >= 0),
        tool_selection jsonb,
        progressive_discovery jsonb,
        weight integer NOT NULL DEFAULT 0 CONSTRAINT ck_agent_variations_weight CHECK (weight >= 0)
      )`);
    await queryRunner.query(`CREATE INDEX ix_agent_variations_agent ON agent_variations (agent_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_agent_variations_bundle ON agent_variations (workspace_id, bundle_key) WHERE bundle_key IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE tool_sets (${resourceColumns('tool_sets')},
        description text,
        managed boolean NOT NULL DEFAULT false,
        mcp_server_url text,
        last_synced_at timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX ix_tool_sets_workspace ON tool_sets (workspace_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_tool_sets_bundle ON tool_sets (workspace_id, bundle_key) WHERE bundle_key IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE tools (${resourceColumns('tools')},
        description text,
        input_schema jsonb,
        requires_approval boolean NOT NULL DEFAULT false,
        kind text NOT NULL CONSTRAINT ck_tools_kind CHECK (kind IN ('http', 'mcp')),
        http_url text,
        http_method text,
        http_headers jsonb,
        http_timeout_ms integer,
        mcp_server_url text,
        mcp_tool_name text,
        -- the MCP-mirroring tool set whose sync created (and owns) this tool
        source_tool_set_id text CONSTRAINT fk_tools_source_tool_set REFERENCES tool_sets(id) ON DELETE CASCADE,
        CONSTRAINT ck_tools_http CHECK (kind <> 'http' OR (http_url IS NOT NULL AND http_method IS NOT NULL)),
        CONSTRAINT ck_tools_mcp CHECK (kind <> 'mcp' OR (mcp_server_url IS NOT NULL AND mcp_tool_name IS NOT NULL))
      )`);
    await queryRunner.query(`CREATE INDEX ix_tools_workspace ON tools (workspace_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_tools_bundle ON tools (workspace_id, bundle_key) WHERE bundle_key IS NOT NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_tools_source_mcp_tool ON tools (source_tool_set_id, mcp_tool_name) WHERE source_tool_set_id IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE tool_set_tools (
        tool_set_id text NOT NULL CONSTRAINT fk_tool_set_tools_tool_set REFERENCES tool_sets(id) ON DELETE CASCADE,
        tool_id text NOT NULL CONSTRAINT fk_tool_set_tools_tool REFERENCES tools(id) ON DELETE CASCADE,
        added_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_tool_set_tools PRIMARY KEY (tool_set_id, tool_id)
      )`);
    await queryRunner.query(`CREATE INDEX ix_tool_set_tools_tool ON tool_set_tools (tool_id)`);

    await queryRunner.query(`
      CREATE TABLE variation_assignments (
        id text CONSTRAINT pk_variation_assignments PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_variation_assignments_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_variation_assignments_workspace REFERENCES workspaces(id),
        variation_id text NOT NULL CONSTRAINT fk_variation_assignments_variation REFERENCES agent_variations(id) ON DELETE CASCADE,
        agent_id text CONSTRAINT fk_variation_assignments_agent REFERENCES agents(id) ON DELETE CASCADE,
        tool_id text CONSTRAINT fk_variation_assignments_tool REFERENCES tools(id) ON DELETE CASCADE,
        tool_set_id text CONSTRAINT fk_variation_assignments_tool_set REFERENCES tool_sets(id) ON DELETE CASCADE,
        requires_approval boolean,
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_variation_assignments_one_target CHECK (num_nonnulls(agent_id, tool_id, tool_set_id) = 1),
        CONSTRAINT uq_variation_assignments_agent UNIQUE (variation_id, agent_id),
        CONSTRAINT uq_variation_assignments_tool UNIQUE (variation_id, tool_id),
        CONSTRAINT uq_variation_assignments_tool_set UNIQUE (variation_id, tool_set_id)
      )`);
    await queryRunner.query(`CREATE INDEX ix_variation_assignments_variation ON variation_assignments (variation_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_variation_assignments_agent ON variation_assignments (agent_id) WHERE agent_id IS NOT NULL`);

    await queryRunner.query(`
      CREATE TABLE variation_memory_layers (
        id text CONSTRAINT pk_variation_memory_layers PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_variation_memory_layers_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_variation_memory_layers_workspace REFERENCES workspaces(id),
        variation_id text NOT NULL CONSTRAINT fk_variation_memory_layers_variation REFERENCES agent_variations(id) ON DELETE CASCADE,
        memory_layer_id text NOT NULL CONSTRAINT fk_variation_memory_layers_layer REFERENCES memory_layers(id) ON DELETE CASCADE,
        position integer NOT NULL CONSTRAINT ck_variation_memory_layers_position CHECK (position >= 0),
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_variation_memory_layers_layer UNIQUE (variation_id, memory_layer_id),
        CONSTRAINT uq_variation_memory_layers_position UNIQUE (variation_id, position)
      )`);
    await queryRunner.query(`CREATE INDEX ix_variation_memory_layers_layer ON variation_memory_layers (memory_layer_id)`);

    await queryRunner.query(`
      CREATE TABLE feedback (
        id text CONSTRAINT pk_feedback PRIMARY KEY,
        account_id text NOT NULL CONSTRAINT fk_feedback_account REFERENCES accounts(id),
        workspace_id text NOT NULL CONSTRAINT fk_feedback_workspace REFERENCES workspaces(id),
        agent_id text NOT NULL CONSTRAINT fk_feedback_agent REFERENCES agents(id) ON DELETE CASCADE,
        variation_id text NOT NULL CONSTRAINT fk_feedback_variation REFERENCES agent_variations(id) ON DELETE CASCADE,
        -- no foreign key yet: the objectives table arrives with the objectives issue
        objective_id text,
        rating text NOT NULL CONSTRAINT ck_feedback_rating CHECK (rating IN ('FEEDBACK_RATING_POSITIVE', 'FEEDBACK_RATING_NEGATIVE')),
        comment text,
        profile_id text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_feedback_agent ON feedback (agent_id, id)`);
    await queryRunner.query(`CREATE INDEX ix_feedback_variation ON feedback (variation_id, rating)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['feedback', 'variation_memory_layers', 'variation_assignments', 'tool_set_tools', 'tools', 'tool_sets', 'agent_variations', 'agents']) {
      await queryRunner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
