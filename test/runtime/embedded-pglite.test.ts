// Embedded mode end to end: no NATS_URL, the embedded database (PGlite over
// the wire protocol), in-process bus, leases and publisher; one node owns
// every shard and actors persist, passivate and recover as in a cluster.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { startActorRuntime, type ActorRuntime } from '../../actors';
import { createDataSource, runMigrationsLocked } from '../../persistence/data-source';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres, type EmbeddedPostgres } from '../../persistence/embedded-postgres';
import { RuntimeDatabase, type SqlQueryable } from '../../persistence/runtime/runtime-database';
import { counterKind, type CounterReply } from '../support/cluster-counter';
import { eventually, silentLogger } from '../support/cluster-harness';

describe('actor runtime on the embedded database', function () {
  this.timeout(60_000);
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'agentrt-embedded-'));
    embedded = await startEmbeddedPostgres({ dataDir });
    dataSource = createDataSource({ url: embedded.url, poolSize: EMBEDDED_POOL_SIZE });
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    runtime = await startActorRuntime({
      dataSource,
      kinds: [counterKind],
      options: { shardCount: 8, passivateAfterMs: 200, snapshotEvery: 3, reminderPollMs: 50 },
      logger: silentLogger,
    });
  });

  after(async () => {
    await runtime?.stop();
    await dataSource?.destroy();
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('owns every shard and keeps state across passivation', async () => {
    assert.equal(runtime.ownedShards().length, 8);
    const replies = await Promise.all(Array.from({ length: 20 }, () => runtime.ask<CounterReply>('counter', 'embedded', { type: 'add', by: 1 })));
    assert.deepEqual(replies.map((reply) => reply.value).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1));
    await eventually(() => runtime.activeActors() === 0, 'actor passivated');
    assert.equal((await runtime.ask<CounterReply>('counter', 'embedded', { type: 'get' })).value, 20);
  });

  it('fires reminders', async () => {
    await runtime.ask('counter', 'embedded-reminder', { type: 'remind', name: 'soon', inMs: 100 });
    await eventually(async () => (await runtime.ask<CounterReply>('counter', 'embedded-reminder', { type: 'get' })).reminded.includes('soon'), 'reminder fired');
  });
});

// PGlite spins forever, blocking the whole process, once an
// idle_in_transaction_session_timeout expires in its session (a node starved
// of CPU, or suspended, in the middle of a journal write). The runtime must
// not set one on the embedded database.
describe('actor runtime on the embedded database, journal writes', function () {
  this.timeout(60_000);
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  const runtimeStatements: string[] = [];
  let restoreTransaction: (() => void) | undefined;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'agentrt-embedded-idle-'));
    embedded = await startEmbeddedPostgres({ dataDir });
    dataSource = createDataSource({ url: embedded.url, poolSize: EMBEDDED_POOL_SIZE });
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    // Records every statement of the runtime's transactions and single statements: none may set an idle-in-transaction timeout.
    const { transaction, query } = RuntimeDatabase.prototype;
    restoreTransaction = () => Object.assign(RuntimeDatabase.prototype, { transaction, query });
    RuntimeDatabase.prototype.query = function (this: RuntimeDatabase, text: string, parameters?: unknown[]) {
      runtimeStatements.push(text);
      return query.call(this, text, parameters);
    } as typeof query;
    RuntimeDatabase.prototype.transaction = function <T>(this: RuntimeDatabase, work: (sql: SqlQueryable) => Promise<T>): Promise<T> {
      return transaction.call(this, (sql: SqlQueryable) =>
        work({
          query: (text: string, parameters?: unknown[]) => {
            runtimeStatements.push(text);
            return sql.query(text, parameters);
          },
        }),
      ) as Promise<T>;
    };
    runtime = await startActorRuntime({ dataSource, kinds: [counterKind], options: { shardCount: 4, leaseTimeoutMs: 1_000 }, logger: silentLogger });
  });

  after(async () => {
    restoreTransaction?.();
    await runtime?.stop();
    await dataSource?.destroy();
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('sets no idle-in-transaction timeout, which would freeze PGlite when it expires', async () => {
    assert.equal((await runtime.ask<CounterReply>('counter', 'idle', { type: 'add', by: 1 })).value, 1);
    assert.ok(runtimeStatements.some((text) => text.includes('FROM actor_shards')), 'the journal write went through the fence check');
    assert.deepEqual(runtimeStatements.filter((text) => text.includes('idle_in_transaction_session_timeout')), []);
  });
});
