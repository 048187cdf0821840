// Cluster-mode runtimes riding out NATS outages, on a nats-server of the
// test's own (stopped, restarted, replaced by an empty one) and the shared
// Postgres: the connection never gives up, the bus, the outbox relay and the
// durable consumers resume on their own, a server that lost its store gets
// the streams and durables declared again (once), the node reports the
// outage to DependencyHealth, and the replicas option reaches every stream
// and durable the node declares.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { startActorRuntime, type ActorRuntime, type RuntimeLogger, type RuntimeOptions } from '../../actors';
import { NatsBus } from '../../actors/bus/nats-bus';
import { closeNatsConnection, connectToNats, NatsConnectionWatch } from '../../actors/bus/nats-connection';
import { JetStreamConsumers } from '../../actors/events/jetstream-consumers';
import { JetStreamPublisher } from '../../actors/events/jetstream-publisher';
import { DependencyHealth } from '../../actors/runtime/dependency-health';
import { PublisherUnavailableError } from '../../src/ports/event-publisher';
import { createDataSource } from '../../persistence/data-source';
import { ConfigError } from '../../src/config';
import { shardOf } from '../../src/sharding/fnv1a32';
import { counterKind, type CounterReply } from '../support/cluster-counter';
import { eventually, silentLogger, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { freePort, PrivateNats } from '../support/private-services';

/** A logger keeping its lines (to count warnings), and printing them with TEST_RUNTIME_LOG=1. */
function recordingLogger(): RuntimeLogger & { lines: Array<{ level: string; message: string; fields: object }> } {
  const lines: Array<{ level: string; message: string; fields: object }> = [];
  const keep = (level: 'debug' | 'info' | 'warn' | 'error') => (fields: object, message: string) => {
    lines.push({ level, message, fields });
    silentLogger[level](fields, message);
  };
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * nats.js gives up after 10 failed reconnects per server, 2 s apart by
 * default: an outage longer than about 21 s closed the node's connection for
 * good. This one outlasts that budget at the default pace (and many times
 * over at the node's own).
 */
const LONG_OUTAGE_MS = 24_000;

describe('NATS outages (a nats-server of our own)', function () {
  this.timeout(120_000);
  let root: string;
  let nats: PrivateNats;
  let database: TestDatabase;
  let dataSource: DataSource;
  let names: { subjectPrefix: string; eventStream: string };
  let runtimes: ActorRuntime[] = [];
  let logger: ReturnType<typeof recordingLogger>;
  let health: DependencyHealth;

  function options(extra: Partial<RuntimeOptions> = {}): Partial<RuntimeOptions> {
    return { ...names, shardCount: 16, leaseTimeoutMs: 60_000, rebalanceIntervalMs: 200, outboxPollMs: 200, askAttemptTimeoutMs: 1000, askTimeoutMs: 10_000, ...extra };
  }

  async function startNode(extra: Partial<RuntimeOptions> = {}, withHealth?: DependencyHealth, natsUrl = nats.url): Promise<ActorRuntime> {
    const runtime = await startActorRuntime({
      dataSource, databaseUrl: database.url, natsUrl, kinds: [counterKind], options: options(extra), logger, ...(withHealth ? { health: withHealth } : {}),
    });
    runtimes.push(runtime);
    return runtime;
  }

  /** A durable reader of the counters' events on the node: the event ids it was handed, in order. */
  async function readEvents(runtime: ActorRuntime, durableName: string): Promise<string[]> {
    const received: string[] = [];
    await runtime.consume({ stream: runtime.eventStream, durableName, filterSubject: `${runtime.subjectPrefix}.events.counter.>`, maxAckPending: 64 }, async (event) => {
      if (!received.includes(event.id)) received.push(event.id);
      await event.ack();
    });
    return received;
  }

  const outboxIds = async (actorId: string): Promise<string[]> =>
    (await dataSource.query('SELECT id FROM actor_outbox WHERE subject LIKE $1 ORDER BY id', [`%.counter.${actorId}`])).map((row: { id: string }) => row.id);

  async function withConnection<T>(use: (connection: NatsConnection) => Promise<T>): Promise<T> {
    const connection = await connect({ servers: nats.url });
    try {
      return await use(connection);
    } finally {
      await connection.close();
    }
  }

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'agentrt-nats-outages-'));
    nats = await PrivateNats.create(path.join(root, 'nats'));
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 8 });
    await dataSource.initialize();
  });

  beforeEach(async () => {
    names = uniqueBusNames();
    logger = recordingLogger();
    health = new DependencyHealth({ logger });
    // Each test starts with a server that answers (a failed test may have left it stopped).
    await nats.stop();
    await nats.start();
    await dataSource.query('TRUNCATE actor_outbox');
  });

  afterEach(async () => {
    // A failed test may leave a runtime whose stop fails: the next tests still get theirs.
    await Promise.all(runtimes.map((runtime) => runtime.stop().catch((error: unknown) => console.error('runtime stop failed', error))));
    runtimes = [];
    health.stop();
  });

  after(async () => {
    await nats?.stop();
    await dataSource?.destroy();
    await database?.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('rides out NATS away longer than the client\'s old reconnect budget: the bus, the outbox and a durable consumer resume', async () => {
    const first = await startNode({}, health);
    const second = await startNode();
    await eventually(() => first.ownedShards().length === 8 && second.ownedShards().length === 8, 'shards split 8/8');
    const received = await readEvents(first, 'outage-reader');
    await first.ask('counter', 'before', { type: 'emit', count: 2 });
    await eventually(async () => received.length === 2, 'the events before the outage consumed');

    await nats.stop();
    // Each node still runs the actors of its own shards (no bus needed); their events wait in the outbox.
    const owner = [first, second].find((runtime) => runtime.ownedShards().includes(shardOf('during', 16)))!;
    await owner.ask('counter', 'during', { type: 'emit', count: 3 });
    await sleep(LONG_OUTAGE_MS);
    const reportedDown = !health.isUp('nats');
    await nats.start();

    // Asks from one node to the other's actors go over the bus again: both nodes' subscriptions are back.
    const counters = Array.from({ length: 16 }, (_, i) => `after-${i}`);
    await eventually(async () => {
      try {
        await Promise.all(counters.map((id) => first.ask<CounterReply>('counter', id, { type: 'get' })));
        return true;
      } catch {
        return false;
      }
    }, 'asks over the bus answered again', 20_000);
    const replies = await Promise.all(counters.map((id) => first.ask<CounterReply>('counter', id, { type: 'add', by: 1 })));
    assert.deepEqual(replies.map((reply) => reply.value), counters.map(() => 1));

    // The events committed during the outage reached the stream, and the durable consumer was handed them.
    const expected = [...(await outboxIds('before')), ...(await outboxIds('during'))];
    assert.equal(expected.length, 5);
    await eventually(() => expected.every((id) => received.includes(id)), 'the events of the outage consumed', 20_000);
    const stored = await withConnection(async (connection) => (await (await jetstreamManager(connection)).streams.info(first.eventStream)).state.messages);
    assert.equal(stored, 5);

    assert.ok(reportedDown, 'NATS reported down during the outage');
    assert.ok(health.isUp('nats'), 'NATS reported back');
    const healthLines = logger.lines.filter((line) => line.message.includes('message bus (NATS)'));
    assert.deepEqual(healthLines.map((line) => line.level), ['warn', 'info'], 'one warning when NATS went away, one line when it came back');
  });

  it('says while NATS is away that the bus is not connected, and answers again on the subscriptions made before', async () => {
    const serving = new NatsBus(await connectToNats(nats.url, 'serving'));
    const asking = new NatsBus(await connectToNats(nats.url, 'asking'));
    try {
      const subject = `${names.subjectPrefix}.echo`;
      serving.subscribe(subject, (message) => message.respond(`echo ${message.data}`));
      // The subscription travels on the serving connection: the asker's first request may reach the server before it.
      await eventually(async () => (await asking.request(subject, 'one', 1000).catch(() => '')) === 'echo one', 'the subscription answers');
      assert.ok(asking.connected() && serving.connected());
      await nats.stop();
      await eventually(() => !asking.connected() && !serving.connected(), 'both buses report the connection lost');
      await nats.start();
      await eventually(() => asking.connected() && serving.connected(), 'both buses connected again');
      // The serving subscription and the asker's reply inbox were made before the outage: the client sent them again.
      await eventually(async () => (await asking.request(subject, 'two', 1000).catch(() => '')) === 'echo two', 'the subscriptions made before the outage answer');
    } finally {
      await asking.close();
      await serving.close();
    }
  });

  it('declares its streams and durables again, once, on a NATS server replaced by an empty one, and publishes the outbox to them', async () => {
    const runtime = await startNode();
    const received = await readEvents(runtime, 'replaced-reader');
    await runtime.ask('counter', 'old-server', { type: 'emit', count: 2 });
    await eventually(async () => received.length === 2, 'the events on the old server consumed');

    await nats.stop();
    await nats.wipeStore();
    // Committed while no server runs: still in the outbox when the empty one comes.
    await runtime.ask('counter', 'between', { type: 'emit', count: 3 });
    await nats.start();
    await Promise.all(Array.from({ length: 10 }, (_, i) => runtime.ask('counter', `new-server-${i}`, { type: 'emit', count: 2 })));

    const expected = [...(await outboxIds('between')), ...(await Promise.all(Array.from({ length: 10 }, (_, i) => outboxIds(`new-server-${i}`)))).flat()];
    assert.equal(expected.length, 23);
    await eventually(() => expected.every((id) => received.includes(id)), 'every event after the replacement consumed', 20_000);
    const stream = runtime.eventStream;
    const info = await withConnection(async (connection) => (await jetstreamManager(connection)).streams.info(stream));
    assert.equal(info.state.messages, 23, 'the new stream holds what the outbox still had and what came after');

    const lost = logger.lines.filter((line) => line.level === 'warn' && line.message.startsWith('NATS lost'));
    assert.deepEqual(lost.map((line) => line.message).sort(), [
      `NATS lost durable consumer replaced-reader of stream ${stream}; declared again`,
      `NATS lost stream ${stream}; declared again`,
    ], 'one warning per stream and durable lost, not one per event');
  });

  it('resumes after the server ran a while with other credentials (authorisation errors in a row do not end the reconnects)', async () => {
    await nats.stop();
    await nats.start('agentrt', 'right');
    const runtime = await startNode({}, health, `nats://agentrt:right@127.0.0.1:${nats.port}`);
    const received = await readEvents(runtime, 'credentials-reader');
    await runtime.ask('counter', 'before-credentials', { type: 'emit', count: 1 });
    await eventually(async () => received.length === 1, 'the event before the restart consumed');

    await nats.stop();
    const logFrom = nats.log().length;
    await nats.start('agentrt', 'other');
    // nats.js closed the connection for good at its second authorisation error in a row.
    await eventually(() => (nats.log().slice(logFrom).match(/authentication error/gi) ?? []).length >= 3, 'several authorisation errors', 20_000);
    await runtime.ask('counter', 'other-credentials', { type: 'emit', count: 2 });
    await nats.stop();
    await nats.start('agentrt', 'right');

    const expected = [...(await outboxIds('before-credentials')), ...(await outboxIds('other-credentials'))];
    assert.equal(expected.length, 3);
    await eventually(() => expected.every((id) => received.includes(id)), 'the events of the outage consumed', 20_000);
    assert.ok(health.isUp('nats'), 'NATS reported back');
    assert.equal(health.deadReason(), undefined);
  });

  it('reports a connection the client closed on its own as an outage for good (the node must be restarted), and a close it asked for as nothing', async () => {
    const closedByClient = await connectToNats(nats.url, 'closed-by-client');
    NatsConnectionWatch.of(closedByClient).reportTo(health, logger);
    // What the client does when it gives up: a close that closeNatsConnection did not ask for.
    await closedByClient.close();
    await eventually(() => health.deadReason() !== undefined, 'the node reported dead');
    assert.equal(health.isUp('nats'), false, 'NATS reported down');
    assert.match(health.deadReason()!, /must be restarted/);
    const errors = logger.lines.filter((line) => line.level === 'error');
    assert.deepEqual(errors.map((line) => line.message), [health.deadReason()], 'one error saying the node must be restarted');

    const otherHealth = new DependencyHealth({ logger });
    const closedByNode = await connectToNats(nats.url, 'closed-by-node');
    NatsConnectionWatch.of(closedByNode).reportTo(otherHealth, logger);
    await closeNatsConnection(closedByNode);
    await closedByNode.closed();
    await sleep(100);
    assert.equal(otherHealth.deadReason(), undefined);
    assert.ok(otherHealth.isUp('nats'));
    assert.equal(logger.lines.filter((line) => line.level === 'error').length, 1);
    otherHealth.stop();
  });

  describe('the JetStream publisher (its timeout a minute: only the recovery paths answer within the test\'s)', function () {
    this.timeout(20_000);
    let connection: NatsConnection;
    let publisher: JetStreamPublisher;
    let stream: string;
    const event = (subject: string, id: string) => ({ id, subject, data: '{}' });

    beforeEach(async () => {
      connection = await connectToNats(nats.url, 'publisher');
      publisher = new JetStreamPublisher(connection, { timeoutMs: 60_000, logger });
      stream = `${names.eventStream}_PUB`;
      await publisher.prepare([{ name: stream, subjects: [`${names.subjectPrefix}.pub.>`] }]);
    });

    afterEach(async () => {
      await closeNatsConnection(connection);
    });

    const lost = async () => {
      await nats.stop();
      await eventually(() => !NatsConnectionWatch.of(connection).connected(), 'the connection lost');
    };

    it('refuses a publication at once while the connection is lost', async () => {
      await publisher.publish(event(`${names.subjectPrefix}.pub.a`, 'evt_before'));
      await lost();
      await assert.rejects(publisher.publish(event(`${names.subjectPrefix}.pub.a`, 'evt_during')), PublisherUnavailableError);
    });

    it('ends a publication in flight when the connection drops', async () => {
      // A subject no stream captures, with a listener that never answers: the publication waits for its acknowledgement.
      const silent = `${names.subjectPrefix}.silent.one`;
      let delivered = false;
      const listener = await connectToNats(nats.url, 'silent-listener');
      try {
        listener.subscribe(silent, {
          callback: () => {
            delivered = true;
          },
        });
        await listener.flush();
        const publication = publisher.publish(event(silent, 'evt_in_flight'));
        publication.catch(() => undefined);
        await eventually(() => delivered, 'the publication reached the server');
        await nats.stop();
        await assert.rejects(publication, PublisherUnavailableError);
      } finally {
        await closeNatsConnection(listener);
      }
    });

    it('refuses an erasure purge at once while the connection is lost', async () => {
      await publisher.publish(event(`${names.subjectPrefix}.pub.erased`, 'evt_erased'));
      await lost();
      await assert.rejects(publisher.purgeSubjects(stream, [`${names.subjectPrefix}.pub.erased`]), PublisherUnavailableError);
    });

    it('purges on a server that lost the stream: declares it again (nothing left to purge)', async () => {
      await publisher.publish(event(`${names.subjectPrefix}.pub.erased`, 'evt_erased'));
      await nats.replaceWithEmpty();
      await eventually(() => NatsConnectionWatch.of(connection).connected(), 'connected to the empty server');
      await publisher.purgeSubjects(stream, [`${names.subjectPrefix}.pub.erased`]);
      const info = await withConnection(async (observer) => (await jetstreamManager(observer)).streams.info(stream));
      assert.equal(info.state.messages, 0);
      assert.ok(logger.lines.some((line) => line.message === `NATS lost stream ${stream}; declared again`), 'the topology declared the stream again');
    });
  });

  it('stops while NATS is away, without waiting for it', async () => {
    const runtime = await startNode();
    await readEvents(runtime, 'stopping-reader');
    await runtime.ask('counter', 'stopping', { type: 'emit', count: 1 });
    await nats.stop();
    runtimes = runtimes.filter((started) => started !== runtime);
    // A drain of the lost connection would wait for the server for ever (the client now reconnects without a limit).
    await runtime.stop();
  });

  it('asks for AGENTRT_JETSTREAM_REPLICAS replicas of the streams it declares, says which setting a server that cannot hold them refuses, and runs with 1 (connected through a list of servers, one of them dead)', async () => {
    const servers = ` nats://127.0.0.1:${await freePort()} , ${nats.url}`;
    await withConnection(async (observer) => {
      const created: Array<{ num_replicas?: number }> = [];
      observer.subscribe('$JS.API.STREAM.CREATE.>', {
        callback: (_error, message) => {
          created.push(message.json());
        },
      });
      await observer.flush();
      // One server refuses more than one replica: the runtime's option reached the streams' creation.
      const refused = await startNode({ jetStreamReplicas: 3 }, undefined, servers);
      await observer.flush();
      assert.ok(created.length > 0 && created.every((request) => request.num_replicas === 3), `streams created with 3 replicas: ${JSON.stringify(created)}`);
      const failure = logger.lines.map((line) => (line.fields as { err?: unknown }).err).find((error) => error instanceof ConfigError);
      assert.match((failure as Error | undefined)?.message ?? '', /cannot be created with 3 replicas \(AGENTRT_JETSTREAM_REPLICAS\): the NATS server answered "replicas > 1 not supported in non-clustered mode"/);
      runtimes = runtimes.filter((started) => started !== refused);
      await refused.stop();
    });
    const runtime = await startNode({ jetStreamReplicas: 1 }, undefined, servers);
    await readEvents(runtime, 'replicated-reader');
    await withConnection(async (connection) => {
      const manager = await jetstreamManager(connection);
      assert.equal((await manager.streams.info(runtime.eventStream)).config.num_replicas, 1);
      assert.equal((await manager.consumers.info(runtime.eventStream, 'replicated-reader')).config.num_replicas, 1);
    });
  });

  it('asks the server for the configured replicas of a stream, of a durable, and raises a stream that has fewer', async () => {
    // One server cannot hold 3 replicas (it refuses them, or keeps 1): what the node asked for is read off the JetStream API requests.
    await withConnection(async (observer) => {
      const requests: Array<{ subject: string; body: { num_replicas?: number; config?: { num_replicas?: number } } }> = [];
      observer.subscribe('$JS.API.>', {
        callback: (_error, message) => {
          requests.push({ subject: message.subject, body: message.data.length ? message.json() : {} });
        },
      });
      await observer.flush();
      const connection = await connect({ servers: nats.url });
      try {
        const replicated = new JetStreamPublisher(connection, { replicas: 3, logger: silentLogger });
        const refusedOrNot = (work: Promise<unknown>) => work.catch(() => undefined);
        await refusedOrNot(replicated.prepare([{ name: `${names.eventStream}_R3`, subjects: [`${names.subjectPrefix}.r3.>`] }]));
        await new JetStreamPublisher(connection, { replicas: 1, logger: silentLogger }).prepare([{ name: `${names.eventStream}_R1`, subjects: [`${names.subjectPrefix}.r1.>`] }]);
        await refusedOrNot(replicated.prepare([{ name: `${names.eventStream}_R1`, subjects: [`${names.subjectPrefix}.r1.>`] }]));
        const handle = await refusedOrNot(new JetStreamConsumers(connection, { replicas: 3, logger: silentLogger }).consume({ stream: `${names.eventStream}_R1`, durableName: 'r3' }, async () => undefined));
        await (handle as { stop(): Promise<void> } | undefined)?.stop();
        await observer.flush();
        const replicasAsked = (kind: string, stream: string) =>
          requests.filter((request) => request.subject.startsWith(`$JS.API.${kind}.`) && request.subject.includes(stream)).map((request) => request.body.num_replicas ?? request.body.config?.num_replicas);
        await eventually(() => replicasAsked('CONSUMER', `${names.eventStream}_R1`).includes(3), 'the durable create request seen');
        assert.deepEqual(replicasAsked('STREAM.CREATE', `${names.eventStream}_R3`), [3]);
        assert.deepEqual(replicasAsked('STREAM.CREATE', `${names.eventStream}_R1`), [1]);
        assert.deepEqual(replicasAsked('STREAM.UPDATE', `${names.eventStream}_R1`), [3], 'the stream with fewer replicas is raised');
        assert.deepEqual(replicasAsked('CONSUMER', `${names.eventStream}_R1`).filter((replicas) => replicas !== undefined), [3]);
      } finally {
        await connection.close();
      }
    });
  });
});
