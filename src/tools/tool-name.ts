// The name a model sees for a tool or sub-agent (api-decisions.md "Tools and
// tool sets"): the one place this rule lives. Names are unique per objective:
// two tools whose names sanitize alike, a sub-agent named like a tool, or a
// tool named like a service-provided tool would otherwise shadow one another,
// so the later one gets a `_<n>` suffix.
export const MODEL_TOOL_NAME_MAX = 64;

/** The tools the service itself offers a model; no assigned tool or sub-agent takes their names. */
export const SERVICE_TOOL_NAMES: readonly string[] = ['emit_output', 'load_skill', 'memory_read', 'memory_write', 'search_tools'];

/** `metadata.name` with every character outside [A-Za-z0-9_-] replaced by `_`, cut to 64. */
export function modelToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/gu, '_').slice(0, MODEL_TOOL_NAME_MAX);
}

/**
 * The names of the tools offered together, in order: each model name as it
 * is when free, else with the first `_<n>` (n = 2, 3 …) that makes it free,
 * the name cut so the whole stays within 64 characters.
 */
export function uniqueModelToolNames(modelNames: readonly string[], reserved: readonly string[] = SERVICE_TOOL_NAMES): string[] {
  const taken = new Set(reserved);
  return modelNames.map((name) => {
    let unique = name;
    for (let suffix = 2; taken.has(unique); suffix++) unique = `${name.slice(0, MODEL_TOOL_NAME_MAX - String(suffix).length - 1)}_${suffix}`;
    taken.add(unique);
    return unique;
  });
}
