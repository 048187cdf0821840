// The name a model sees for a tool or sub-agent (api-decisions.md "Tools and
// tool sets"): the one place this rule lives.
export const MODEL_TOOL_NAME_MAX = 64;

/** `metadata.name` with every character outside [A-Za-z0-9_-] replaced by `_`, cut to 64. */
export function modelToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/gu, '_').slice(0, MODEL_TOOL_NAME_MAX);
}
