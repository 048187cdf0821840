// The durable consumer contract (src/ports/event-consumer.ts), one suite run
// against JetStream on the real NATS server and against the embedded event
// log on Postgres and on the embedded database (PGlite), plus what only the
// embedded log has: listeners, and its SQL subject filter agreeing with the
// in-process one.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AckPolicy, DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ulid } from 'ulid';
import { EmbeddedEventLog } from '../../actors/events/embedded-event-log';
import { JetStreamConsumers } from '../../actors/events/jetstream-consumers';
import { JetStreamPublisher } from '../../actors/events/jetstream-publisher';
import { subjectMatches, subjectPatternRegex } from '../../src/events/subject-pattern';
import { DurableConsumerConflictError, StreamNotFoundError, type ConsumedEvent, type ConsumerHandle, type DurableConsumerSpec, type EventConsumers } from '../../src/ports/event-consumer';
import type { EventPublisher, OutboxPublication, PublishedEvent } from '../../src/ports/event-publisher';
import { createDataSource, runMigrationsLocked } from '../../persistence/data-source';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres, type EmbeddedPostgres } from '../../persistence/embedded-postgres';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { EmbeddedEventLogRepository } from '../../persistence/runtime/embedded-event-log.repository';
import { resolveConsumerSpec } from '../../src/events/consumer-spec';
import { deleteStream, eventually, silentLogger, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** A publisher and consumers over one backing store, as one node sees them. */
interface EventLogNode {
  publisher: EventPublisher;
  consumers: EventConsumers;
  close(): Promise<void>;
}

/** How the contract reaches one implementation. */
interface EventLogBackend {
  /** Opens a node; several may be open at once over the same store. */
  open(): Promise<EventLogNode>;
  /** Restarts the store itself when it is ours to restart (the embedded database); between closing a node and opening the next. */
  restartStore?(): Promise<void>;
  /** Removes a test's stream. */
  dropStream(name: string): Promise<void>;
}

/** What a handler saw of one delivery. */
interface Seen {
  id: string;
  subject: string;
  deliveryCount: number;
  at: number;
}

function seen(event: ConsumedEvent): Seen {
  return { id: event.id, subject: event.subject, deliveryCount: event.deliveryCount, at: Date.now() };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

function eventsContract(backend: () => EventLogBackend): void {
  let stream: string;
  let root: string;
  let nodes: EventLogNode[];
  let handles: ConsumerHandle[];
  let node: EventLogNode;

  async function openNode(): Promise<EventLogNode> {
    const opened = await backend().open();
    nodes.push(opened);
    await opened.publisher.prepare([{ name: stream, subjects: [`${root}.>`] }]);
    return opened;
  }

  async function consume(on: EventLogNode, spec: Partial<DurableConsumerSpec>, handler: (event: ConsumedEvent) => Promise<void>): Promise<ConsumerHandle> {
    const handle = await on.consumers.consume({ stream, durableName: 'webhooks', ...spec }, handler);
    handles.push(handle);
    return handle;
  }

  function event(name: string, extra: Partial<PublishedEvent> = {}): PublishedEvent {
    return { id: `${name}-${ulid()}`, subject: `${root}.${name}`, data: JSON.stringify({ name }), ...extra };
  }

  async function publishAll(events: PublishedEvent[]): Promise<void> {
    for (const published of events) await node.publisher.publish(published);
  }

  beforeEach(async () => {
    const names = uniqueBusNames();
    stream = names.eventStream;
    root = names.subjectPrefix;
    nodes = [];
    handles = [];
    node = await openNode();
  });

  afterEach(async () => {
    await Promise.all(handles.map((handle) => handle.stop()));
    await Promise.all(nodes.map((opened) => opened.close()));
    await backend().dropStream(stream);
  });

  it('hands over a published event with its id, subject, data and headers', async () => {
    const published = event('objective.created', { headers: { 'Agentrt-Actor-Key': 'objective:o1', 'Agentrt-Actor-Sequence': '7' } });
    await node.publisher.publish(published);
    const received: ConsumedEvent[] = [];
    await consume(node, {}, async (consumed) => {
      received.push(consumed);
      await consumed.ack();
    });
    await eventually(() => received.length === 1, 'the event consumed');
    const [consumed] = received;
    assert.deepEqual(
      { id: consumed.id, subject: consumed.subject, data: consumed.data, headers: consumed.headers, deliveryCount: consumed.deliveryCount },
      { id: published.id, subject: published.subject, data: published.data, headers: published.headers, deliveryCount: 1 },
    );
    assert.ok(Number.isInteger(consumed.streamSequence) && consumed.streamSequence >= 1);
  });

  it('stores an id published twice once', async () => {
    const first = event('twice');
    const end = event('end');
    await publishAll([first, { ...first, data: '"again"' }, end]);
    const received: Seen[] = [];
    await consume(node, { maxAckPending: 1 }, async (consumed) => {
      received.push(seen(consumed));
      await consumed.ack();
    });
    await eventually(() => received.some((entry) => entry.subject === `${root}.end`), 'the marker consumed');
    assert.deepEqual(received.map((entry) => entry.id), [first.id, end.id]);
  });

  it('does not hand an acked message over again', async () => {
    const acked = event('acked');
    const marker = event('marker');
    const received: Seen[] = [];
    // With one message pending at most, the marker can only come once the first message is acked for good.
    await consume(node, { maxAckPending: 1, ackWaitMs: 1000 }, async (consumed) => {
      received.push(seen(consumed));
      await consumed.ack();
      if (consumed.id === acked.id) await node.publisher.publish(marker);
    });
    await node.publisher.publish(acked);
    await eventually(() => received.some((entry) => entry.id === marker.id), 'the marker consumed');
    assert.deepEqual(received.map((entry) => [entry.id, entry.deliveryCount]), [[acked.id, 1], [marker.id, 1]]);
  });

  it('redelivers a nak\'ed message after the nak delay, counting the deliveries', async () => {
    const nacked = event('nacked');
    await node.publisher.publish(nacked);
    const received: Seen[] = [];
    await consume(node, {}, async (consumed) => {
      received.push(seen(consumed));
      if (consumed.deliveryCount === 1) await consumed.nak(700);
      else await consumed.ack();
    });
    await eventually(() => received.length === 2, 'the redelivery');
    assert.deepEqual(received.map((entry) => entry.deliveryCount), [1, 2]);
    assert.ok(received[1].at - received[0].at >= 690, `redelivered ${received[1].at - received[0].at} ms after the nak of 700 ms`);
  });

  it('redelivers a message whose handler threw', async () => {
    await node.publisher.publish(event('failing'));
    const received: Seen[] = [];
    await consume(node, { errorRedeliveryDelayMs: 50 }, async (consumed) => {
      received.push(seen(consumed));
      if (consumed.deliveryCount === 1) throw new Error('the endpoint is down');
      await consumed.ack();
    });
    await eventually(() => received.length === 2, 'the redelivery');
    assert.deepEqual(received.map((entry) => entry.deliveryCount), [1, 2]);
  });

  it('redelivers a message not acked within ackWaitMs', async () => {
    await node.publisher.publish(event('forgotten'));
    const received: Seen[] = [];
    // The ack wait runs from the delivery (the server's send, the database's
    // claim), which no handler sees: its receipt comes a loop turn or a GC
    // pause later. The consumer's start is before the delivery for sure.
    const consumerStartedAt = Date.now();
    await consume(node, { ackWaitMs: 1000 }, async (consumed) => {
      received.push(seen(consumed));
      if (consumed.deliveryCount > 1) await consumed.ack();
    });
    await eventually(() => received.length === 2, 'the redelivery');
    assert.deepEqual(received.map((entry) => entry.deliveryCount), [1, 2]);
    const afterStart = received[1].at - consumerStartedAt;
    assert.ok(afterStart >= 999, `redelivered ${afterStart} ms after the consumer started, with a 1000 ms ack wait`);
  });

  for (const restart of ['the consumer', 'the node'] as const) {
    it(`goes on after the last acked message when ${restart} restarts: nothing lost, nothing acked again`, async () => {
      const events = Array.from({ length: 10 }, (_, i) => event(`numbered.${i}`));
      await publishAll(events);
      const firstRun: Seen[] = [];
      const sixthSeen = deferred();
      const first = await consume(node, { maxAckPending: 1, ackWaitMs: 1000 }, async (consumed) => {
        firstRun.push(seen(consumed));
        // The first five are acked; the sixth is left pending, as if the node died while handling it.
        if (firstRun.length <= 5) await consumed.ack();
        else sixthSeen.resolve();
      });
      await sixthSeen.promise;
      await first.stop();
      let next = node;
      if (restart === 'the node') {
        await node.close();
        nodes = nodes.filter((opened) => opened !== node);
        await backend().restartStore?.();
        next = await openNode();
      }
      const secondRun: Seen[] = [];
      await consume(next, { maxAckPending: 1, ackWaitMs: 1000 }, async (consumed) => {
        secondRun.push(seen(consumed));
        await consumed.ack();
      });
      await eventually(() => secondRun.length === 5, 'the last five consumed', 15_000);
      assert.deepEqual(firstRun.map((entry) => entry.id), events.slice(0, 6).map((published) => published.id));
      assert.deepEqual(secondRun.map((entry) => [entry.id, entry.deliveryCount]), events.slice(5).map((published, i) => [published.id, i === 0 ? 2 : 1]));
    });
  }

  it('delivers the messages received but not handled again after a stop', async () => {
    const events = Array.from({ length: 5 }, (_, i) => event(`held.${i}`));
    await publishAll(events);
    const firstSeen = deferred();
    const release = deferred();
    const first = await consume(node, { maxAckPending: 10, ackWaitMs: 1500 }, async (consumed) => {
      firstSeen.resolve();
      await release.promise;
      await consumed.ack();
    });
    await firstSeen.promise;
    const stopping = first.stop();
    release.resolve();
    await stopping;
    const rest: Seen[] = [];
    await consume(node, { maxAckPending: 10, ackWaitMs: 1500 }, async (consumed) => {
      rest.push(seen(consumed));
      await consumed.ack();
    });
    await eventually(() => rest.length === 4, 'the four unhandled messages consumed');
    assert.deepEqual(rest.map((entry) => entry.id).sort(), events.slice(1).map((published) => published.id).sort());
  });

  it('shares the messages of one durable between two consumers, each message handled by one of them', async () => {
    const events = Array.from({ length: 40 }, (_, i) => event(`shared.${i % 4}`));
    const handledBy: Array<{ consumer: number; id: string }> = [];
    for (const consumer of [0, 1]) {
      await consume(node, { maxAckPending: 4 }, async (consumed) => {
        handledBy.push({ consumer, id: consumed.id });
        await new Promise((resolve) => setTimeout(resolve, 10));
        await consumed.ack();
      });
    }
    await publishAll(events);
    await eventually(() => handledBy.length >= events.length, 'every message handled');
    assert.deepEqual(handledBy.map((entry) => entry.id).sort(), events.map((published) => published.id).sort(), 'each message handled once');
    assert.ok(handledBy.some((entry) => entry.consumer === 0) && handledBy.some((entry) => entry.consumer === 1), 'both consumers took a share');
  });

  it('delivers only the messages matching the filter subject', async () => {
    await publishAll([event('orders.1'), event('invoices.1'), event('orders.2.lines'), event('orders.3'), event('orders.end')]);
    const received: Seen[] = [];
    await consume(node, { filterSubject: `${root}.orders.*`, maxAckPending: 1 }, async (consumed) => {
      received.push(seen(consumed));
      await consumed.ack();
    });
    await eventually(() => received.some((entry) => entry.subject === `${root}.orders.end`), 'the marker consumed');
    assert.deepEqual(received.map((entry) => entry.subject), [`${root}.orders.1`, `${root}.orders.3`, `${root}.orders.end`]);
  });

  it('keeps the publication order of every subject with maxAckPending 1, redeliveries included', async () => {
    const events = Array.from({ length: 16 }, (_, i) => event(`objective.${i % 2 === 0 ? 'a' : 'b'}`, { data: String(i) }));
    const acked: string[] = [];
    const deliveries: Seen[] = [];
    await consume(node, { maxAckPending: 1, errorRedeliveryDelayMs: 100 }, async (consumed) => {
      deliveries.push(seen(consumed));
      if (consumed.data === '4' && consumed.deliveryCount === 1) return consumed.nak(300);
      if (consumed.data === '9' && consumed.deliveryCount === 1) throw new Error('transient failure');
      await consumed.ack();
      acked.push(consumed.data);
    });
    await publishAll(events);
    await eventually(() => acked.length === events.length, 'every message acked');
    assert.deepEqual(acked, events.map((published) => published.data));
    assert.deepEqual(
      deliveries.map((entry) => entry.deliveryCount),
      events.flatMap((published) => (published.data === '4' || published.data === '9' ? [1, 2] : [1])),
    );
  });

  it('refuses a durable name taken with another filter subject', async () => {
    await consume(node, { durableName: 'filtered', filterSubject: `${root}.orders.>` }, async () => undefined);
    await assert.rejects(
      node.consumers.consume({ stream, durableName: 'filtered', filterSubject: `${root}.invoices.>` }, async () => undefined),
      DurableConsumerConflictError,
    );
  });

  it('refuses to consume a stream nobody declared', async () => {
    await assert.rejects(node.consumers.consume({ stream: `${stream}_MISSING`, durableName: 'webhooks' }, async () => undefined), StreamNotFoundError);
  });

  it('refuses to publish on a subject no stream captures', async () => {
    await assert.rejects(node.publisher.publish({ id: ulid(), subject: `${root}_elsewhere.event`, data: '{}' }));
  });

  it('purges the messages a subject filter takes and keeps the others, from a durable that had them pending too', async () => {
    // The durable exists before the events (as the webhook intake does): they are pending for it when purged.
    await (await consume(node, { maxAckPending: 1 }, async () => assert.fail('nothing is published yet'))).stop();
    await publishAll([event('erased.one.a'), event('erased.one.b'), event('kept.one.a'), event('erased.two.a')]);
    await node.publisher.purgeSubjects!(stream, [`${root}.erased.one.>`, `${root}.erased.two.>`]);
    await node.publisher.purgeSubjects!(stream, [`${root}.erased.one.>`]);
    await node.publisher.publish(event('after.purge'));
    const received: Seen[] = [];
    await consume(node, { maxAckPending: 1 }, async (consumed) => {
      received.push(seen(consumed));
      await consumed.ack();
    });
    await eventually(() => received.length === 2, 'the kept events consumed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(received.map((entry) => entry.subject), [`${root}.kept.one.a`, `${root}.after.purge`]);
  });

  it('adds declared subjects to an existing stream', async () => {
    await node.publisher.prepare([{ name: stream, subjects: [`${root}_extra.*`] }]);
    await node.publisher.publish({ id: 'extra', subject: `${root}_extra.event`, data: '{}' });
    await node.publisher.publish(event('still.captured'));
    const received: Seen[] = [];
    await consume(node, { maxAckPending: 1 }, async (consumed) => {
      received.push(seen(consumed));
      await consumed.ack();
    });
    await eventually(() => received.length === 2, 'both events consumed');
    assert.deepEqual(received.map((entry) => entry.subject), [`${root}_extra.event`, `${root}.still.captured`]);
  });
}

describe('EventConsumers contract', function () {
  this.timeout(30_000);

  describe('JetStream (NATS server)', () => {
    eventsContract(() => ({
      async open() {
        const connection = await connect({ servers: TEST_NATS_URL });
        return {
          publisher: new JetStreamPublisher(connection),
          consumers: new JetStreamConsumers(connection, { logger: silentLogger }),
          close: () => connection.close(),
        };
      },
      dropStream: deleteStream,
    }));
  });

  describe('embedded event log (Postgres)', () => {
    let database: TestDatabase;
    before(async () => {
      database = await createTestDatabase();
    });
    after(async () => {
      await database?.drop();
    });
    eventsContract(() => embeddedBackend(database.url));
  });

  describe('embedded event log (embedded database)', () => {
    let dataDir: string;
    let embedded: EmbeddedPostgres;
    before(async function () {
      // A fresh embedded database runs initdb in WebAssembly: tens of seconds on a busy machine.
      this.timeout(120_000);
      dataDir = await mkdtemp(path.join(tmpdir(), 'agentrt-events-'));
      embedded = await startMigratedEmbeddedPostgres(dataDir);
    });
    after(async () => {
      await embedded?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    eventsContract(() => ({
      ...embeddedBackend(embedded.url),
      // A real restart: the database process goes away and comes back on the same files.
      async restartStore() {
        await embedded.stop();
        embedded = await startMigratedEmbeddedPostgres(dataDir);
      },
    }));
  });
});

async function startMigratedEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const embedded = await startEmbeddedPostgres({ dataDir });
  const dataSource = createDataSource({ url: embedded.url, poolSize: EMBEDDED_POOL_SIZE });
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  await dataSource.destroy();
  return embedded;
}

function embeddedBackend(url: string): EventLogBackend {
  return {
    async open() {
      const database = new RuntimeDatabase({ url, poolSize: 2 });
      const log = new EmbeddedEventLog(database, { logger: silentLogger, pollIntervalMs: 200 });
      return {
        publisher: log,
        consumers: log,
        async close() {
          await log.close();
          await database.close();
        },
      };
    },
    async dropStream(name) {
      const database = new RuntimeDatabase({ url, poolSize: 1 });
      await database.query('DELETE FROM embedded_streams WHERE name = $1', [name]).finally(() => database.close());
    },
  };
}

describe('JetStreamPublisher retention', function () {
  this.timeout(30_000);
  const DAY_MS = 86_400_000;

  it('creates a stream with the declared maximum age, sets it on an existing stream without one, and only ever raises it', async () => {
    const names = uniqueBusNames();
    const connection = await connect({ servers: TEST_NATS_URL });
    const warnings: Array<{ fields: object; message: string }> = [];
    const logger = { ...silentLogger, warn: (fields: object, message: string) => warnings.push({ fields, message }) };
    try {
      const publisher = new JetStreamPublisher(connection, { logger });
      const manager = await jetstreamManager(connection);
      const maxAge = async () => (await manager.streams.info(names.eventStream)).config.max_age;
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`] }]);
      assert.equal(await maxAge(), 0, 'no age declared: kept for ever, as before');
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`], maxAgeMs: 7 * DAY_MS }]);
      assert.equal(await maxAge(), 7 * DAY_MS * 1_000_000, 'an existing stream without a limit takes the age');
      assert.equal(warnings.length, 0, 'no warning');
      // Another cluster on the same server, configured with a shorter retention (staging next to production).
      await new JetStreamPublisher(connection, { logger }).prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`], maxAgeMs: 3_600_000 }]);
      assert.equal(await maxAge(), 7 * DAY_MS * 1_000_000, 'a shorter age does not cut the stream\'s');
      assert.equal(warnings.length, 1);
      assert.deepEqual(warnings[0].fields, { stream: names.eventStream, streamMaxAge: '168h', configuredMaxAge: '1h' });
      assert.match(warnings[0].message, new RegExp(`nats stream edit ${names.eventStream} --max-age=1h`), 'the warning says how to lower it on purpose');
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`], maxAgeMs: 10 * DAY_MS }]);
      assert.equal(await maxAge(), 10 * DAY_MS * 1_000_000, 'a longer age raises it');
      // Lowered on purpose by hand, as the warning says: a node configured alike keeps it.
      await manager.streams.update(names.eventStream, { max_age: 2 * DAY_MS * 1_000_000 });
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`], maxAgeMs: 2 * DAY_MS }]);
      assert.equal(await maxAge(), 2 * DAY_MS * 1_000_000, 'the age set by hand stays');
      await deleteStream(names.eventStream);
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`], maxAgeMs: 5 * 60_000 }]);
      const created = (await manager.streams.info(names.eventStream)).config;
      assert.equal(created.max_age, 5 * 60_000 * 1_000_000, 'a new stream is created with it');
      assert.equal(created.duplicate_window, 5 * 60_000 * 1_000_000, 'the duplicate window fits in the age');
    } finally {
      await deleteStream(names.eventStream);
      await connection.close();
    }
  });
});

