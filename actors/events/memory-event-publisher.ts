// The EventPublisher port in memory, for unit tests and benchmarks: events go
// to local listeners and a bounded recent list; ids seen are dropped like
// JetStream's duplicate window would. Nothing survives the process and there
// are no consumers: embedded mode uses EmbeddedEventLog (in the database).
import { subjectMatches } from '../../src/events/subject-pattern';
import type { EventPublisher, PublishedEvent } from '../../src/ports/event-publisher';

/** In-process publication with per-id de-duplication over the last `capacity` events. */
export class MemoryEventPublisher implements EventPublisher {
  private readonly recent: PublishedEvent[] = [];
  private readonly seen = new Set<string>();
  private readonly listeners = new Set<(event: PublishedEvent) => void>();

  constructor(private readonly capacity = 10_000) {}

  /** Streams are not modelled: every subject is accepted. */
  async prepare(): Promise<void> {}

  async publish(event: PublishedEvent): Promise<void> {
    if (this.seen.has(event.id)) return;
    this.seen.add(event.id);
    this.recent.push(event);
    if (this.recent.length > this.capacity) this.seen.delete(this.recent.shift()!.id);
    for (const listener of this.listeners) listener(event);
  }

  /** Streams are not modelled: the filters apply to every event kept. */
  async purgeSubjects(_stream: string, filters: readonly string[]): Promise<void> {
    const kept = this.recent.filter((event) => !filters.some((filter) => subjectMatches(filter, event.subject)));
    this.recent.splice(0, this.recent.length, ...kept);
  }

  /** Calls `listener` for every event published from now on; returns the unsubscribe function. */
  subscribe(listener: (event: PublishedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The events kept, oldest first. */
  published(): readonly PublishedEvent[] {
    return this.recent;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
