// AgentsStore over TypeORM: agents, variations, assignments, feedback, tools and
// tool sets. One query per method; paging through fetchPage.
import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import type { AgentRecord, FeedbackTally } from '../../src/agents/records';
import type { AgentsStore } from '../../src/ports/agents-store';
import type { ToolRecord, ToolSetRecord } from '../../src/tools/records';
import { AgentEntity } from '../entities/agent.entity';
import { AgentVariationEntity } from '../entities/agent-variation.entity';
import { FeedbackEntity } from '../entities/feedback.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { ToolEntity } from '../entities/tool.entity';
import { ToolSetEntity, ToolSetToolEntity } from '../entities/tool-set.entity';
import { VariationAssignmentEntity } from '../entities/variation-assignment.entity';
import { VariationMemoryLayerEntity } from '../entities/variation-memory-layer.entity';
import { runConfigurationQuery } from './agent-run-configuration.read';
import { registerUniqueMessage, translateDriverError } from './driver-errors';
import { fetchPage } from './list-query';
import { countRunningObjectives } from './objectives.store';
import { findWithCreatorQuery, readRows, readStatement, recordTable } from './record-table';
import { runTransaction } from '../transaction-runner';

registerUniqueMessage('uq_variation_assignments_agent', 'the agent is already a sub-agent of this variation');
registerUniqueMessage('uq_variation_assignments_tool', 'the tool is already assigned to this variation');
registerUniqueMessage('uq_variation_assignments_tool_set', 'the tool set is already assigned to this variation');
registerUniqueMessage('uq_variation_memory_layers_layer', 'the memory layer is already assigned to this variation');
registerUniqueMessage('uq_variation_memory_layers_position', 'another memory layer of this variation has that position');
registerUniqueMessage('uq_tools_source_mcp_tool', 'the tool set already mirrors an MCP tool of that name');

/**
 * Each variation of an agent with its feedback counts: counted per variation
 * (LATERAL), so every count is an index scan of ix_feedback_variation whatever
 * the planner guesses of an agent's variations.
 */
const AGENT_TALLIES = readStatement(`SELECT v.id AS "variationId", t.positive, t.negative FROM agent_variations v
  CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE f.rating = 'FEEDBACK_RATING_POSITIVE')::int AS positive,
    count(*) FILTER (WHERE f.rating = 'FEEDBACK_RATING_NEGATIVE')::int AS negative FROM feedback f WHERE f.variation_id = v.id) t
  WHERE v.agent_id = $1`);
