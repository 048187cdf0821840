// Persisted-turn benchmark: prints one JSON line of figures, asserts nothing.
// ONE in-process node on real Postgres (a fresh database) owning every shard;
// the asks come from the same process. Counter actors: `{type:'add', by:1}`
// writes one journal entry per ask, so every answered ask is one persisted
// turn. A closed loop keeps IN_FLIGHT asks outstanding, round-robin over
// ACTORS actors (never two asks to one actor at once), for MEASURE_MS after a
// warm-up. Run once with the NATS bus (the figure of record: the real
// request path, leases on Postgres) and once with the in-process MemoryBus
// (the same turns without the NATS hop).
// Besides throughput and latency it counts what a turn costs Postgres: every
// statement the runtime pool sends (node-postgres sends one statement, or one
// multi-statement simple query, per round trip: it never pipelines) and the
// asks per journal INSERT (the group-commit batch size).
// Run with `npm run bench:turns` (BENCH_BUS=nats|memory runs one bus only;
// BENCH_CPU_PROFILE=<file> writes a .cpuprofile of the measured window only,
// without the start-up, the activations and the warm-up).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { ActorRuntime, MemoryBus, MemoryEventPublisher, MemoryLeaseProvider, NatsBus, PgLeaseProvider, defaultRuntimeOptions, type RuntimeOptions } from '../actors';
import { RUNTIME_SESSION_SETTINGS, RuntimeDatabase } from '../persistence/runtime/runtime-database';
import { counterKind } from '../test/support/cluster-counter';
import { TEST_NATS_URL, silentLogger, uniqueBusNames } from '../test/support/cluster-harness';
import { createTestDatabase } from '../test/support/database';
import { postgresBackendCpu } from './support/postgres-backend-cpu';

const ACTORS = 1000;
const IN_FLIGHT = 32;
const WARMUP_MS = 3000;
const MEASURE_MS = 10_000;
/** application_name of the runtime pool: only its statements are counted (not the lease session's). */
const RUNTIME_POOL_NAME = 'bench-turns-runtime';

/** Statements the runtime pool sent, and those that inserted journal entries. */
const traffic = { statements: 0, journalInserts: 0 };

// Wraps node-postgres's Client.query (the Pool's clients are instances of it) to count what reaches the server.
function countRuntimeStatements(): void {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
    if (this.connectionParameters?.application_name === RUNTIME_POOL_NAME) {
      traffic.statements++;
      const config = args[0] as string | { text?: string };
      if ((typeof config === 'string' ? config : (config?.text ?? '')).includes('INSERT INTO actor_journal')) traffic.journalInserts++;
    }
    return original.apply(this, args);
  };
}

function percentile(sorted: number[], p: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

async function startNode(bus: 'nats' | 'memory', databaseUrl: string, names: { subjectPrefix: string; eventStream: string }): Promise<ActorRuntime> {
  const options: RuntimeOptions = { ...defaultRuntimeOptions(), ...names };
  const database = new RuntimeDatabase({ url: databaseUrl, poolSize: options.databasePoolSize, applicationName: RUNTIME_POOL_NAME, sessionSettings: RUNTIME_SESSION_SETTINGS });
  // These turns publish no events: the in-process publisher stands in for JetStream.
  const common = { database, kinds: [counterKind], options, logger: silentLogger, publisher: new MemoryEventPublisher() };
  if (bus === 'memory') return ActorRuntime.start({ ...common, bus: new MemoryBus(), leases: new MemoryLeaseProvider(databaseUrl) });
  // A cluster node's bus and leases (start-runtime.ts): NATS, and advisory locks on Postgres.
  const connection = await connect({ servers: TEST_NATS_URL, name: options.nodeId });
  return ActorRuntime.start({
    ...common,
    bus: new NatsBus(connection, false),
    leases: new PgLeaseProvider({ url: databaseUrl, leaseTimeoutMs: options.leaseTimeoutMs, applicationName: 'bench-turns-lease' }),
    onStopped: () => connection.drain(),
  });
}

/** Keeps IN_FLIGHT increments outstanding for `durationMs`; returns each one's latency (ms). */
async function closedLoop(runtime: ActorRuntime, ids: string[], durationMs: number): Promise<number[]> {
  const samples: number[] = [];
  const until = Date.now() + durationMs;
  let next = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const id = ids[next++ % ids.length];
      const begin = process.hrtime.bigint();
      await runtime.ask('counter', id, { type: 'add', by: 1 });
      samples.push(Number(process.hrtime.bigint() - begin) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return samples;
}

/** Profiles `run` when BENCH_CPU_PROFILE names a file (`<file>.<bus>.cpuprofile`). */
async function profiled<T>(bus: string, run: () => Promise<T>): Promise<T> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${file}.${bus}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
}

async function measure(bus: 'nats' | 'memory') {
  const database = await createTestDatabase();
  const names = uniqueBusNames();
  const runtime = await startNode(bus, database.url, names);
  try {
    while (runtime.ownedShards().length < defaultRuntimeOptions().shardCount) await new Promise((resolve) => setTimeout(resolve, 50));
    const ids = Array.from({ length: ACTORS }, (_, i) => `turns-${i}`);
    for (let i = 0; i < ids.length; i += IN_FLIGHT) await Promise.all(ids.slice(i, i + IN_FLIGHT).map((id) => runtime.ask('counter', id, { type: 'get' })));
    await closedLoop(runtime, ids, WARMUP_MS);
    const backends = await postgresBackendCpu(database.url);
    const before = { ...traffic };
    const backendCpuBefore = backends.seconds();
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    const samples = await profiled(bus, () => closedLoop(runtime, ids, MEASURE_MS));
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpu = process.cpuUsage(cpuBefore);
    const backendCpu = backends.seconds() - backendCpuBefore;
    const statements = traffic.statements - before.statements;
    const journalInserts = traffic.journalInserts - before.journalInserts;
    const sorted = samples.sort((a, b) => a - b);
    return {
      persistedTurnsPerSecond: Math.round((samples.length / elapsedMs) * 1000),
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      p999Ms: percentile(sorted, 99.9),
      maxMs: Number(sorted[sorted.length - 1].toFixed(2)),
      // Every ask writes one journal entry: the batch size is asks per journal INSERT.
      turnsPerBatch: Number((samples.length / Math.max(1, journalInserts)).toFixed(1)),
      roundTripsPerTurn: Number((statements / samples.length).toFixed(3)),
      roundTripsPerBatch: Number((statements / Math.max(1, journalInserts)).toFixed(2)),
      nodeCpuCores: Number(((cpu.user + cpu.system) / 1000 / elapsedMs).toFixed(2)),
      postgresCpuCores: Number(((backendCpu * 1000) / elapsedMs).toFixed(2)),
      cpuMsPerTurn: { node: Number(((cpu.user + cpu.system) / 1000 / samples.length).toFixed(3)), postgres: Number(((backendCpu * 1000) / samples.length).toFixed(3)) },
    };
  } finally {
    await runtime.stop();
    await database.drop();
  }
}

async function main(): Promise<void> {
  countRuntimeStatements();
  const buses = process.env.BENCH_BUS ? [process.env.BENCH_BUS as 'nats' | 'memory'] : (['nats', 'memory'] as const);
  const figures: Record<string, unknown> = { nodes: 1, actors: ACTORS, inFlight: IN_FLIGHT, measureMs: MEASURE_MS };
  for (const bus of buses) figures[bus === 'nats' ? 'natsBus' : 'memoryBus'] = await measure(bus);
  console.log(JSON.stringify(figures));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
