// Bundle steps for tools and tool sets: create or update each declared one,
// then make each tool set's members match its `tools` names (tools an MCP sync
// created stay: their set owns them).
import type { ToolRecord, ToolSetRecord } from '../tools/records';
import { toTool, toToolSet } from '../tools/mappers';
import type { BundleToolSet, BundleTool } from '../schemas/bundles.schema';
import { applyOne, FULL_METADATA_MASK, owned, type ApplyContext } from './context';
import { resolveReference, type Matching } from './ownership';

/** Names resolve to these ids: the bundle's own resources, plus rows of the workspace for references. */
export interface NameTable {
  declared: Map<string, string>;
  rows: ReadonlyArray<{ id: string; name: string; bundleKey: string | null }>;
  /** Rows being deleted by this apply: never a reference target. */
  stale: Set<string>;
}

export async function applyTools(context: ApplyContext, tools: readonly BundleTool[], matching: Matching<ToolRecord>): Promise<Map<string, string>> {
  const { principal, workspace, services } = context;
  const ids = new Map<string, string>();
  for (const tool of tools) {
    const name = tool.metadata.name;
    const row = matching.existing.get(name);
    ids.set(name, await applyOne(context, 'tool', name, {
      row,
      before: () => toTool(row!),
      create: () => services.tools.create(principal, workspace, { metadata: tool.metadata, spec: tool.spec }, owned(context)),
      update: (id) =>
        services.tools.update(principal, workspace, id, { metadata: tool.metadata, spec: tool.spec, updateMask: `${FULL_METADATA_MASK},spec` }, undefined, owned(context)),
    }));
  }
  return ids;
}

export async function applyToolSets(context: ApplyContext, toolSets: readonly BundleToolSet[], matching: Matching<ToolSetRecord>, toolNames: NameTable): Promise<Map<string, string>> {
  const { principal, workspace, services } = context;
  const ids = new Map<string, string>();
  for (const [index, toolSet] of toolSets.entries()) {
    const name = toolSet.metadata.name;
    const row = matching.existing.get(name);
    const wanted = (toolSet.tools ?? []).map((toolName, position) =>
      resolveReference('tool', `toolSets[${index}].tools[${position}]`, toolName, toolNames.declared, toolNames.rows, toolNames.stale),
    );
    const id = await applyOne(context, 'toolSet', name, {
      row,
      before: () => toToolSet(row!),
      create: () => services.toolSets.create(principal, workspace, { metadata: toolSet.metadata, spec: toolSet.spec }, owned(context)),
      update: (setId) =>
        services.toolSets.update(principal, workspace, setId, { metadata: toolSet.metadata, spec: toolSet.spec ?? {}, updateMask: `${FULL_METADATA_MASK},spec` }, undefined, owned(context)),
    });
    if (await syncMembers(context, id, wanted)) context.plan.touch('toolSet', id);
    ids.set(name, id);
  }
  return ids;
}

/** Makes the set's members (other than its MCP-synced tools) exactly `wanted`; true when it changed them. */
async function syncMembers(context: ApplyContext, toolSetId: string, wanted: readonly string[]): Promise<boolean> {
  const { principal, workspace, services } = context;
  const current = ((await context.tx.agents.toolSetTools.toolsOf([toolSetId])).get(toolSetId) ?? []).filter((tool) => tool.sourceToolSetId !== toolSetId);
  const currentIds = new Set(current.map((tool) => tool.id));
  const wantedIds = new Set(wanted);
  let changed = false;
  for (const tool of current) {
    if (wantedIds.has(tool.id)) continue;
    await services.toolSets.removeTool(principal, workspace, toolSetId, tool.id, { store: context.tx.agents });
    changed = true;
  }
  for (const toolId of wantedIds) {
    if (currentIds.has(toolId)) continue;
    await services.toolSets.addTool(principal, workspace, toolSetId, toolId, { store: context.tx.agents });
    changed = true;
  }
  return changed;
}