const VARIATION_COUNTS = readStatement('SELECT agent_id AS "agentId", count(*)::int AS count FROM agent_variations WHERE agent_id = ANY($1::text[]) GROUP BY agent_id');

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function storeFor(manager: EntityManager, dataSource: DataSource): AgentsStore {
  const agents = manager.getRepository(AgentEntity);
  const variations = manager.getRepository(AgentVariationEntity);
  const assignments = manager.getRepository(VariationAssignmentEntity);
  const layerAssignments = manager.getRepository(VariationMemoryLayerEntity);
  const feedback = manager.getRepository(FeedbackEntity);
  const tools = manager.getRepository(ToolEntity);
  const toolSets = manager.getRepository(ToolSetEntity);
  const toolSetTools = manager.getRepository(ToolSetToolEntity);
  const memoryLayers = manager.getRepository(MemoryLayerEntity);
  const findAgentWithInfo = findWithCreatorQuery<AgentRecord, { variationCount: number }>(manager, AgentEntity, {
    variationCount: '(SELECT count(*)::int FROM agent_variations v WHERE v.agent_id = t.id)',
  });
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(storeFor(tx, dataSource)), { joining: manager }),
    agents: {
      ...recordTable(manager, AgentEntity),
      list: (workspaceId, page, filter) => fetchPage(agents.createQueryBuilder('a').where('a.workspace_id = :workspaceId', { workspaceId }), 'a', page, filter),
      findByIds: async (ids) => (ids.length ? agents.findBy({ id: In(ids) }) : []),
      async findWithInfo(id) {
        const found = await findAgentWithInfo(id);
        return found && { record: found.record, createdBy: found.createdBy, variationCount: found.extra.variationCount };
      },
      runConfiguration: runConfigurationQuery(manager),
    },
    variations: {
      ...recordTable(manager, AgentVariationEntity),
      list: (agentId, page, filter) => fetchPage(variations.createQueryBuilder('v').where('v.agent_id = :agentId', { agentId }), 'v', page, filter),
      listByAgent: (agentId) => variations.find({ where: { agentId }, order: { id: 'ASC' } }),
      async countByAgents(agentIds) {
        if (!agentIds.length) return new Map();
        const rows = await readRows(manager, VARIATION_COUNTS, [agentIds]);
        return new Map(rows.map((row) => [row.agentId as string, row.count as number]));
      },
    },
    assignments: {
      ...recordTable(manager, VariationAssignmentEntity),
      listByVariations: async (variationIds) => (variationIds.length ? assignments.find({ where: { variationId: In(variationIds) }, order: { id: 'ASC' } }) : []),
      subAgentEdges: (workspaceId) =>
        manager.query(
          `SELECT DISTINCT v.agent_id AS "agentId", a.agent_id AS "subAgentId"
           FROM variation_assignments a JOIN agent_variations v ON v.id = a.variation_id
           WHERE a.workspace_id = $1 AND a.agent_id IS NOT NULL`,
          [workspaceId],
        ),
      async lockSubAgentGraph(workspaceId) {
        await manager.query(`SELECT pg_advisory_xact_lock(hashtext('agentrt.sub-agent-graph'), hashtext($1))`, [workspaceId]);
      },
    },
    memoryLayerAssignments: {
      ...recordTable(manager, VariationMemoryLayerEntity),
      listByVariations: async (variationIds) =>
        variationIds.length ? layerAssignments.find({ where: { variationId: In(variationIds) }, order: { position: 'DESC' } }) : [],
      countByMemoryLayer: (memoryLayerId) => layerAssignments.countBy({ memoryLayerId }),
      async maxPosition(variationId) {
        const row = await layerAssignments.createQueryBuilder('m').select('max(m.position)', 'max').where('m.variation_id = :variationId', { variationId }).getRawOne<{ max: number | null }>();
        return row?.max ?? null;
      },
    },
    feedback: {
      async insert(record) {
        try {
          await feedback.insert(record);
        } catch (error) {
          throw translateDriverError(error);
        }
        return record;
      },
      list(agentId, page, filter) {
        const query = feedback.createQueryBuilder('f').where('f.agent_id = :agentId', { agentId });
        if (filter.variationId) query.andWhere('f.variation_id = :variationId', { variationId: filter.variationId });
        if (filter.rating) query.andWhere('f.rating = :rating', { rating: filter.rating });
        return fetchPage(query, 'f', page, { prefix: filter.prefix }, 'id');
      },
      async tallies(variationIds) {
        const tallies = new Map<string, FeedbackTally>();
        if (!variationIds.length) return tallies;
        const rows = await feedback.createQueryBuilder('f').select('f.variation_id', 'variationId')
          .addSelect(`count(*) FILTER (WHERE f.rating = 'FEEDBACK_RATING_POSITIVE')::int`, 'positive')
          .addSelect(`count(*) FILTER (WHERE f.rating = 'FEEDBACK_RATING_NEGATIVE')::int`, 'negative')
          .where('f.variation_id IN (:...variationIds)', { variationIds }).groupBy('f.variation_id')
          .getRawMany<{ variationId: string; positive: number; negative: number }>();
        for (const row of rows) tallies.set(row.variationId, { positive: row.positive, negative: row.negative });
        return tallies;
      },
      async talliesOfAgent(agentId) {
        const rows = await readRows(manager, AGENT_TALLIES, [agentId]);
        return new Map(rows.map((row) => [row.variationId as string, { positive: row.positive as number, negative: row.negative as number }]));
      },
    },
    tools: {
      ...recordTable(manager, ToolEntity),
      list: (workspaceId, page, filter) => fetchPage(tools.createQueryBuilder('t').where('t.workspace_id = :workspaceId', { workspaceId }), 't', page, filter),
      findByIds: async (ids) => (ids.length ? tools.findBy({ id: In(ids) }) : []),
      listBySourceSet: (toolSetId) => tools.find({ where: { sourceToolSetId: toolSetId }, order: { id: 'ASC' } }),
      async inManagedSet(toolId) {
        const rows: unknown[] = await manager.query(
          'SELECT 1 FROM tool_set_tools m JOIN tool_sets s ON s.id = m.tool_set_id WHERE m.tool_id = $1 AND s.managed LIMIT 1',
          [toolId],
        );
        return rows.length > 0;
      },
    },
    toolSets: {
      ...recordTable(manager, ToolSetEntity),
      list: (workspaceId, page, filter) => fetchPage(toolSets.createQueryBuilder('s').where('s.workspace_id = :workspaceId', { workspaceId }), 's', page, filter),
      findByIds: async (ids) => (ids.length ? toolSets.findBy({ id: In(ids) }) : []),
    },
    toolSetTools: {
      async add(toolSetId, toolId) {
        try {
          const inserted: unknown[] = await manager.query(
            'INSERT INTO tool_set_tools (tool_set_id, tool_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING tool_id',
            [toolSetId, toolId],
          );
          return inserted.length > 0;
        } catch (error) {
          // 23503: the tool or the set was deleted since it was read.
          throw translateDriverError(error);
        }
      },
      async remove(toolSetId, toolId) {
        const result = await toolSetTools.delete({ toolSetId, toolId });
        return (result.affected ?? 0) > 0;
      },
      async toolsOf(toolSetIds) {
        if (!toolSetIds.length) return new Map();
        const rows = await toolSetTools.find({ where: { toolSetId: In(toolSetIds) }, order: { addedAt: 'ASC', toolId: 'ASC' } });
        const found = rows.length ? await tools.findBy({ id: In([...new Set(rows.map((row) => row.toolId))]) }) : [];
        const byId = new Map<string, ToolRecord>(found.map((tool) => [tool.id, tool]));
        const grouped = groupBy(rows, (row) => row.toolSetId);
        return new Map([...grouped].map(([setId, members]) => [setId, members.flatMap((row) => byId.get(row.toolId) ?? [])]));
      },
      async setsOf(toolIds) {
        if (!toolIds.length) return new Map();
        const rows = await toolSetTools.find({ where: { toolId: In(toolIds) }, order: { addedAt: 'ASC' } });
        const found = rows.length ? await toolSets.findBy({ id: In([...new Set(rows.map((row) => row.toolSetId))]) }) : [];
        const byId = new Map<string, ToolSetRecord>(found.map((set) => [set.id, set]));
        const grouped = groupBy(rows, (row) => row.toolId);
        return new Map([...grouped].map(([toolId, members]) => [toolId, members.flatMap((row) => byId.get(row.toolSetId) ?? [])]));
      },
    },
    memoryLayers: {
      async findById(id) {
        const layer = await memoryLayers.findOneBy({ id });
        return layer ? { record: layer, systemManaged: layer.systemManaged } : null;
      },
      async findByIds(ids) {
        const layers = ids.length ? await memoryLayers.findBy({ id: In(ids) }) : [];
        return layers.map((layer) => ({ record: layer, systemManaged: layer.systemManaged }));
      },
    },
    objectives: {
      countRunningObjectives: (agentId) => countRunningObjectives(manager, agentId),
    },
  };
}

/** The agents store on the data source's pool. */
export function createAgentsStore(dataSource: DataSource): AgentsStore {
  return storeFor(dataSource.manager, dataSource);
}

/** The agents store bound to `manager` (e.g. another area's open transaction). */
export function agentsStoreOn(manager: EntityManager, dataSource: DataSource): AgentsStore {
  return storeFor(manager, dataSource);
}

const AGENT_WEBHOOK_URL = readStatement('SELECT webhook_events_url AS "webhookEventsUrl" FROM agents WHERE id = $1');

/** The agent's webhookEventsUrl now; null when it has none or does not exist (the webhook intake's lookup). */
export async function agentWebhookUrl(manager: EntityManager, agentId: string): Promise<string | null> {
  const rows = await readRows(manager, AGENT_WEBHOOK_URL, [agentId]);
  return (rows[0]?.webhookEventsUrl as string | null | undefined) ?? null;
}