describe('JetStreamConsumers', function () {
  this.timeout(30_000);

  it('recreates its durable consumer when it is deleted under it, and goes on', async () => {
    const names = uniqueBusNames();
    const connection = await connect({ servers: TEST_NATS_URL });
    const publisher = new JetStreamPublisher(connection);
    const warnings: string[] = [];
    const consumers = new JetStreamConsumers(connection, { logger: { ...silentLogger, warn: (_fields, message) => warnings.push(message) } });
    try {
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`] }]);
      const received: string[] = [];
      const handle = await consumers.consume({ stream: names.eventStream, durableName: 'deleted' }, async (consumed) => {
        received.push(consumed.id);
        await consumed.ack();
      });
      await publisher.publish({ id: 'before', subject: `${names.subjectPrefix}.a`, data: '{}' });
      await eventually(() => received.includes('before'), 'the first event consumed');
      await (await jetstreamManager(connection)).consumers.delete(names.eventStream, 'deleted');
      await publisher.publish({ id: 'after', subject: `${names.subjectPrefix}.a`, data: '{}' });
      await eventually(() => received.includes('after'), 'the event published after the deletion consumed');
      await handle.stop();
      assert.ok(warnings.includes('durable consumer stopped; restarting'), `warnings: ${warnings.join(', ')}`);
    } finally {
      await deleteStream(names.eventStream);
      await connection.close();
    }
  });

  it('starts a durable that takes over a renamed one after what that one acknowledged, else from notBefore or the beginning', async () => {
    const names = uniqueBusNames();
    const connection = await connect({ servers: TEST_NATS_URL });
    const publisher = new JetStreamPublisher(connection);
    const consumers = new JetStreamConsumers(connection, { logger: silentLogger });
    const consumeAll = async (spec: DurableConsumerSpec, expected: number): Promise<string[]> => {
      const received: string[] = [];
      const handle = await consumers.consume(spec, async (consumed) => {
        received.push(consumed.id);
        await consumed.ack();
      });
      await eventually(() => received.length >= expected, `${expected} events consumed by ${spec.durableName}`);
      await handle.stop();
      return received;
    };
    try {
      await publisher.prepare([{ name: names.eventStream, subjects: [`${names.subjectPrefix}.>`] }]);
      const publish = (ids: string[]) => Promise.all(ids.map((id) => publisher.publish({ id, subject: `${names.subjectPrefix}.a`, data: '{}' })));
      await publish(['e1', 'e2', 'e3']);
      // The old durable (maxAckPending 1: in order) acknowledges e1..e3; e4 and e5 come after it stopped.
      assert.deepEqual(await consumeAll({ stream: names.eventStream, durableName: 'old-name', maxAckPending: 1 }, 3), ['e1', 'e2', 'e3']);
      await publish(['e4', 'e5']);
      const renamed = await consumeAll({ stream: names.eventStream, durableName: 'new-name', takeOverFrom: 'old-name', maxAckPending: 1 }, 2);
      const fresh = await consumeAll({ stream: names.eventStream, durableName: 'fresh', takeOverFrom: 'never-existed', maxAckPending: 1 }, 5);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(renamed, ['e4', 'e5'], 'the renamed durable goes on where the old one stood');
      assert.deepEqual(fresh, ['e1', 'e2', 'e3', 'e4', 'e5'], 'without a predecessor, from the beginning');
      const manager = await jetstreamManager(connection);
      assert.equal((await manager.consumers.info(names.eventStream, 'old-name')).num_pending, 2, 'the old durable is left as it was');
      // A durable that started at the end and was never handed a message since has acknowledged everything before it.
      await manager.consumers.add(names.eventStream, { durable_name: 'idle-old', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New });
      await publish(['e6']);
      assert.deepEqual(await consumeAll({ stream: names.eventStream, durableName: 'after-idle', takeOverFrom: 'idle-old', maxAckPending: 1 }, 1), ['e6']);
      // Without a predecessor, notBefore skips what the stream stored earlier.
      await new Promise((resolve) => setTimeout(resolve, 20)); // e6's timestamp strictly before the mark
      const mark = new Date();
      await publish(['e7']);
      assert.deepEqual(await consumeAll({ stream: names.eventStream, durableName: 'from-mark', takeOverFrom: 'never-existed', notBefore: mark, maxAckPending: 1 }, 1), ['e7']);
    } finally {
      await deleteStream(names.eventStream);
      await connection.close();
    }
  });
});

describe('embedded event log', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let runtimeDatabase: RuntimeDatabase;
  let log: EmbeddedEventLog;

  before(async () => {
    database = await createTestDatabase();
    runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 2 });
    log = new EmbeddedEventLog(runtimeDatabase, { logger: silentLogger });
    await log.prepare([{ name: 'LISTENED', subjects: ['listened.>'] }]);
  });

  after(async () => {
    await log?.close();
    await runtimeDatabase?.close();
    await database?.drop();
  });

  it('expires the messages older than the stream\'s maximum age, their pending deliveries with them, and keeps the others', async () => {
    await log.prepare([{ name: 'AGED', subjects: ['aged.>'], maxAgeMs: 60_000 }]);
    const consumed: string[] = [];
    await (await log.consume({ stream: 'AGED', durableName: 'aged' }, async () => assert.fail('stopped before anything is published'))).stop();
    for (const id of ['old-1', 'old-2', 'new-1']) await log.publish({ id, subject: `aged.${id}`, data: '{}' });
    await runtimeDatabase.query(`UPDATE embedded_stream_messages SET created_at = now() - interval '2 minutes' WHERE stream = 'AGED' AND message_id LIKE 'old-%'`);
    await log.expireNow();
    const left = await runtimeDatabase.query<{ message_id: string }>(`SELECT message_id FROM embedded_stream_messages WHERE stream = 'AGED' ORDER BY seq`);
    assert.deepEqual(left.map((row) => row.message_id), ['new-1']);
    const handle = await log.consume({ stream: 'AGED', durableName: 'aged' }, async (event) => {
      consumed.push(event.id);
      await event.ack();
    });
    await eventually(() => consumed.length === 1, 'the kept message consumed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await handle.stop();
    assert.deepEqual(consumed, ['new-1']);
  });

  it('tells listeners of every event stored, duplicates left out', async () => {
    const heard: string[] = [];
    const unsubscribe = log.subscribe((event) => heard.push(event.id));
    await log.publish({ id: 'e1', subject: 'listened.a', data: '{}' });
    await log.publish({ id: 'e1', subject: 'listened.a', data: '{}' });
    await log.publish({ id: 'e2', subject: 'listened.b', data: '{}' });
    unsubscribe();
    await log.publish({ id: 'e3', subject: 'listened.c', data: '{}' });
    assert.deepEqual(heard, ['e1', 'e2']);
  });

  it('lets concurrent claimers of one durable take each message once and never more than its maximum pending together', async () => {
    // Eight claims at once on eight connections: each must see the claims committed before its lock was granted.
    const claimers = new RuntimeDatabase({ url: database.url, poolSize: 8 });
    try {
      const repository = new EmbeddedEventLogRepository(claimers);
      await log.prepare([{ name: 'CLAIMED', subjects: ['claimed.>'] }]);
      const consumer = { stream: 'CLAIMED', durableName: 'racers' };
      await repository.ensureConsumer(resolveConsumerSpec({ ...consumer, maxAckPending: 5, ackWaitMs: 60_000 }));
      await log.publishMany(Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, subject: 'claimed.x', data: String(i) })));
      const taken: number[] = [];
      for (let round = 0; round < 8; round++) {
        const claims = await Promise.all(Array.from({ length: 8 }, () => repository.claim(consumer, 16)));
        const claimed = claims.flat().map((message) => message.seq);
        assert.ok(claimed.length <= 5, `round ${round}: ${claimed.length} messages claimed at once with maxAckPending 5`);
        assert.equal(new Set(claimed).size, claimed.length, `round ${round}: a message claimed twice`);
        taken.push(...claimed);
        // The acks ride on a claim: they free the room the next round takes.
        await repository.claim(consumer, 0, claimed);
      }
      // Eight rounds of five: every message taken, none twice.
      assert.equal(new Set(taken).size, 40);
    } finally {
      await claimers.close();
    }
  });

  it('publishes outbox rows from the outbox table and marks them published in one write, each once', async () => {
    await log.prepare([{ name: 'FROM_OUTBOX', subjects: ['from_outbox.>'] }]);
    const rows: OutboxPublication[] = [
      { id: `ob-${ulid()}`, subject: 'from_outbox.a', payload: { n: 1, text: 'quote " and \\ backslash' }, headers: { 'Agentrt-Actor-Sequence': '1' } },
      { id: `ob-${ulid()}`, subject: 'from_outbox.b', payload: { n: 2, list: [1, 2] }, headers: {} },
    ];
    for (const row of rows) {
      await runtimeDatabase.query('INSERT INTO actor_outbox (id, shard, subject, payload, headers) VALUES ($1, 0, $2, $3, $4)', [
        row.id, row.subject, JSON.stringify(row.payload), JSON.stringify(row.headers),
      ]);
    }
    const heard: string[] = [];
    const unsubscribe = log.subscribe((event) => heard.push(`${event.id} ${event.data}`));
    await log.publishFromOutbox(rows);
    await log.publishFromOutbox(rows);
    unsubscribe();
    assert.deepEqual(heard, rows.map((row) => `${row.id} ${JSON.stringify(row.payload)}`), 'listeners hear each stored event once');
    const stored = await runtimeDatabase.query<{ message_id: string; subject: string; payload: string; headers: Record<string, string> }>(
      "SELECT message_id, subject, payload, headers FROM embedded_stream_messages WHERE stream = 'FROM_OUTBOX' ORDER BY seq",
    );
    assert.deepEqual(stored.map((message) => ({ id: message.message_id, subject: message.subject, payload: JSON.parse(message.payload), headers: message.headers })), rows);
    const marked = await runtimeDatabase.query<{ published: boolean }>('SELECT published_at IS NOT NULL AS published FROM actor_outbox WHERE id = ANY($1)', [rows.map((row) => row.id)]);
    assert.deepEqual(marked.map((row) => row.published), [true, true]);
  });

  it('filters in SQL exactly as subjectMatches does', async () => {
    const patterns = ['a.b', 'a.*', 'a.>', '*.b', '>', 'a.*.c', 'a.b-c:d.*', 'x+y.(z)', 'a.$.>'];
    const subjects = ['a', 'a.b', 'a.b.c', 'a.x.c', 'b.b', 'a.b-c:d.e', 'x+y.(z)', 'xxy.(z)', 'a.$.1', 'a.b.c.d'];
    const cases = patterns.flatMap((pattern) => subjects.map((subject) => ({ pattern, subject })));
    const rows = await runtimeDatabase.query<{ matched: boolean }>(
      'SELECT subject ~ regex AS matched FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(subject, regex, position) ORDER BY position',
      [cases.map((entry) => entry.subject), cases.map((entry) => subjectPatternRegex(entry.pattern))],
    );
    assert.deepEqual(
      rows.map((row, i) => `${cases[i].pattern} ~ ${cases[i].subject}: ${row.matched}`),
      cases.map((entry) => `${entry.pattern} ~ ${entry.subject}: ${subjectMatches(entry.pattern, entry.subject)}`),
    );
  });
});
