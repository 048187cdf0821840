// The outbox relay against an in-memory outbox table and publisher: rows a
// turn committed are handed over in memory and published in order without
// reading the table; a shard that opens has the rows its previous owner left
// published first, and rows offered while that read is due go out once (from
// the read); an actor whose publication fails holds back its later rows for
// the pause while other actors' rows go out; rows of a shard no longer owned
// stay in the table for its new owner; flush() racing a turn's commit keeps
// the actor's order; a row read back whose payload is gone from the read model
// that kept it is marked, not published, and does not hold its actor back;
// a publisher that is unreachable as a whole sets no actor aside, is logged
// once, and its return (onAvailable) has the backlog published at once.
import assert from 'node:assert/strict';
import { OutboxRelay } from '../../actors/events/outbox-relay';
import type { RuntimeLogger } from '../../actors/runtime/runtime-logger';
import type { ActorOutboxRepository, OutboxEvent } from '../../persistence/runtime/actor-outbox.repository';
import { PublisherUnavailableError, type EventPublisher, type PublishedEvent } from '../../src/ports/event-publisher';

/** The relay's FAILED_ACTOR_PAUSE_MS. */
const PAUSE_MS = 2000;

const silentLogger: RuntimeLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(2);
  }
}

/** Event `seq` of actor `actor` (its persistence key), on `shard`. */
function event(actor: string, seq: number, shard = 1): OutboxEvent {
  return {
    id: `${actor}#${seq}`,
    shard,
    subject: `events.${actor}`,
    payload: { seq },
    headers: { 'Agentrt-Actor-Key': actor, 'Agentrt-Actor-Sequence': String(seq) },
    actorKey: actor,
    actorSeq: seq,
    createdAt: new Date(),
  };
}

/** The actor's ids in `ids`, in order. */
const of = (actor: string, ids: readonly string[]) => ids.filter((id) => id.startsWith(`${actor}#`));

/** The outbox table in memory, in position (insertion) order; records the relay's calls. */
class FakeOutbox {
  readonly table: { row: OutboxEvent; published: boolean }[] = [];
  readonly listCalls: { shards: number[]; limit: number; excluded: string[] }[] = [];
  readonly markCalls: string[][] = [];
  lagCalls = 0;
  private gate: Promise<void> | undefined;

  insert(rows: readonly OutboxEvent[]): void {
    for (const row of rows) this.table.push({ row, published: false });
  }

  /**
   * Reads from now on wait until the returned function is called; each sees
   * the table as it was when it started (as a statement does).
   */
  holdReads(): () => void {
    let release!: () => void;
    this.gate = new Promise((resolve) => (release = resolve));
    return () => {
      this.gate = undefined;
      release();
    };
  }

  async listUnpublished(shards: number[], limit: number, excludedKeys: string[] = []): Promise<OutboxEvent[]> {
    this.listCalls.push({ shards: [...shards], limit, excluded: [...excludedKeys] });
    const rows = this.table
      .filter(({ row, published }) => !published && shards.includes(row.shard) && (row.actorKey === null || !excludedKeys.includes(row.actorKey)))
      .slice(0, limit)
      .map(({ row }) => row);
    if (this.gate) await this.gate;
    else await tick();
    return rows;
  }

  async markPublished(ids: string[]): Promise<void> {
    this.markCalls.push([...ids]);
    for (const stored of this.table) if (ids.includes(stored.row.id)) stored.published = true;
  }

  async lagSeconds(): Promise<number> {
    this.lagCalls += 1;
    return 0;
  }

  unpublished(): string[] {
    return this.table.filter((stored) => !stored.published).map(({ row }) => row.id);
  }

  isPublished(id: string): boolean {
    return this.table.some((stored) => stored.row.id === id && stored.published);
  }
}

/** Publishes one event at a time (no publishMany); can refuse a subject or an id a number of times. */
class FakePublisher implements EventPublisher {
  /** Ids stored, in the order they were stored (an id published twice appears twice). */
  readonly published: string[] = [];
  /** Every single-event publish, refused or not, with its time. */
  readonly attempts: { id: string; ok: boolean; at: number }[] = [];
  prepareCalls = 0;
  private prepareFailures = 0;
  private readonly failures = new Map<string, number>();

  /** The next `times` publications of events with this subject or id fail. */
  failFor(subjectOrId: string, times: number): void {
    this.failures.set(subjectOrId, times);
  }

  failPrepare(times: number): void {
    this.prepareFailures = times;
  }

