// An EventPublisher that fails while `down` is set (JetStream unreachable)
// and otherwise keeps what it published in memory, in publication order.
import { MemoryEventPublisher } from '../../actors';
import type { EventPublisher, PublishedEvent } from '../../src/ports/event-publisher';

export class FlakyPublisher implements EventPublisher {
  down = false;
  readonly inner = new MemoryEventPublisher();
  async prepare(): Promise<void> {}
  async publish(event: PublishedEvent): Promise<void> {
    if (this.down) throw new Error('stream unavailable');
    await this.inner.publish(event);
  }
  async close(): Promise<void> {}
}
