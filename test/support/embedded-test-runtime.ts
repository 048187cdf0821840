// One runtime node in this process in embedded mode (in-process bus, leases
// and a FlakyPublisher) over a real Postgres test database, hosting the
// counter kind: what the in-process runtime suites start for each test.
import type { DataSource } from 'typeorm';
import { ActorRuntime, MemoryBus, MemoryLeaseProvider, defaultRuntimeOptions, type RuntimeLogger, type RuntimeOptions } from '../../actors';
import { createDataSource } from '../../persistence/data-source';
import { createTestDatabase, type TestDatabase } from './database';
import type { ActorKind } from '../../src/ports/actor-behavior';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { counterKind } from './cluster-counter';
import { silentLogger } from './cluster-harness';
import { FlakyPublisher } from './flaky-publisher';

/** Starts a node; `publisher` fails while its `down` is set. */
export async function startEmbeddedTestRuntime(
  databaseUrl: string,
  options: Partial<RuntimeOptions>,
  setup: { logger?: RuntimeLogger; kinds?: ActorKind[] } = {},
): Promise<{ runtime: ActorRuntime; publisher: FlakyPublisher }> {
  const publisher = new FlakyPublisher();
  const runtime = await ActorRuntime.start({
    database: new RuntimeDatabase({ url: databaseUrl, poolSize: 4 }),
    bus: new MemoryBus(),
    // Scoped by the database: nodes over the same database in one process share the in-process leases.
    leases: new MemoryLeaseProvider(databaseUrl),
    publisher,
    kinds: setup.kinds ?? [counterKind],
    options: { ...defaultRuntimeOptions(), ...options },
    logger: setup.logger ?? silentLogger,
  });
  return { runtime, publisher };
}

/** A node as startEmbeddedTestRuntime starts it, on a test database of its own, with a data source to read that database. */
export interface EmbeddedRuntimeFixture {
  database: TestDatabase;
  dataSource: DataSource;
  runtime: ActorRuntime;
  publisher: FlakyPublisher;
  /** Stops the node, closes the data source and drops the database. */
  close(): Promise<void>;
}

export async function startEmbeddedRuntimeFixture(options: Partial<RuntimeOptions>, setup: { logger?: RuntimeLogger; kinds?: ActorKind[] } = {}): Promise<EmbeddedRuntimeFixture> {
  const database = await createTestDatabase();
  const dataSource = createDataSource({ url: database.url, poolSize: 2 });
  await dataSource.initialize();
  const { runtime, publisher } = await startEmbeddedTestRuntime(database.url, options, setup);
  return {
    database, dataSource, runtime, publisher,
    async close() {
      await runtime.stop();
      await dataSource.destroy();
      await database.drop();
    },
  };
}
