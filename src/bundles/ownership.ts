// Ownership rules of bundles: a declared name matches the bundle's own resource
// of that name, or else a same-named resource owned by no bundle or another
// bundle, which only `adopt` may take over; references by name resolve to the
// bundle's resources first, then to a unique resource of the workspace.
import { FailedPreconditionError, InvalidArgumentError } from '../errors';
import type { BundleResourceType } from '../schemas/bundles.schema';

/** What ownership needs to know of a row. */
export interface OwnedRow {
  id: string;
  name: string;
  bundleKey: string | null;
}

export interface Matching<T extends OwnedRow> {
  /** The row each declared name updates (absent: create). */
  existing: Map<string, T>;
  /** Ids of rows taken over from no bundle or another bundle. */
  adopted: Set<string>;
  /** Rows the bundle owns that the document no longer declares: delete. */
  stale: T[];
}

const KIND_WORDS: Record<BundleResourceType, string> = {
  tool: 'tool',
  toolSet: 'tool set',
  memoryLayer: 'memory layer',
  memoryEntry: 'memory entry',
  agent: 'agent',
  variation: 'agent variation',
  schedule: 'agent schedule',
};

/**
 * Matches declared names against rows (oldest first).
 * @throws FailedPreconditionError naming the resource when a declared name
 *   belongs to a resource of no bundle or another bundle and `adopt` is false
 */
export function matchDeclared<T extends OwnedRow>(type: BundleResourceType, names: readonly string[], rows: readonly T[], bundleKey: string, adopt: boolean): Matching<T> {
  const existing = new Map<string, T>();
  const adopted = new Set<string>();
  for (const name of names) {
    const own = rows.find((row) => row.name === name && row.bundleKey === bundleKey);
    const other = own ?? rows.find((row) => row.name === name);
    if (!other) continue;
    if (!own) {
      if (!adopt) throw conflict(type, other);
      adopted.add(other.id);
    }
    existing.set(name, other);
  }
  const kept = new Set([...existing.values()].map((row) => row.id));
  return { existing, adopted, stale: rows.filter((row) => row.bundleKey === bundleKey && !kept.has(row.id)) };
}

function conflict(type: BundleResourceType, row: OwnedRow): FailedPreconditionError {
  const owner = row.bundleKey ? `is owned by bundle "${row.bundleKey}"` : 'is not owned by any bundle';
  return new FailedPreconditionError(`${KIND_WORDS[type]} "${row.name}" (${row.id}) ${owner}; apply with adopt=true to take it over`);
}

/**
 * Resolves a reference by name: the bundle's own resource, else the one
 * resource of the workspace with that name.
 * @throws InvalidArgumentError naming `field` when nothing has that name
 * @throws FailedPreconditionError naming `field` when several resources do
 */
export function resolveReference(type: BundleResourceType, field: string, name: string, declared: ReadonlyMap<string, string>, rows: readonly OwnedRow[], excluded: ReadonlySet<string>): string {
  const own = declared.get(name);
  if (own) return own;
  const candidates = rows.filter((row) => row.name === name && !excluded.has(row.id));
  if (candidates.length === 1) return candidates[0].id;
  if (!candidates.length) throw InvalidArgumentError.forField(field, `no ${KIND_WORDS[type]} named "${name}" in the bundle or the workspace`);
  throw new FailedPreconditionError(`${field}: ${candidates.length} ${KIND_WORDS[type]}s of the workspace are named "${name}"; declare it in the bundle or rename the others`);
}
