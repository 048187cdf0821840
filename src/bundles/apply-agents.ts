// Bundle steps for agents and their variations: create or update each declared
// one, delete the bundle's variations the document dropped, and make each
// variation's assignments (tools, tool sets, sub-agents) and memory layer stack
// match the names it lists.
import { toAgent, toVariation } from '../agents/mappers';
import type { AgentRecord, VariationRecord } from '../agents/records';
import type { BundleAgent, BundleVariation } from '../schemas/bundles.schema';
import type { NameTable } from './apply-tools';
import { applyOne, atField, FULL_METADATA_MASK, owned, type ApplyContext } from './context';
import { matchDeclared, resolveReference, type Matching } from './ownership';

/** Names the variations may reference, per kind. */
export interface References {
  tools: NameTable;
  toolSets: NameTable;
  memoryLayers: NameTable;
  agents: NameTable;
}

/** Creates or updates the declared agents (variations come after, once every agent exists). */
export async function applyAgents(context: ApplyContext, agents: readonly BundleAgent[], matching: Matching<AgentRecord>): Promise<Map<string, string>> {
  const { principal, workspace, services } = context;
  const ids = new Map<string, string>();
  for (const [index, agent] of agents.entries()) {
    const name = agent.metadata.name;
    const row = matching.existing.get(name);
    ids.set(name, await atField(`agents[${index}]`, () =>
      applyOne(context, 'agent', name, {
        row,
        before: () => toAgent(row!),
        create: () => services.agents.create(principal, workspace, { metadata: agent.metadata, spec: agent.spec }, owned(context)),
        update: (id) =>
          services.agents.update(workspace, id, { metadata: agent.metadata, spec: agent.spec ?? {}, updateMask: `${FULL_METADATA_MASK},spec` }, undefined, owned(context)),
      }),
    ));
  }
  return ids;
}

/** Applies every agent's variations and their assignments. */
export async function applyVariations(context: ApplyContext, agents: readonly BundleAgent[], agentIds: ReadonlyMap<string, string>, references: References): Promise<void> {
  const all = await context.tx.variationsOf([...agentIds.values()]);
  for (const [index, agent] of agents.entries()) {
    const agentId = agentIds.get(agent.metadata.name)!;
    const declared = agent.variations ?? [];
    const rows = all.filter((row) => row.agentId === agentId);
    const matching = matchDeclared('variation', declared.map((variation) => variation.metadata.name), rows, context.bundleKey, context.adopt);
    for (const stale of matching.stale) {
      await context.services.variations.delete(context.workspace, agentId, stale.id, { store: context.tx.agents });
      context.plan.record('deleted', 'variation', `${agent.metadata.name}/${stale.name}`, stale.id);
    }
    for (const [position, variation] of declared.entries()) {
      const field = `agents[${index}].variations[${position}]`;
      const id = await applyVariation(context, field, agent.metadata.name, agentId, variation, matching.existing.get(variation.metadata.name));
      const targets = assignmentTargets(field, variation, references);
      const assignmentsChanged = await syncAssignments(context, agentId, id, targets);
      const stackChanged = await syncMemoryLayers(context, agentId, id, targets.memoryLayers);
      if (assignmentsChanged || stackChanged) context.plan.touch('variation', id);
    }
  }
}

function applyVariation(context: ApplyContext, field: string, agentName: string, agentId: string, variation: BundleVariation, row: VariationRecord | undefined): Promise<string> {
  const { principal, workspace, services } = context;
  const body = { metadata: variation.metadata, spec: variation.spec };
  return atField(field, () =>
    applyOne(context, 'variation', `${agentName}/${variation.metadata.name}`, {
      row,
      before: () => toVariation(row!),
      create: () => services.variations.create(principal, workspace, agentId, body, owned(context)),
      update: (id) =>
        services.variations.update(workspace, agentId, id, { ...body, spec: variation.spec ?? {}, updateMask: `${FULL_METADATA_MASK},spec` }, undefined, owned(context)),
    }),
  );
}

interface Targets {
  tools: string[];
  toolSets: string[];
  agents: string[];
  /** Top of the stack first. */
  memoryLayers: string[];
}

function assignmentTargets(field: string, variation: BundleVariation, references: References): Targets {
  const resolve = (type: 'tool' | 'toolSet' | 'agent' | 'memoryLayer', key: 'tools' | 'toolSets' | 'subAgents' | 'memoryLayers', table: NameTable) =>
    (variation[key] ?? []).map((name, index) => resolveReference(type, `${field}.${key}[${index}]`, name, table.declared, table.rows, table.stale));
  return {
    tools: resolve('tool', 'tools', references.tools),
    toolSets: resolve('toolSet', 'toolSets', references.toolSets),
    agents: resolve('agent', 'subAgents', references.agents),
    memoryLayers: resolve('memoryLayer', 'memoryLayers', references.memoryLayers),
  };
}

/** Makes the variation's tool, tool set and sub-agent assignments exactly the targets; true when it changed them. */
async function syncAssignments(context: ApplyContext, agentId: string, variationId: string, targets: Targets): Promise<boolean> {
  const { principal, workspace, services, tx } = context;
  const current = await tx.agents.assignments.listByVariations([variationId]);
  const wanted = new Set([...targets.tools.map((id) => `tool:${id}`), ...targets.toolSets.map((id) => `toolSet:${id}`), ...targets.agents.map((id) => `agent:${id}`)]);
  const keyOf = (row: (typeof current)[number]) => (row.toolId ? `tool:${row.toolId}` : row.toolSetId ? `toolSet:${row.toolSetId}` : `agent:${row.agentId}`);
  const have = new Set(current.map(keyOf));
  let changed = false;
  for (const row of current.filter((assignment) => !wanted.has(keyOf(assignment)))) {
    await services.assignments.delete(workspace, agentId, variationId, row.id, { store: tx.agents });
    changed = true;
  }
  for (const key of [...wanted].filter((target) => !have.has(target))) {
    const [kind, id] = key.split(':');
    const body = kind === 'tool' ? { toolId: id } : kind === 'toolSet' ? { toolSetId: id } : { agentId: id };
    await services.assignments.create(principal, workspace, agentId, variationId, body, { store: tx.agents });
    changed = true;
  }
  return changed;
}

/** Makes the variation's memory layer stack exactly `layerIds` (top first); true when it changed it. */
async function syncMemoryLayers(context: ApplyContext, agentId: string, variationId: string, layerIds: readonly string[]): Promise<boolean> {
  const { principal, workspace, services, tx } = context;
  const current = await tx.agents.memoryLayerAssignments.listByVariations([variationId]);
  const wanted = layerIds.map((memoryLayerId, index) => ({ memoryLayerId, position: layerIds.length - 1 - index }));
  const same = current.length === wanted.length && wanted.every((item) => current.some((row) => row.memoryLayerId === item.memoryLayerId && row.position === item.position));
  if (same) return false;
  for (const row of current) await services.assignments.deleteMemoryLayerAssignment(workspace, agentId, variationId, row.id, { store: tx.agents });
  for (const item of wanted) await services.assignments.createMemoryLayerAssignment(principal, workspace, agentId, variationId, item, { store: tx.agents });
  return true;
}
