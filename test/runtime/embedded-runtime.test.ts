// The runtime in embedded mode (in-process bus, leases and publisher) on a real
// Postgres database: activation, replay, snapshots, passivation, reminders,
// durable commands, outbox, errors and handoff.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { runtimeMetrics, startActorRuntime, type ActorRuntime, type RuntimeOptions } from '../../actors';
import { ApiError, FailedPreconditionError } from '../../src/errors';
import { shardOf } from '../../src/sharding/fnv1a32';
import { createDataSource } from '../../persistence/data-source';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { counterEffects, counterKind, counterOverlaps, type CounterReply } from '../support/cluster-counter';
import { eventually, silentLogger } from '../support/cluster-harness';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import type { FlakyPublisher } from '../support/flaky-publisher';

const OPTIONS: Partial<RuntimeOptions> = { shardCount: 16, passivateAfterMs: 200, snapshotEvery: 5, reminderPollMs: 50, outboxPollMs: 50 };

describe('actor runtime (embedded mode)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  let publisher: FlakyPublisher;

  async function startRuntime(overrides: Partial<RuntimeOptions> = {}): Promise<ActorRuntime> {
    const started = await startEmbeddedTestRuntime(database.url, { ...OPTIONS, ...overrides });
    publisher = started.publisher;
    return started.runtime;
  }

  const ask = (id: string, command: unknown) => runtime.ask<CounterReply>('counter', id, command);
  const value = async (id: string) => (await ask(id, { type: 'get' })).value;

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 5 });
    await dataSource.initialize();
  });

  after(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  beforeEach(async () => {
    runtime = await startRuntime();
  });

  afterEach(async () => {
    await runtime.stop();
  });

  it('owns every shard as the only node', async () => {
    assert.deepEqual(runtime.ownedShards(), Array.from({ length: 16 }, (_, i) => i));
    const status = await runtime.clusterStatus();
    assert.equal(status.shardCount, 16);
    assert.deepEqual(status.nodes.map((node) => node.id), [runtime.nodeId]);
    assert.equal(status.nodes[0].shards.length, 16);
  });

  it('serialises concurrent asks to one actor', async () => {
    const overlapsBefore = counterOverlaps.count;
    const replies = await Promise.all(Array.from({ length: 50 }, () => ask('serial', { type: 'add', by: 1 })));
    assert.deepEqual(replies.map((reply) => reply.value).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
    assert.equal(counterOverlaps.count, overlapsBefore);
  });

  it('passivates an idle actor and recovers its state from snapshot and journal', async () => {
    for (let i = 0; i < 7; i++) await ask('passive', { type: 'add', by: 2 });
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    const [snapshot] = await dataSource.query("SELECT sequence_nr FROM actor_snapshots WHERE persistence_key = 'counter:passive'");
    assert.equal(Number(snapshot.sequence_nr), 5);
    const activations = (await runtimeMetrics.activations.get()).values.find((v) => v.labels.kind === 'counter')!.value;
    assert.equal(await value('passive'), 14);
    const after = (await runtimeMetrics.activations.get()).values.find((v) => v.labels.kind === 'counter')!.value;
    assert.equal(after, activations + 1);
  });

  it('runs an effect outside the turn, applies its result once and never runs it again on replay', async () => {
    const before = counterEffects.runs;
    await ask('effects', { type: 'work', sleepMs: 50, by: 3 });
    await eventually(async () => (await value('effects')) === 3, 'effect result applied');
    assert.equal(counterEffects.runs, before + 1);
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    const reply = await ask('effects', { type: 'get' });
    assert.equal(reply.value, 3);
    assert.deepEqual(reply.effects, { 'fx-effects-1': 'ok:1' });
    assert.equal(counterEffects.runs, before + 1);
    const work = await dataSource.query("SELECT * FROM actor_work WHERE actor_id = 'effects'");
    assert.deepEqual(work, [], 'the actor left the work index when its last effect finished');
  });

  it('answers other messages while an effect runs, and lets a cancel land during it', async () => {
    const before = counterEffects.runs;
    await ask('long-effect', { type: 'work', sleepMs: 1500, by: 7, effectId: 'long-1' });
    const started = Date.now();
    assert.equal((await ask('long-effect', { type: 'add', by: 1 })).value, 1);
    assert.equal((await ask('long-effect', { type: 'get' })).effects['long-1'], 'running');
    const cancelled = await ask('long-effect', { type: 'abortWork', effectId: 'long-1' });
    assert.ok(Date.now() - started < 1000, 'the turns did not wait for the effect');
    assert.equal(cancelled.effects['long-1'], 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 1700));
    const after = await ask('long-effect', { type: 'get' });
    assert.equal(after.value, 1, 'the aborted effect added nothing');
    assert.equal(after.effects['long-1'], 'aborted');
    assert.equal(counterEffects.runs, before + 1);
    assert.equal(runtime.runningEffects(), 0);
  });

  it('resumes an effect still running when the stop\'s drain time ran out, with the same id and no outside message', async () => {
    await runtime.stop();
    runtime = await startRuntime({ drainTimeoutMs: 300 });
    await ask('restarted-effect', { type: 'work', sleepMs: 5000, by: 2, effectId: 'resume-1' });
    await runtime.stop();
    runtime = await startRuntime();
    await eventually(() => runtime.runningEffects() === 1, 'the new node runs the effect again', 5000);
    await eventually(async () => (await dataSource.query("SELECT 1 FROM actor_work WHERE actor_id = 'restarted-effect'")).length === 0, 'effect finished', 10_000);
    const reply = await ask('restarted-effect', { type: 'get' });
    assert.equal(reply.value, 2);
    assert.equal(reply.effects['resume-1'], 'ok:2');
  });

  it('lets an effect running at a stop finish within the drain time and applies its outcome: the next start does not run it again', async () => {
    const before = counterEffects.runs;
    await ask('drained-effect', { type: 'work', sleepMs: 1000, by: 3, effectId: 'drained-1' });
    await runtime.stop();
    assert.equal(counterEffects.runs, before + 1);
    runtime = await startRuntime();
    const reply = await ask('drained-effect', { type: 'get' });
    assert.equal(reply.value, 3);
    assert.equal(reply.effects['drained-1'], 'ok:1', 'applied by the node that ran it');
    assert.equal(runtime.runningEffects(), 0);
    assert.equal(counterEffects.runs, before + 1, 'run once');
  });

  it('fires a durable reminder, also for a passivated actor, and deletes it', async () => {
    await ask('reminded', { type: 'remind', name: 'wake', inMs: 400 });
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    await eventually(async () => (await ask('reminded', { type: 'get' })).reminded.includes('wake'), 'reminder fired');
    const rows = await dataSource.query("SELECT * FROM actor_reminders WHERE actor_id = 'reminded'");
    assert.equal(rows.length, 0);
  });

  it('retries a failing reminder with a doubling delay instead of at every poll', async () => {
    const before = counterEffects.failedReminders;
    await ask('failing-reminder', { type: 'remind', name: 'failing', inMs: 0 });
    // Polls every 50 ms: 30 attempts in 1.5 s without backoff; with it, at 50, 100, 200, 400, 800 ms.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const attempts = counterEffects.failedReminders - before;
    assert.ok(attempts >= 2 && attempts <= 7, `${attempts} attempts in 1.5 s`);
    const rows = await dataSource.query("SELECT * FROM actor_reminders WHERE actor_id = 'failing-reminder'");
    assert.equal(rows.length, 1, 'the failing reminder is kept for later');
  });

  it('applies a durable command once, and reads pending commands on activation', async () => {
    await runtime.send('counter', 'durable', { type: 'add', by: 5 });
    await eventually(async () => (await value('durable')) === 5, 'sent command applied');
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    // A command whose bus message was lost: only the row exists.
    await dataSource.query("INSERT INTO actor_commands (id, shard, kind, actor_id, payload) VALUES ('01KPENDING0000000000000000', $1, 'counter', 'durable', $2)", [
      shardOf('durable', 16),
      JSON.stringify({ type: 'add', by: 10 }),
    ]);
    assert.equal(await value('durable'), 15);
    const pending = await dataSource.query("SELECT id FROM actor_commands WHERE actor_id = 'durable' AND processed_at IS NULL");
    assert.deepEqual(pending, []);
  });

  it('publishes outbox events, and keeps them while the publisher is down', async () => {
    publisher.down = true;
    await ask('emitter', { type: 'emit', count: 3 });
    await runtime.flushOutbox();
    const [{ count }] = await dataSource.query("SELECT count(*)::int AS count FROM actor_outbox WHERE subject LIKE '%.emitter' AND published_at IS NULL");
    assert.equal(count, 3);
    publisher.down = false;
    await eventually(() => publisher.inner.published().filter((event) => event.subject === 'agentrt.events.counter.emitter').length === 3, 'events published');
    const ids = publisher.inner.published().map((event) => (JSON.parse(event.data) as { id: string }).id);
    assert.deepEqual(ids, publisher.inner.published().map((event) => event.id));
  });

  it('applies a retried ask once even when more than 64 turns ran between its attempts', async () => {
    await runtime.stop();
    runtime = await startRuntime({ askAttemptTimeoutMs: 150 });
    await ask('overloaded', { type: 'add', by: 1 });
    // The first attempt's turn outlasts the attempt timeout; 100 other turns queue before the retry.
    const slow = runtime.ask<CounterReply>('counter', 'overloaded', { type: 'slowAdd', by: 1000, delayMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(Array.from({ length: 100 }, () => runtime.tell('counter', 'overloaded', { type: 'add', by: 1 })));
    await slow;
    await eventually(async () => (await dataSource.query("SELECT count(*)::int AS n FROM actor_journal WHERE persistence_key = 'counter:overloaded'"))[0].n >= 102, 'every turn persisted');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await value('overloaded'), 1 + 1000 + 100);
  });

  it('lets an ask whose write lost its database connection retry, and applies it once', async () => {
    // The first journal insert of this actor blocks, and its connection is then terminated.
    await dataSource.query(`CREATE SEQUENCE interrupt_once;
      CREATE FUNCTION interrupt_journal() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.persistence_key = 'counter:interrupted' AND nextval('interrupt_once') = 1 THEN PERFORM pg_sleep(30); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER interrupt_journal BEFORE INSERT ON actor_journal FOR EACH ROW EXECUTE FUNCTION interrupt_journal();`);
    try {
      const reply = ask('interrupted', { type: 'add', by: 1 });
      await eventually(async () => (await dataSource.query("SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).length === 1, 'write interrupted');
      assert.equal((await reply).value, 1);
      assert.equal(await value('interrupted'), 1);
    } finally {
      await dataSource.query('DROP TRIGGER interrupt_journal ON actor_journal; DROP FUNCTION interrupt_journal(); DROP SEQUENCE interrupt_once;');
    }
  });

  it('returns the behaviour error to the asker without losing the actor', async () => {
    await ask('failing', { type: 'add', by: 1 });
    await assert.rejects(ask('failing', { type: 'fail' }), (error: ApiError) => error.code === 'INTERNAL' && error.message === 'internal error');
    assert.equal(await value('failing'), 1);
  });

  it('consumes a durable command whose decision fails, instead of retrying it forever', async () => {
    const cid = await runtime.send('counter', 'poison', { type: 'fail' });
    await eventually(async () => (await dataSource.query('SELECT processed_at FROM actor_commands WHERE id = $1', [cid]))[0].processed_at !== null, 'command consumed');
    assert.equal(await value('poison'), 0);
  });

  it('refuses an unknown actor kind and a malformed id', async () => {
    await assert.rejects(runtime.ask('nope', 'x', {}), (error: ApiError) => error.code === 'INVALID_ARGUMENT' && error.message === 'kind: unknown actor kind nope');
    await assert.rejects(runtime.ask('counter', 'a.b', {}), (error: ApiError) => error.code === 'INVALID_ARGUMENT' && error.message === 'id: must match [A-Za-z0-9_:-]{1,200}');
  });

  it('drains accepted messages on stop (handoff), so none is lost', async () => {
    await Promise.all(Array.from({ length: 200 }, () => runtime.tell('counter', 'handoff', { type: 'add', by: 1 })));
    await runtime.stop();
    runtime = await startRuntime();
    assert.equal(await value('handoff'), 200);
  });

  it('finishes a handoff at once when an actor stops with a drain barrier in its mailbox', async () => {
    await ask('fenced-drain', { type: 'add', by: 1 });
    // A turn in progress whose write will be refused: another node claimed the shard meanwhile.
    const slow = runtime.ask('counter', 'fenced-drain', { type: 'slowAdd', by: 1, delayMs: 200 }, { timeoutMs: 1000 }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await dataSource.query('UPDATE actor_shards SET epoch = epoch + 1 WHERE shard = $1', [shardOf('fenced-drain', 16)]);
    const started = Date.now();
    await runtime.stop();
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3000, `stop waited ${elapsed} ms for a barrier the stopped actor never answered`);
    assert.ok((await slow) instanceof Error);
  });

  it('purges what the retention window lets go while it runs', async () => {
    await runtime.stop();
    runtime = await startRuntime({ askTimeoutMs: 1000, retentionWindowMs: 1000, retentionIntervalMs: 100 });
    for (let i = 0; i < 12; i++) await ask('retained', { type: 'add', by: 1 });
    await ask('retained', { type: 'emit', count: 2 });
    await eventually(
      async () => (await dataSource.query("SELECT count(*)::int AS n FROM actor_journal WHERE persistence_key = 'counter:retained'"))[0].n <= 3,
      'journal entries covered by the snapshot purged',
      5000,
    );
    await eventually(async () => (await dataSource.query("SELECT count(*)::int AS n FROM actor_outbox WHERE persistence_key = 'counter:retained'"))[0].n === 0, 'published events purged', 5000);
    assert.equal(await value('retained'), 12);
  });

  it('refuses a retention window shorter than the callers\' retry budget', async () => {
    await assert.rejects(startRuntime({ askTimeoutMs: 30_000, retentionWindowMs: 10_000 }), /AGENTRT_RETENTION_WINDOW_MS \(10000\) must be at least AGENTRT_ASK_TIMEOUT_MS \(30000\)/);
  });

  it('refuses to start with another shard count', async () => {
    await assert.rejects(
      startActorRuntime({ dataSource, kinds: [counterKind], options: { ...OPTIONS, shardCount: 32 }, logger: silentLogger }),
      (error: FailedPreconditionError) =>
        error instanceof FailedPreconditionError && error.message === "shard count 32 differs from the cluster's 16; changing it needs a full stop and a migration",
    );
  });
});
