// Read-only fields a client sends back (say, a resource it just read) are
// ignored, never stored (api-decisions.md "Transport conventions"). They are
// removed before validation, so the strict schemas still refuse every field
// that is genuinely unknown.

/** Server-populated metadata fields of every resource shape (spec 2.2). */
const READ_ONLY_METADATA = ['id', 'accountId', 'workspaceId', 'profileId', 'createdAt', 'updatedAt', 'bundleKey'];

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function deletePath(target: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  const last = parts.pop()!;
  let current: unknown = target;
  for (const part of parts) {
    if (!isObject(current)) return;
    current = current[part];
  }
  if (isObject(current)) delete current[last];
}

/**
 * A copy of `body` without its read-only fields: `info`, the server-populated
 * `metadata.*`, and the route's own `extra` paths (`status`, `spec.token` ...).
 */
export function withoutReadOnlyFields(body: unknown, extra: readonly string[] = []): unknown {
  if (!isObject(body)) return body;
  const copy = structuredClone(body);
  delete copy.info;
  for (const field of READ_ONLY_METADATA) deletePath(copy, `metadata.${field}`);
  for (const path of extra) deletePath(copy, path);
  return copy;
}
