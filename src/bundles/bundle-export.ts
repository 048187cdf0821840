// The document of a bundle as it stands (GET): rebuilt from the resources that
// carry its bundleKey, in the shape PUT accepts, so applying it back plans no
// change. Schedules come from the read model the schedule actors project (the
// bundle's non-ARCHIVED ones), each under its agent.
import { toAgent, toVariation } from '../agents/mappers';
import type { AgentRecord } from '../agents/records';
import type { MemoryLayerRecord } from '../memory/records';
import type { BundleTransaction } from '../ports/bundle-store';
import type { BundleDocument, BundleMemoryEntry, BundleMemoryLayer, BundleSchedule, BundleVariation } from '../schemas/bundles.schema';
import type { CreateMetadata } from '../schemas/common.schema';
import { toAgentSchedule } from '../schedules/schedule-mappers';
import type { ScheduleRecord } from '../schedules/schedule-record';
import { toToolSet } from '../tools/mappers';
import type { ToolRecord, ToolSetRecord } from '../tools/records';
import { specOfRecord } from '../tools/tool-spec';

/** The rows a bundle owns. */
export interface OwnedRows {
  tools: ToolRecord[];
  toolSets: ToolSetRecord[];
  memoryLayers: MemoryLayerRecord[];
  agents: AgentRecord[];
}

/**
 * A copy without null and undefined values (the document's optional fields are
 * simply absent). Only for shapes built here from nullable columns: the wire
 * specs of the mappers already omit absent fields, and may hold JSON values
 * (schemas) whose nulls are data.
 */
function compact<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_key, item: unknown) => (item === null ? undefined : item))) as T;
}

function metadataOf(record: { name: string; externalId: string | null; labels: Record<string, string> }): CreateMetadata {
  return {
    name: record.name,
    ...(record.externalId !== null ? { externalId: record.externalId } : {}),
    ...(Object.keys(record.labels ?? {}).length ? { labels: record.labels } : {}),
  };
}

const nonEmpty = <K extends string, T>(key: K, items: T[]): Partial<Record<K, T[]>> => (items.length ? ({ [key]: items } as Record<K, T[]>) : {});

async function exportToolSets(tx: BundleTransaction, toolSets: ToolSetRecord[]): Promise<BundleDocument['toolSets']> {
  const members = await tx.agents.toolSetTools.toolsOf(toolSets.map((set) => set.id));
  return toolSets.map((set) => ({
    metadata: metadataOf(set),
    spec: toToolSet(set).spec,
    ...nonEmpty('tools', (members.get(set.id) ?? []).filter((tool) => tool.sourceToolSetId !== set.id).map((tool) => tool.name)),
  }));
}

async function exportMemoryLayers(tx: BundleTransaction, layers: MemoryLayerRecord[]): Promise<BundleMemoryLayer[]> {
  const entries = await tx.entriesOf(layers.map((layer) => layer.id));
  return layers.map((layer) => ({
    metadata: metadataOf(layer),
    spec: { type: layer.type, ...(layer.description !== null ? { description: layer.description } : {}) },
    ...nonEmpty(
      'entries',
      entries
        .filter((entry) => entry.memoryLayerId === layer.id)
        .map((entry) => {
          const metadata = { ...metadataOf(entry), ...(entry.name === entry.key ? { name: undefined } : {}) };
          return compact({
            ...(Object.values(metadata).some((value) => value !== undefined) ? { metadata } : {}),
            spec: { key: entry.key, content: entry.content, title: entry.title, description: entry.description },
          }) as BundleMemoryEntry;
        }),
    ),
  }));
}

function scheduleOf(record: ScheduleRecord): BundleSchedule {
  return { metadata: metadataOf(record), spec: toAgentSchedule(record).spec as BundleSchedule['spec'] };
}

async function exportAgents(tx: BundleTransaction, agents: AgentRecord[], bundleKey: string, schedules: readonly ScheduleRecord[]): Promise<BundleDocument['agents']> {
  const variations = (await tx.variationsOf(agents.map((agent) => agent.id))).filter((variation) => variation.bundleKey === bundleKey);
  const ids = variations.map((variation) => variation.id);
  const assignments = await tx.agents.assignments.listByVariations(ids);
  const stacks = await tx.agents.memoryLayerAssignments.listByVariations(ids);
  const pick = (key: 'toolId' | 'toolSetId' | 'agentId') => [...new Set(assignments.flatMap((row) => (row[key] ? [row[key]] : [])))];
  // One query at a time: a transaction is one connection.
  const tools = await tx.agents.tools.findByIds(pick('toolId'));
  const toolSets = await tx.agents.toolSets.findByIds(pick('toolSetId'));
  const subAgents = await tx.agents.agents.findByIds(pick('agentId'));
  const layers = await tx.agents.memoryLayers.findByIds([...new Set(stacks.map((row) => row.memoryLayerId))]);
  const names = new Map<string, string>([...tools, ...toolSets, ...subAgents, ...layers.map((layer) => layer.record)].map((row) => [row.id, row.name]));
  const namesOf = (variationId: string, key: 'toolId' | 'toolSetId' | 'agentId') =>
    assignments.filter((row) => row.variationId === variationId && row[key]).map((row) => names.get(row[key]!) ?? row[key]!);
  const variationOf = (variation: (typeof variations)[number]): BundleVariation => ({
    metadata: metadataOf(variation),
    spec: toVariation(variation).spec as BundleVariation['spec'],
    ...nonEmpty('tools', namesOf(variation.id, 'toolId')),
    ...nonEmpty('toolSets', namesOf(variation.id, 'toolSetId')),
    ...nonEmpty('subAgents', namesOf(variation.id, 'agentId')),
    ...nonEmpty(
      'memoryLayers',
      stacks
        .filter((row) => row.variationId === variation.id)
        .sort((a, b) => b.position - a.position)
        .map((row) => names.get(row.memoryLayerId) ?? row.memoryLayerId),
    ),
  });
  return agents.map((agent) => ({
    metadata: metadataOf(agent),
    spec: toAgent(agent).spec,
    ...nonEmpty('variations', variations.filter((variation) => variation.agentId === agent.id).map(variationOf)),
    ...nonEmpty('schedules', schedules.filter((schedule) => schedule.agentId === agent.id).map(scheduleOf)),
  }));
}

/**
 * The bundle's document, each kind in creation order.
 * @param schedules the bundle's non-ARCHIVED schedules (those on an agent the bundle no longer owns are left out)
 */
export async function exportBundle(tx: BundleTransaction, rows: OwnedRows, bundleKey: string, schedules: readonly ScheduleRecord[] = []): Promise<BundleDocument> {
  return {
    ...nonEmpty('tools', rows.tools.map((tool) => ({ metadata: metadataOf(tool), spec: specOfRecord(tool) }))),
    ...nonEmpty('toolSets', (await exportToolSets(tx, rows.toolSets)) ?? []),
    ...nonEmpty('memoryLayers', await exportMemoryLayers(tx, rows.memoryLayers)),
    ...nonEmpty('agents', (await exportAgents(tx, rows.agents, bundleKey, schedules)) ?? []),
  };
}
