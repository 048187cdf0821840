// Stream declarations arrive from several places (the runtime's own stream,
// each actor kind's): both EventPublisher implementations merge them the same
// way before creating anything.
import type { StreamDeclaration } from '../ports/event-publisher';

/** Declarations with the same name as one, their subjects united in first-seen order. */
export function mergeStreamDeclarations(streams: StreamDeclaration[]): StreamDeclaration[] {
  const byName = new Map<string, string[]>();
  for (const stream of streams) {
    const subjects = byName.get(stream.name) ?? [];
    for (const subject of stream.subjects) if (!subjects.includes(subject)) subjects.push(subject);
    byName.set(stream.name, subjects);
  }
  return [...byName].map(([name, subjects]) => ({ name, subjects }));
}
