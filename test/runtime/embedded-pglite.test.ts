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
import { counterBehavior, type CounterReply } from '../support/cluster-counter';
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
      behaviors: [counterBehavior],
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
