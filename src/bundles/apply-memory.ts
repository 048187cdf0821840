// Bundle steps for memory layers and their entries. Entries belong to their
// layer: the bundle makes a layer's entries match the document by key.
import { PermissionDeniedError } from '../errors';
import { toMemoryEntryDetail, toMemoryLayer } from '../memory/mappers';
import type { MemoryLayerRecord } from '../memory/records';
import type { BundleMemoryEntry, BundleMemoryLayer } from '../schemas/bundles.schema';
import { applyOne, atField, FULL_METADATA_MASK, type ApplyContext } from './context';
import type { Matching } from './ownership';

/**
 * Refuses a document declaring a layer under the name of a system-managed
 * one (an episodic layer) the bundle does not own: matching it would take it
 * over, and clients cannot change such a layer (spec 7 rule 6).
 * @throws PermissionDeniedError naming the layer
 */
export function refuseSystemManagedTakeover(names: readonly string[], rows: readonly MemoryLayerRecord[], bundleKey: string): void {
  for (const name of names) {
    if (rows.some((row) => row.name === name && row.bundleKey === bundleKey)) continue;
    const system = rows.find((row) => row.name === name && row.systemManaged);
    if (system) throw new PermissionDeniedError(`memory layer "${name}" (${system.id}) is system-managed; a bundle cannot take it over`);
  }
}

export async function applyMemoryLayers(context: ApplyContext, layers: readonly BundleMemoryLayer[], matching: Matching<MemoryLayerRecord>): Promise<Map<string, string>> {
  const { principal, workspace, memory, tx, bundleKey } = context;
  const ids = new Map<string, string>();
  for (const [index, layer] of layers.entries()) {
    const name = layer.metadata.name;
    const row = matching.existing.get(name);
    const id = await atField(`memoryLayers[${index}]`, () =>
      applyOne(context, 'memoryLayer', name, {
        row,
        before: () => toMemoryLayer(row!),
        async create() {
          const created = await memory.layers.create(principal, workspace, { metadata: layer.metadata, spec: layer.spec });
          // The memory service leaves bundleKey unset; a new row's updatedAt stays its createdAt.
          await tx.memory.layers.update(created.metadata.id, { bundleKey });
          return { ...created, metadata: { ...created.metadata, bundleKey } };
        },
        async update(layerId) {
          if (matching.adopted.has(layerId)) await tx.memory.layers.update(layerId, { bundleKey });
          return memory.layers.update(workspace, layerId, {
            metadata: layer.metadata,
            spec: { type: layer.spec.type, description: layer.spec.description },
            updateMask: `${FULL_METADATA_MASK},spec.type,spec.description`,
          });
        },
      }),
    );
    await applyEntries(context, `memoryLayers[${index}]`, name, id, layer.entries ?? []);
    ids.set(name, id);
  }
  return ids;
}

async function applyEntries(context: ApplyContext, field: string, layerName: string, layerId: string, entries: readonly BundleMemoryEntry[]): Promise<void> {
  const { principal, workspace, memory, tx } = context;
  const current = new Map((await tx.entriesOf([layerId])).map((entry) => [entry.key, entry]));
  const layer = (await tx.memory.layers.findById(layerId))!;
  for (const [index, entry] of entries.entries()) {
    const { key } = entry.spec;
    const row = current.get(key);
    current.delete(key);
    const spec = { title: entry.spec.title, description: entry.spec.description, content: entry.spec.content ?? '' };
    await atField(`${field}.entries[${index}]`, () =>
      applyOne(context, 'memoryEntry', `${layerName}/${key}`, {
        row,
        before: () => toMemoryEntryDetail(row!, { memoryLayer: layer }),
        create: () => memory.entries.create(principal, workspace, layerId, { metadata: entry.metadata, spec: { key, ...spec } }),
        update: (id) =>
          memory.entries.update(workspace, layerId, id, {
            metadata: { ...entry.metadata, name: entry.metadata?.name ?? key },
            spec,
            updateMask: `${FULL_METADATA_MASK},spec.title,spec.description,spec.content`,
          }),
      }),
    );
  }
  for (const stale of current.values()) {
    await memory.entries.delete(workspace, layerId, stale.id);
    context.plan.record('deleted', 'memoryEntry', `${layerName}/${stale.key}`, stale.id);
  }
}
