// What an objective of an agent runs on (AgentsStore.agents.runConfiguration),
// read in ONE statement: the agent, its variations, the models they name,
// every variation's assignments, the tools assigned directly or through tool
// sets, the sub-agents, and the variations' memory layers with their types. Creating an objective read these in seven queries;
// on this kind of machine every statement costs the node a socket write and a
// wake-up of the Postgres backend, which was most of the create path's CPU.
import type { EntityManager, EntitySchema, ObjectLiteral } from 'typeorm';
import type { AgentRecord } from '../../src/agents/records';
import type { AgentRunConfiguration, VariationStackLayer } from '../../src/ports/agents-store';
import type { MemoryLayerType } from '../../src/memory/records';
import type { ToolRecord } from '../../src/tools/records';
import { AgentEntity } from '../entities/agent.entity';
import { AgentVariationEntity } from '../entities/agent-variation.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { ModelEntity } from '../entities/model.entity';
import { ToolEntity } from '../entities/tool.entity';
import { ToolSetToolEntity } from '../entities/tool-set.entity';
import { VariationAssignmentEntity } from '../entities/variation-assignment.entity';
import { VariationMemoryLayerEntity } from '../entities/variation-memory-layer.entity';
import { entityColumns, readRows, readStatement, tableOf, type EntityColumns } from './record-table';

function decodeAll<T>(columns: EntityColumns<T>, values: unknown): T[] {
  return ((values as unknown[] | null) ?? []).flatMap((value) => columns.decode(value) ?? []);
}

export function runConfigurationQuery(manager: EntityManager): (agentId: string) => Promise<AgentRunConfiguration | null> {
  // Built at the first call: a store is made for every transaction, most of which never read this.
  let read: ((agentId: string) => Promise<AgentRunConfiguration | null>) | undefined;
  return (agentId) => (read ??= buildRunConfigurationQuery(manager))(agentId);
}

function buildRunConfigurationQuery(manager: EntityManager): (agentId: string) => Promise<AgentRunConfiguration | null> {
  const table = <T extends ObjectLiteral>(entity: EntitySchema<T>) => tableOf(manager, entity as unknown as EntitySchema<ObjectLiteral>);
  const agent = entityColumns(manager, AgentEntity, 'a');
  const variation = entityColumns(manager, AgentVariationEntity, 'v');
  const model = entityColumns(manager, ModelEntity, 'm');
  const assignment = entityColumns(manager, VariationAssignmentEntity, 's');
  const tool = entityColumns(manager, ToolEntity, 't');
  const subAgent = entityColumns(manager, AgentEntity, 'sa');
  // Orders as the single-table reads did: variations and assignments by id,
  // a set's tools in the order they were added.
  const statement = readStatement(`
    WITH agent AS (SELECT * FROM ${table(AgentEntity)} WHERE id = $1),
    variations AS (SELECT * FROM ${table(AgentVariationEntity)} WHERE agent_id = $1),
    assignments AS (SELECT * FROM ${table(VariationAssignmentEntity)} WHERE variation_id IN (SELECT id FROM variations))
    SELECT
      (SELECT ${agent.json} FROM agent a) AS agent,
      (SELECT json_agg(${variation.json} ORDER BY v.id) FROM variations v) AS variations,
      (SELECT json_agg(${model.json}) FROM ${table(ModelEntity)} m
        WHERE m.workspace_id = (SELECT workspace_id FROM agent) AND m.name IN (SELECT model_id FROM variations)) AS models,
      (SELECT json_agg(${assignment.json} ORDER BY s.id) FROM assignments s) AS assignments,
      (SELECT json_agg(${tool.json}) FROM ${table(ToolEntity)} t WHERE t.id IN (SELECT tool_id FROM assignments)) AS tools,
      (SELECT json_agg(json_build_array(st.tool_set_id, ${tool.json}) ORDER BY st.added_at, st.tool_id)
        FROM ${table(ToolSetToolEntity)} st JOIN ${table(ToolEntity)} t ON t.id = st.tool_id
        WHERE st.tool_set_id IN (SELECT tool_set_id FROM assignments)) AS set_tools,
      (SELECT json_agg(${subAgent.json}) FROM ${table(AgentEntity)} sa WHERE sa.id IN (SELECT agent_id FROM assignments)) AS sub_agents,
      (SELECT json_agg(json_build_array(vm.variation_id, vm.memory_layer_id, vm.position, l.type) ORDER BY vm.variation_id, vm.position)
        FROM ${table(VariationMemoryLayerEntity)} vm JOIN ${table(MemoryLayerEntity)} l ON l.id = vm.memory_layer_id
        WHERE vm.variation_id IN (SELECT id FROM variations)) AS memory_layers`);
  return async (agentId) => {
    const [row] = await readRows(manager, statement, [agentId]);
    const found = row && agent.decode(row.agent);
    if (!found) return null;
    const toolSetTools = new Map<string, ToolRecord[]>();
    for (const [setId, value] of (row.set_tools as Array<[string, unknown]> | null) ?? []) {
      const member = tool.decode(value);
      if (member) toolSetTools.set(setId, [...(toolSetTools.get(setId) ?? []), member]);
    }
    return {
      agent: found as AgentRecord,
      variations: decodeAll(variation, row.variations),
      models: decodeAll(model, row.models),
      assignments: decodeAll(assignment, row.assignments),
      tools: decodeAll(tool, row.tools),
      toolSetTools,
      subAgents: decodeAll(subAgent, row.sub_agents),
      memoryLayers: ((row.memory_layers as Array<[string, string, number, string]> | null) ?? []).map(([variationId, memoryLayerId, position, type]): VariationStackLayer => (
        { variationId, memoryLayerId, position, type: type as MemoryLayerType }
      )),
    };
  };
}