  async prepare(): Promise<void> {
    this.prepareCalls += 1;
    await tick();
    if (this.prepareFailures > 0) {
      this.prepareFailures -= 1;
      throw new Error('streams unavailable');
    }
  }

  async publish(event: PublishedEvent): Promise<void> {
    await tick();
    const key = this.failing(event);
    if (key) {
      this.failures.set(key, (this.failures.get(key) ?? 1) - 1);
      this.attempts.push({ id: event.id, ok: false, at: Date.now() });
      throw new Error(`refused ${event.id}`);
    }
    this.attempts.push({ id: event.id, ok: true, at: Date.now() });
    this.published.push(event.id);
  }

  async close(): Promise<void> {}

  /** The failure key (subject or id) that refuses this event, if any. */
  protected failing(event: PublishedEvent): string | undefined {
    return [event.id, event.subject].find((key) => (this.failures.get(key) ?? 0) > 0);
  }
}

/** Also publishes a batch in one write, all or none (a refused batch uses up no failure count). */
class BatchingFakePublisher extends FakePublisher {
  readonly batches: string[][] = [];

  async publishMany(events: PublishedEvent[]): Promise<void> {
    await tick();
    if (events.some((event) => this.failing(event))) throw new Error('batch refused');
    this.batches.push(events.map((event) => event.id));
    this.published.push(...events.map((event) => event.id));
  }
}

/** A publisher that can be unreachable as a whole (a lost NATS connection) and says when it is back. */
class ReconnectingFakePublisher extends FakePublisher {
  down = false;
  private readonly listeners = new Set<() => void>();

  override async publish(event: PublishedEvent): Promise<void> {
    if (this.down) {
      await tick();
      this.attempts.push({ id: event.id, ok: false, at: Date.now() });
      throw new PublisherUnavailableError();
    }
    await super.publish(event);
  }

