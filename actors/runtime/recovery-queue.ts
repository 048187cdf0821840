// Bounded concurrency for activations after a takeover: a node that acquires
// many shards at once (a peer died) would otherwise replay every actor with
// unfinished work at the same time and starve the turns it already serves.
export class RecoveryQueue {
  private readonly waiting: Array<() => Promise<void>> = [];
  private running = 0;

  /** @param concurrency most recoveries in progress at once */
  constructor(private readonly concurrency: number) {}

  /** Queues a recovery; it runs when a slot is free. A failure is the task's to report. */
  push(task: () => Promise<void>): void {
    this.waiting.push(task);
    this.pump();
  }

  /** Recoveries queued or running. */
  size(): number {
    return this.waiting.length + this.running;
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      this.running++;
      void task()
        .catch(() => undefined)
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}
