// Agent variation rows (spec 2.14): the spec's nested fields flattened to columns.
import { EntitySchema } from 'typeorm';
import type { VariationRecord } from '../../src/agents/records';
import { workspaceResourceColumns } from './agent.entity';

export const AgentVariationEntity = new EntitySchema<VariationRecord>({
  name: 'AgentVariation',
  tableName: 'agent_variations',
  columns: {
    ...workspaceResourceColumns,
    agentId: { type: 'text', name: 'agent_id' },
    description: { type: 'text', nullable: true },
    prompt: { type: 'text', nullable: true },
    modelId: { type: 'text', name: 'model_id', nullable: true },
    temperature: { type: 'double precision', nullable: true },
    maxSubObjectives: { type: 'integer', name: 'max_sub_objectives', nullable: true },
    maxToolCalls: { type: 'integer', name: 'max_tool_calls', nullable: true },
    maxModelTurns: { type: 'integer', name: 'max_model_turns', nullable: true },
    maxTokens: { type: 'integer', name: 'max_tokens', nullable: true },
    maxCostCents: { type: 'double precision', name: 'max_cost_cents', nullable: true },
    modelRetryBudgetSeconds: { type: 'integer', name: 'model_retry_budget_seconds', nullable: true },
    triggerThreshold: { type: 'double precision', name: 'trigger_threshold' },
    summarizationInstructions: { type: 'text', name: 'summarization_instructions', nullable: true },
    preserveRecentResults: { type: 'integer', name: 'preserve_recent_results' },
    enableEpisodicMemory: { type: 'boolean', name: 'enable_episodic_memory' },
    episodicMemoryTtl: { type: 'integer', name: 'episodic_memory_ttl', nullable: true },
    toolSelection: { type: 'jsonb', name: 'tool_selection', nullable: true },
    progressiveDiscovery: { type: 'jsonb', name: 'progressive_discovery', nullable: true },
    weight: { type: 'integer' },
  },
});
