// The plan of a bundle apply (api-decisions.md "Search and bundles"): what was
// (or, in a dry run, would be) created, updated, deleted or left unchanged.
import type { BundlePlan, BundleResourceType, PlanItem } from '../schemas/bundles.schema';

export type Outcome = 'created' | 'updated' | 'deleted' | 'unchanged';

/** Collects plan items as an apply goes; later steps may turn "unchanged" into "updated". */
export class PlanRecorder {
  private readonly items: Record<Outcome, PlanItem[]> = { created: [], updated: [], deleted: [], unchanged: [] };

  constructor(private readonly dryRun: boolean) {}

  record(outcome: Outcome, type: BundleResourceType, name: string, id: string): void {
    // A dry run rolls back, so the ids of resources it created never exist.
    const showId = !(this.dryRun && outcome === 'created');
    this.items[outcome].push({ type, name, ...(showId ? { id } : {}) });
  }

  /** Marks an unchanged resource as updated (its tools, assignments or entries changed). */
  touch(type: BundleResourceType, id: string): void {
    const index = this.items.unchanged.findIndex((item) => item.type === type && item.id === id);
    if (index >= 0) this.items.updated.push(...this.items.unchanged.splice(index, 1));
  }

  result(bundleKey: string): BundlePlan {
    return { bundleKey, dryRun: this.dryRun, ...this.items };
  }
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value as Record<string, unknown>)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * True when two wire representations of one resource hold the same
 * configuration: `info` and `metadata.updatedAt` are ignored.
 */
export function sameConfiguration(before: { metadata: object; spec?: unknown }, after: { metadata: object; spec?: unknown; content?: unknown }): boolean {
  const strip = (resource: { metadata: object; spec?: unknown; content?: unknown }) => {
    const { updatedAt: _updatedAt, ...metadata } = resource.metadata as Record<string, unknown>;
    return JSON.stringify(canonical({ metadata, spec: resource.spec, content: resource.content }));
  };
  return strip(before) === strip(after);
}