  onAvailable(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The connection is back. */
  reconnect(): void {
    this.down = false;
    for (const listener of this.listeners) listener();
  }
}

interface World {
  outbox: FakeOutbox;
  publisher: FakePublisher;
  relay: OutboxRelay;
  /** What a turn does: writes the rows with its state, then offers them to the relay. */
  commit(...rows: OutboxEvent[]): void;
  own(shards: number[]): void;
  /** A shard opened: the relay reads the backlog; resolves when that pass is over. */
  backlogPass(): Promise<void>;
}

function world(publisher: FakePublisher, owned: number[] = [1], lingerMs = 0, logger: RuntimeLogger = silentLogger): World {
  const outbox = new FakeOutbox();
  let shards = [...owned];
  const relay = new OutboxRelay({
    outbox: outbox as unknown as ActorOutboxRepository,
    publisher,
    streams: [{ name: 'EVENTS', subjects: ['events.>'] }],
    shards: () => shards,
    pollMs: 60_000,
    lingerMs,
    logger,
  });
  return {
    outbox,
    publisher,
    relay,
    commit: (...rows) => {
      outbox.insert(rows);
      relay.offer(rows);
    },
    own: (next) => (shards = [...next]),
    backlogPass: async () => {
      const lagCalls = outbox.lagCalls;
      relay.readBacklog();
      await until(() => outbox.lagCalls > lagCalls, 'the backlog pass');
      await sleep(5);
    },
  };
}

const PUBLISHERS: { name: string; create: () => FakePublisher }[] = [
  { name: 'a publisher without publishMany', create: () => new FakePublisher() },
  { name: 'a publisher with publishMany', create: () => new BatchingFakePublisher() },
];

describe('OutboxRelay', () => {
  let current: World | undefined;

  afterEach(async () => {
    await current?.relay.stop();
    current = undefined;
  });

  it('publishes the rows of turns that commit within the linger in one publication, in their order', async () => {
    const w = (current = world(new BatchingFakePublisher(), [1], 30));
    await w.backlogPass();
    // Three turns committing a few milliseconds apart, as a burst's do.
    w.commit(event('A', 1));
    await sleep(3);
    w.commit(event('B', 1), event('B', 2));
    await sleep(3);
    w.commit(event('A', 2));
    assert.deepEqual(w.publisher.published, [], 'nothing goes out before the linger is over');
    await until(() => w.outbox.unpublished().length === 0, 'every offered row marked published');
    // Without the linger, the first commit's pass starts at once and the others form a second publication.
    assert.deepEqual((w.publisher as BatchingFakePublisher).batches, [['A#1', 'B#1', 'B#2', 'A#2']]);
  });

  it('sets no actor aside while the publisher is unreachable, logs that once, and publishes the backlog as soon as it is back', async () => {
    const warnings: string[] = [];
    const publisher = new ReconnectingFakePublisher();
    // The poll (60 s) never comes within the test: only the publisher's return can wake the relay.
    const w = (current = world(publisher, [1], 0, { ...silentLogger, warn: (_fields, message) => warnings.push(message) }));
    w.relay.start();
    await w.backlogPass();
    publisher.down = true;
    w.commit(event('A', 1), event('A', 2));
    w.commit(event('B', 1));
    await until(() => publisher.attempts.some((attempt) => !attempt.ok), 'a refused publication');
    await w.backlogPass();
    await w.backlogPass();
    assert.deepEqual(w.outbox.unpublished(), ['A#1', 'A#2', 'B#1']);
    assert.ok(w.outbox.listCalls.every((call) => call.excluded.length === 0), 'no actor is set aside for the whole publisher\'s outage');
    assert.equal(warnings.length, 1, `one warning for the outage: ${warnings.join(' | ')}`);

    publisher.reconnect();
    await until(() => w.outbox.unpublished().length === 0, 'the backlog published on the publisher\'s return');
    assert.deepEqual(of('A', publisher.published), ['A#1', 'A#2']);
    assert.deepEqual(of('B', publisher.published), ['B#1']);
  });

  for (const { name, create } of PUBLISHERS) {
    describe(`with ${name}`, () => {
      it('publishes the rows turns committed in their order and marks them, without reading the outbox table', async () => {
        const w = (current = world(create()));
        await w.backlogPass();
        assert.equal(w.outbox.listCalls.length, 1, 'the first pass reads the table');

        w.commit(event('A', 1), event('A', 2));
        w.commit(event('B', 1));
        w.commit(event('A', 3));
        await until(() => w.outbox.unpublished().length === 0, 'every offered row marked published');
        await sleep(10);

        assert.deepEqual(of('A', w.publisher.published), ['A#1', 'A#2', 'A#3']);
        assert.deepEqual(of('B', w.publisher.published), ['B#1']);
        assert.equal(w.publisher.published.length, 4, 'each row published once');
        assert.equal(w.outbox.listCalls.length, 1, 'offered rows are not read back from the table');
        assert.deepEqual(w.outbox.markCalls.flat().sort(), ['A#1', 'A#2', 'A#3', 'B#1']);
        if (w.publisher instanceof BatchingFakePublisher) {
          assert.deepEqual(w.publisher.attempts, [], 'publishMany carries every row');
          assert.deepEqual(w.publisher.batches.flat(), w.publisher.published);
        }
      });

      it('marks a row read back whose payload its read model no longer holds published without publishing it, and publishes the actor’s later rows', async () => {
        const w = (current = world(create(), [1]));
        // Left by a previous owner: the first keeps no payload and its read model lost it (the content was deleted).
        w.outbox.insert([{ ...event('A', 1), payload: undefined, payloadProjected: true }, event('A', 2), event('B', 1)]);
        await w.backlogPass();
        assert.deepEqual(w.publisher.published, ['A#2', 'B#1']);
        assert.deepEqual(w.outbox.unpublished(), [], 'the lost row is not read again and again, holding back its actor');
      });

      it('publishes the rows a shard’s previous owner left before the rows offered after the shard opens, each once', async () => {
        const w = (current = world(create(), [1]));
        // Left by the shard's previous owner: in the table, never offered here.
        w.outbox.insert([event('A', 1, 2), event('A', 2, 2)]);
        await w.backlogPass();
        assert.deepEqual(w.publisher.published, [], 'shard 2 is not owned yet');

        w.own([1, 2]);
        const release = w.outbox.holdReads();
        w.relay.readBacklog();
        // Committed while the read is due: dropped from memory, found by the read.
        w.commit(event('A', 3, 2));
        await until(() => w.outbox.listCalls.length === 2, 'the backlog read started');
        // Committed after the read started: offered, published after the read's rows.
        w.commit(event('A', 4, 2));
        await sleep(20);
        assert.deepEqual(w.publisher.published, [], 'nothing goes out before the backlog read returns');
        release();
        await until(() => w.outbox.isPublished('A#4'), 'A#4 marked published');
        await sleep(10);

        assert.deepEqual(w.publisher.published, ['A#1', 'A#2', 'A#3', 'A#4']);
        assert.deepEqual(w.outbox.unpublished(), []);
        assert.equal(w.outbox.listCalls.length, 2, 'A#4 is published from memory');
      });

      it('holds back the later rows of an actor whose publish fails for the pause, while other actors’ rows go out', async () => {
        const w = (current = world(create()));
        w.publisher.failFor('events.A', 1);
        await w.backlogPass();

        w.commit(event('A', 1), event('A', 2));
        w.commit(event('B', 1));
        await until(() => w.outbox.isPublished('B#1') && w.publisher.attempts.some((a) => a.id === 'A#1' && !a.ok), 'B#1 out and A#1 refused');
        const failedAt = w.publisher.attempts.find((a) => a.id === 'A#1' && !a.ok)!.at;

        w.commit(event('A', 3));
        w.commit(event('B', 2));
        await until(() => w.outbox.isPublished('B#2'), 'B#2 out while A is set aside');
        await sleep(20);
        assert.ok(Date.now() < failedAt + PAUSE_MS, 'still within the pause');
        assert.deepEqual(w.publisher.published, ['B#1', 'B#2'], 'none of A’s rows goes out during its pause');
        assert.deepEqual(
          w.publisher.attempts.filter((a) => a.id.startsWith('A#')).map((a) => a.id),
          ['A#1'],
          'A#2 and A#3 are not even tried while A#1 has not gone out',
        );
        assert.ok(
          w.outbox.listCalls.some((call) => call.excluded.includes('A')),
          'while A is set aside the table is read without it',
        );
        assert.deepEqual(w.outbox.unpublished(), ['A#1', 'A#2', 'A#3']);

        // A pass halfway through the pause (another actor's turn) still leaves A out.
        await sleep(failedAt + PAUSE_MS / 2 - Date.now());
        w.commit(event('B', 3));
        await until(() => w.outbox.isPublished('B#3'), 'B#3 out halfway through the pause');
        await sleep(20);
        assert.ok(Date.now() < failedAt + PAUSE_MS, 'still within the pause');
        assert.deepEqual(w.publisher.published, ['B#1', 'B#2', 'B#3'], 'A stays out for the whole pause');

        // After the pause, the next pass reads A's rows from the table, in order.
        await sleep(failedAt + PAUSE_MS + 100 - Date.now());
        w.commit(event('B', 4));
        await until(() => w.outbox.unpublished().length === 0, 'everything published after the pause');
        await sleep(10);

        assert.deepEqual(of('A', w.publisher.published), ['A#1', 'A#2', 'A#3']);
        assert.deepEqual(of('B', w.publisher.published), ['B#1', 'B#2', 'B#3', 'B#4']);
        assert.equal(w.publisher.published.length, 7, 'each row published once');
      });

      it('leaves the rows offered for a shard it no longer owns in the table for the new owner', async () => {
        const w = (current = world(create(), [1, 2]));
        await w.backlogPass();

        w.own([1]);
        w.commit(event('C', 1, 2));
        w.commit(event('A', 1, 1));
        await until(() => w.outbox.isPublished('A#1'), 'A#1 marked published');
        await sleep(20);

        assert.deepEqual(w.publisher.published, ['A#1']);
        assert.deepEqual(w.outbox.unpublished(), ['C#1']);
        assert.equal(w.outbox.listCalls.length, 1);
      });

      it('keeps an actor’s order when flush() reads the table while the actor commits again', async () => {
        const w = (current = world(create()));
        // The streams cannot be prepared at start: the first pass fails and A#1 stays in the table.
        w.publisher.failPrepare(1);
        w.commit(event('A', 1));
        await until(() => w.publisher.prepareCalls === 1, 'the failed first pass');
        await sleep(10);
        assert.deepEqual(w.outbox.unpublished(), ['A#1']);

        // The streams are back; an operator flushes while A's next turn commits. A#2 must
        // not go out before A#1, which only the table read of flush() holds.
        const release = w.outbox.holdReads();
        const flushed = w.relay.flush();
        await until(() => w.outbox.listCalls.length === 1, 'flush reading the table');
        w.commit(event('A', 2));
        await sleep(50);
        release();
        await flushed;
        await until(() => w.outbox.unpublished().length === 0, 'A#1 and A#2 published');
        await sleep(10);

        // Publication is idempotent per id, so a repeat is harmless; the first time each id is stored sets the order.
        assert.deepEqual([...new Set(w.publisher.published)], ['A#1', 'A#2']);
      });
    });
  }
});
