// Checks of a bundle document that need no database: unique names per kind
// (variations and schedules per agent, entry keys per layer), schedules only
// under their agent, and the names each kind declares or references.
import { InvalidArgumentError } from '../errors';
import type { BundleDocument } from '../schemas/bundles.schema';

/** Names per kind: declared by the document plus referenced by name. */
export interface DocumentNames {
  tools: string[];
  toolSets: string[];
  memoryLayers: string[];
  agents: string[];
}

function checkUnique(field: string, names: readonly string[], what: string): void {
  const seen = new Set<string>();
  names.forEach((name, index) => {
    if (seen.has(name)) throw InvalidArgumentError.forField(`${field}[${index}]`, `${what} "${name}" appears more than once`);
    seen.add(name);
  });
}

/** A schedule belongs to one agent, so the document nests it there; the top-level list stays for compatibility, empty. */
function checkNoTopLevelSchedules(schedules: readonly unknown[] | undefined): void {
  if (schedules?.length) {
    throw InvalidArgumentError.forField('schedules', 'a schedule belongs to its agent: declare it under agents[].schedules');
  }
}

/** The path of the first string (value or key) holding a NUL character, which Postgres text cannot store; null when none does. */
function pathOfNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = pathOfNul(item, `${path}[${index}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const field = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return field;
    const found = pathOfNul(item, field);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Checks what the JSON Schema cannot.
 * @throws InvalidArgumentError naming the duplicate's field, or a string holding a NUL character
 * @throws InvalidArgumentError for a non-empty top-level `schedules`
 */
export function checkDocument(document: BundleDocument): void {
  const nul = pathOfNul(document, '');
  if (nul !== null) throw InvalidArgumentError.forField(nul || '(body)', 'must not contain NUL characters');
  checkNoTopLevelSchedules(document.schedules);
  checkUnique('tools', (document.tools ?? []).map((tool) => tool.metadata.name), 'the tool name');
  checkUnique('toolSets', (document.toolSets ?? []).map((set) => set.metadata.name), 'the tool set name');
  checkUnique('memoryLayers', (document.memoryLayers ?? []).map((layer) => layer.metadata.name), 'the memory layer name');
  (document.memoryLayers ?? []).forEach((layer, index) =>
    checkUnique(`memoryLayers[${index}].entries`, (layer.entries ?? []).map((entry) => entry.spec.key), 'the entry key'),
  );
  checkUnique('agents', (document.agents ?? []).map((agent) => agent.metadata.name), 'the agent name');
  (document.toolSets ?? []).forEach((set, index) => checkUnique(`toolSets[${index}].tools`, set.tools ?? [], 'the tool'));
  (document.agents ?? []).forEach((agent, index) => {
    checkUnique(`agents[${index}].schedules`, (agent.schedules ?? []).map((schedule) => schedule.metadata.name), 'the schedule name');
    checkUnique(`agents[${index}].variations`, (agent.variations ?? []).map((variation) => variation.metadata.name), 'the variation name');
    (agent.variations ?? []).forEach((variation, position) => {
      for (const [key, what] of [['tools', 'the tool'], ['toolSets', 'the tool set'], ['subAgents', 'the sub-agent'], ['memoryLayers', 'the memory layer']] as const) {
        checkUnique(`agents[${index}].variations[${position}].${key}`, variation[key] ?? [], what);
      }
    });
  });
}

/** Every name the document declares or references, per kind. */
export function documentNames(document: BundleDocument): DocumentNames {
  const variations = (document.agents ?? []).flatMap((agent) => agent.variations ?? []);
  const unique = (names: string[]) => [...new Set(names)];
  return {
    tools: unique([
      ...(document.tools ?? []).map((tool) => tool.metadata.name),
      ...(document.toolSets ?? []).flatMap((set) => set.tools ?? []),
      ...variations.flatMap((variation) => variation.tools ?? []),
    ]),
    toolSets: unique([...(document.toolSets ?? []).map((set) => set.metadata.name), ...variations.flatMap((variation) => variation.toolSets ?? [])]),
    memoryLayers: unique([...(document.memoryLayers ?? []).map((layer) => layer.metadata.name), ...variations.flatMap((variation) => variation.memoryLayers ?? [])]),
    agents: unique([...(document.agents ?? []).map((agent) => agent.metadata.name), ...variations.flatMap((variation) => variation.subAgents ?? [])]),
  };
}
