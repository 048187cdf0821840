// PATCH semantics (api-decisions.md): `updateMask` names field paths relative to
// the body; with no mask every field present in the body applies (merge patch).
import { InvalidArgumentError } from '../errors';

/**
 * Resolves the paths a PATCH applies.
 * @param body the request body (without `updateMask`)
 * @param mask the comma-separated mask, if any
 * @param allowed every path the resource lets clients update (e.g. `metadata.name`, `spec.description`)
 * @returns the paths to apply, each one of `allowed`
 * @throws InvalidArgumentError naming `updateMask` for a path that does not exist
 */
export function resolveUpdatePaths(body: Record<string, unknown>, mask: string | undefined, allowed: readonly string[]): string[] {
  if (mask !== undefined && mask.trim() !== '') {
    const paths = mask.split(',').map((path) => path.trim()).filter(Boolean);
    for (const path of paths) {
      if (!allowed.includes(path)) {
        throw InvalidArgumentError.forField('updateMask', `"${path}" is not an updatable field (allowed: ${allowed.join(', ')})`);
      }
    }
    return paths;
  }
  return allowed.filter((path) => getPath(body, path) !== undefined);
}

/** Reads a dotted path from an object; undefined when any step is missing. */
export function getPath(source: unknown, path: string): unknown {
  let current: unknown = source;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** True when the PATCH touches `path` (exactly, or a parent of it, or a child of it). */
export function touches(paths: readonly string[], path: string): boolean {
  return paths.some((candidate) => candidate === path || candidate.startsWith(`${path}.`) || path.startsWith(`${candidate}.`));
}
