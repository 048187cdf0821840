// An objective's memory as resolved at its creation (issue 25 item 1): the
// stack (the variation's layers by position, then the request's
// memoryLayerIds on top in the order given), its SKILLS layers, the skills
// manifest, and the episodic settings. It checks memoryLayerIds (spec 7
// rule 6) and reads the database at most once; it writes nothing.
import { InvalidArgumentError, NotFoundError } from '../errors';
import type { MemoryStore } from '../ports/memory-store';
import type { ObjectiveMemory } from '../ports/service-tools';
import { MemoryLayerType } from './records';
import { skillsManifest, SKILLS_MANIFEST_MAX_ENTRIES } from './skills-manifest';

/** A layer of the variation's stack as the run configuration reads it. */
export interface VariationMemoryLayer {
  memoryLayerId: string;
  /** Higher is nearer the top. */
  position: number;
  type: MemoryLayerType;
}

/** What the stack is resolved from. */
export interface ObjectiveMemoryRequest {
  workspace: { id: string; accountId: string };
  /** The chosen variation's layers (any order: sorted here) and its episodic settings. */
  variation: { layers: readonly VariationMemoryLayer[]; enableEpisodicMemory: boolean; episodicMemoryTtl: number | null };
  /** The objective's `memoryLayerIds`, bottom to top (absent for sub-objectives and schedules). */
  memoryLayerIds?: readonly string[];
  episodicKey?: string;
}

/**
 * The stack bottom to top: the variation's layers by position, then
 * `requested` in order. A requested layer that the variation has too moves
 * up to its requested place, so every layer appears once.
 */
export function stackOrder(variationLayers: readonly Pick<VariationMemoryLayer, 'memoryLayerId' | 'position'>[], requested: readonly string[]): string[] {
  const onTop = new Set(requested);
  const below = [...variationLayers].sort((a, b) => a.position - b.position).map((layer) => layer.memoryLayerId).filter((id) => !onTop.has(id));
  return [...below, ...requested];
}

/** `memoryLayerIds[i]: ...` for an id named twice. @throws InvalidArgumentError */
function checkDistinct(ids: readonly string[]): void {
  const first = new Map<string, number>();
  ids.forEach((id, index) => {
    const earlier = first.get(id);
    if (earlier !== undefined) throw InvalidArgumentError.forField(`memoryLayerIds[${index}]`, `repeats memoryLayerIds[${earlier}] (memory layer ${id}); name each layer once`);
    first.set(id, index);
  });
}

export class ObjectiveMemoryResolver {
  constructor(private readonly store: MemoryStore) {}

  /**
   * The objective's memory, or undefined when it has no layers and no episodic memory.
   * @throws InvalidArgumentError naming `memoryLayerIds[i]` for an id named twice or a system-managed layer
   * @throws NotFoundError naming `memoryLayerIds[i]` for an unknown layer or another workspace's
   */
  async resolve(request: ObjectiveMemoryRequest): Promise<ObjectiveMemory | undefined> {
    const requested = request.memoryLayerIds ?? [];
    checkDistinct(requested);
    const layerIds = stackOrder(request.variation.layers, requested);
    const episodic = request.variation.enableEpisodicMemory && request.episodicKey
      ? { key: request.episodicKey, ttlSeconds: request.variation.episodicMemoryTtl }
      : null;
    if (!layerIds.length && !episodic) return undefined;
    const typeOf = new Map<string, MemoryLayerType>(request.variation.layers.map((layer) => [layer.memoryLayerId, layer.type]));
    const variationHasSkills = request.variation.layers.some((layer) => layer.type === MemoryLayerType.SKILLS);
    // No statement at all for a stack of the variation's layers without skills.
    if (!requested.length && !variationHasSkills) return { layerIds, skillsLayerIds: [], skillsManifest: null, episodic };
    const read = await this.store.stacks.read({ workspaceId: request.workspace.id, layerIds, checkIds: requested, skillsLimit: SKILLS_MANIFEST_MAX_ENTRIES });
    const found = new Map(read.checked.map((layer) => [layer.id, layer]));
    requested.forEach((id, index) => {
      const layer = found.get(id);
      const field = `memoryLayerIds[${index}]`;
      if (!layer || layer.workspaceId !== request.workspace.id || layer.accountId !== request.workspace.accountId) throw new NotFoundError(`${field}: memory layer ${id} not found`);
      if (layer.systemManaged) throw InvalidArgumentError.forField(field, `memory layer ${id} is system-managed and cannot be put in an objective's stack`);
      typeOf.set(id, layer.type);
    });
    return {
      layerIds,
      skillsLayerIds: layerIds.filter((id) => typeOf.get(id) === MemoryLayerType.SKILLS),
      skillsManifest: skillsManifest(read.skills, read.skillCount),
      episodic,
    };
  }
}
