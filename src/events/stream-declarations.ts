// Stream declarations arrive from several places (the runtime's own stream,
// each actor kind's): both EventPublisher implementations merge them the same
// way before creating anything.
import type { StreamDeclaration } from '../ports/event-publisher';

/**
 * Declarations with the same name as one, their subjects united in first-seen
 * order; of several maximum ages the shortest (a retention promised by one
 * declarer must hold).
 */
export function mergeStreamDeclarations(streams: StreamDeclaration[]): StreamDeclaration[] {
  const byName = new Map<string, StreamDeclaration>();
  for (const stream of streams) {
    const merged = byName.get(stream.name) ?? { name: stream.name, subjects: [] };
    for (const subject of stream.subjects) if (!merged.subjects.includes(subject)) merged.subjects.push(subject);
    if (stream.maxAgeMs !== undefined) merged.maxAgeMs = Math.min(merged.maxAgeMs ?? Infinity, stream.maxAgeMs);
    byName.set(stream.name, merged);
  }
  return [...byName.values()];
}
