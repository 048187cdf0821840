// The faults a review of the first-stage runtime found (issue 8, item 6),
// each reproduced on the runtime in embedded mode over real Postgres: every
// assertion here is one the first-stage code broke (the stage-2 API change
// keeps these tests from compiling against it). Fault i (the cluster view
// after a kill -9) is also covered with node processes in test/cluster/.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { startActorRuntime, type ActorRuntime, type RuntimeLogger, type RuntimeOptions } from '../../actors';
import { ApiError } from '../../src/errors';
import { newUlid } from '../../src/ids';
import { shardOf } from '../../src/sharding/fnv1a32';
import { createDataSource } from '../../persistence/data-source';
import { counterKind, type CounterReply } from '../support/cluster-counter';
import { eventually } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import type { FlakyPublisher } from '../support/flaky-publisher';

const SHARDS = 16;
const OPTIONS: Partial<RuntimeOptions> = { shardCount: SHARDS, passivateAfterMs: 150, snapshotEvery: 5, reminderPollMs: 50, outboxPollMs: 50 };

/** A logger that keeps what it was given. */
function recordingLogger(lines: Array<{ level: string; message: string; fields: Record<string, unknown> }>): RuntimeLogger {
  const record = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, message, fields });
  return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

describe('actor runtime: faults of the first stage (issue 8, item 6)', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  let publisher: FlakyPublisher;
  const logs: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];

  async function startRuntime(): Promise<ActorRuntime> {
    const started = await startEmbeddedTestRuntime(database.url, OPTIONS, { logger: recordingLogger(logs) });
    publisher = started.publisher;
    return started.runtime;
  }

  const ask = (id: string, command: unknown) => runtime.ask<CounterReply>('counter', id, command);
  const value = async (id: string) => (await ask(id, { type: 'get' })).value;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
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

  it('a. never fires a reminder that a turn queued before its delivery cancelled', async () => {
    await ask('cancelled-reminder', { type: 'remind', name: 'soon', inMs: 100 });
    // The actor is busy past the due time; the cancel is queued before the poller delivers the reminder.
    const busy = ask('cancelled-reminder', { type: 'slowAdd', by: 1, delayMs: 400 });
    await sleep(20);
    const cancel = ask('cancelled-reminder', { type: 'cancelReminder', name: 'soon' });
    await Promise.all([busy, cancel]);
    await sleep(400);
    assert.deepEqual((await ask('cancelled-reminder', { type: 'get' })).reminded, []);
    const [{ count }] = await dataSource.query("SELECT count(*)::int AS count FROM actor_reminders WHERE actor_id = 'cancelled-reminder'");
    assert.equal(count, 0);
  });

  it('a. fires a moved reminder once, at its new time', async () => {
    await ask('moved-reminder', { type: 'remind', name: 'r', inMs: 100 });
    const busy = ask('moved-reminder', { type: 'slowAdd', by: 1, delayMs: 300 });
    await sleep(20);
    const move = ask('moved-reminder', { type: 'remind', name: 'r', inMs: 700 });
    await Promise.all([busy, move]);
    await sleep(250);
    assert.deepEqual((await ask('moved-reminder', { type: 'get' })).reminded, [], 'the delivery of the old due time was stale');
    await eventually(async () => (await ask('moved-reminder', { type: 'get' })).reminded.length === 1, 'moved reminder fired');
    await sleep(300);
    assert.deepEqual((await ask('moved-reminder', { type: 'get' })).reminded, ['r']);
  });

  it('b. a durable command delivered again after the dedupe window is marked processed, not applied again', async () => {
    const cid = await runtime.send('counter', 'duplicate', { type: 'add', by: 5 });
    await eventually(async () => (await value('duplicate')) === 5, 'command applied');
    for (let i = 0; i < 70; i++) await ask('duplicate', { type: 'add', by: 1 });
    await eventually(() => runtime.activeActors() === 0, 'actor passivated (its in-memory replies are gone)');
    // A second delivery of the same command: its row is pending again, as after a lost processed mark.
    await dataSource.query('UPDATE actor_commands SET processed_at = NULL WHERE id = $1', [cid]);
    await eventually(async () => (await dataSource.query('SELECT processed_at FROM actor_commands WHERE id = $1', [cid]))[0].processed_at !== null, 'duplicate marked processed');
    assert.equal(await value('duplicate'), 75);
    await eventually(() => runtime.activeActors() === 0, 'the actor passivates: nothing keeps waking it');
  });

  it('c. refuses an actor call made inside a request transaction, so no rollback can erase an answered turn', async () => {
    // The node's wiring (startActorRuntime): the request data source and a runtime with its own pool.
    await runtime.stop();
    const requestSource = createDataSource({ url: database.url, poolSize: 2 });
    await requestSource.initialize();
    runtime = await startActorRuntime({ dataSource: requestSource, kinds: [counterKind], options: OPTIONS, logger: recordingLogger(logs) });
    try {
      await assert.rejects(
        requestSource.transaction(async () => {
          await ask('in-transaction', { type: 'add', by: 1 });
          throw new Error('the request rolls back');
        }),
        (error: ApiError) => error.code === 'INTERNAL' && /inside a request transaction/.test(error.message),
      );
      assert.equal(await value('in-transaction'), 0);
      assert.equal((await ask('in-transaction', { type: 'add', by: 1 })).value, 1, 'outside a transaction the call works');
    } finally {
      await runtime.stop();
      await requestSource.destroy();
      runtime = await startRuntime();
    }
  });

  it('d. publishes an actor\'s events in the order it wrote them, not in id order', async () => {
    publisher.down = true;
    await ask('ordered', { type: 'emit', count: 3 });
    await runtime.flushOutbox();
    // The first event's id as a node whose clock runs an hour ahead would have made it.
    const ahead = `evt_${newUlid().replace(/^./, '7')}`;
    await dataSource.query("UPDATE actor_outbox SET id = $1 WHERE persistence_key = 'counter:ordered' AND actor_seq = 1", [ahead]);
    publisher.down = false;
    await eventually(() => publisher.inner.published().filter((event) => event.subject.endsWith('.ordered')).length === 3, 'events published');
    const sequences = publisher.inner
      .published()
      .filter((event) => event.subject.endsWith('.ordered'))
      .map((event) => (JSON.parse(event.data) as { sequence: number }).sequence);
    assert.deepEqual(sequences, [1, 2, 3]);
  });

  it('d. keeps publishing the other actors\' events while one actor\'s events fail', async () => {
    const failing = publisher.publish.bind(publisher);
    publisher.publish = async (event) => {
      if (event.subject.endsWith('.poisoned')) throw new Error('subject refused');
      return failing(event);
    };
    await ask('poisoned', { type: 'emit', count: 600 });
    await ask('healthy', { type: 'emit', count: 2 });
    await eventually(() => publisher.inner.published().filter((event) => event.subject.endsWith('.healthy')).length === 2, 'healthy events published');
  });

  it('e. stops serving a shard whose fence moved on, not only the actor', async () => {
    const shard = shardOf('fenced-node', SHARDS);
    await ask('fenced-node', { type: 'add', by: 1 });
    assert.ok(runtime.ownedShards().includes(shard));
    await dataSource.query('UPDATE actor_shards SET epoch = epoch + 1 WHERE shard = $1', [shard]);
    await assert.rejects(runtime.ask('counter', 'fenced-node', { type: 'add', by: 1 }, { timeoutMs: 300 }));
    assert.ok(!runtime.ownedShards().includes(shard), 'the node dropped the shard it lost');
  });

  it('f. recognises a retried ask by the command id its caller gives, beyond the recent replies', async () => {
    const first = await runtime.ask<CounterReply>('counter', 'idempotent', { type: 'add', by: 5 }, { commandId: 'idem-key-1' });
    assert.equal(first.value, 5);
    for (let i = 0; i < 70; i++) await ask('idempotent', { type: 'add', by: 1 });
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    const retried = await runtime.ask<CounterReply>('counter', 'idempotent', { type: 'add', by: 5 }, { commandId: 'idem-key-1' });
    assert.equal(retried.value, 5, 'the retry gets the reply recorded for the first attempt');
    assert.equal(await value('idempotent'), 75);
  });

  it('g. makes command ids that sort in the order they were made, within one millisecond too', () => {
    const ids = Array.from({ length: 2000 }, () => newUlid());
    assert.deepEqual([...ids].sort(), ids);
  });

  it('h. fires a due reminder while the poll batch could be full of unknown kinds and backing-off reminders', async () => {
    const shard = shardOf('starved', SHARDS);
    await dataSource.query(
      `INSERT INTO actor_reminders (kind, actor_id, name, shard, due_at, next_attempt_at, payload)
       SELECT 'ghost', 'ghost-' || i, 'r', $1, now() - interval '1 hour', now() - interval '1 hour', 'null' FROM generate_series(1, 600) AS i`,
      [shard],
    );
    await ask('starved', { type: 'remind', name: 'due', inMs: 0 });
    await eventually(async () => (await ask('starved', { type: 'get' })).reminded.includes('due'), 'due reminder fired', 5000);
    await dataSource.query("DELETE FROM actor_reminders WHERE kind = 'ghost'");
  });

  it('i. lists only live members, each with the shards it owns now', async () => {
    await dataSource.query(
      "INSERT INTO actor_nodes (node_id, last_heartbeat_at, shards, active_actors) VALUES ('node_dead', now() - interval '1 minute', '{0,1,2,3}', 7)",
    );
    const status = await runtime.clusterStatus();
    assert.deepEqual(status.nodes.map((node) => node.id), [runtime.nodeId]);
    assert.deepEqual(status.nodes[0].shards, Array.from({ length: SHARDS }, (_, i) => i));
    await dataSource.query("DELETE FROM actor_nodes WHERE node_id = 'node_dead'");
  });

  it('j. keeps an error\'s details and cause across the bus, and logs the refused decision', async () => {
    await assert.rejects(ask('refusing', { type: 'refuse' }), (error: ApiError) => {
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.deepEqual(error.details, [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'by', description: 'must be positive' }] }]);
      assert.equal((error.cause as Error).message, 'the counter checked it');
      return true;
    });
    await assert.rejects(ask('refusing', { type: 'fail' }), (error: ApiError) => error.code === 'INTERNAL');
    assert.ok(logs.some((line) => line.level === 'info' && line.fields.key === 'counter:refusing' && line.fields.code === 'INVALID_ARGUMENT'));
    assert.ok(logs.some((line) => line.level === 'error' && line.fields.key === 'counter:refusing' && line.fields.code === 'INTERNAL'));
  });
});
