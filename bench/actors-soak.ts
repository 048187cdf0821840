// Retention soak: one in-process runtime node (embedded bus, leases and
// publisher) on a fresh Postgres database, with a short retention window,
// frequent snapshots and the retention sweeper running, under a steady paced
// load of persisting asks to a few hundred counters: `add`, `emit` (two outbox
// events) and `send` (a durable command to another counter, so actor_commands
// churns too). Prints one JSON line a minute (database size, rows of the
// runtime's tables, asks completed per second, rows purged) and a summary line
// with the database's growth from the baseline minute (10, or the one before
// the last of a shorter run) to the end: flat means retention keeps up. Asserts nothing.
// Run with `npm run bench:soak`; SOAK_MINUTES (default 60), SOAK_RATE asks/s
// (default 400), SOAK_ACTORS (default 300), SOAK_WINDOW_MS (default 60000).
import { Client } from 'pg';
import { ActorRuntime, MemoryBus, MemoryEventPublisher, MemoryLeaseProvider, defaultRuntimeOptions, type RuntimeLogger } from '../actors';
import type { SweepCounts } from '../actors/runtime/retention-sweeper';
import { RuntimeDatabase } from '../persistence/runtime/runtime-database';
import { counterKind } from '../test/support/cluster-counter';
import { createTestDatabase } from '../test/support/database';

const MINUTE_MS = 60_000;
const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const RATE_PER_SECOND = Number(process.env.SOAK_RATE ?? 400);
const ACTORS = Number(process.env.SOAK_ACTORS ?? 300);
const WINDOW_MS = Number(process.env.SOAK_WINDOW_MS ?? 60_000);
const MAX_IN_FLIGHT = 64;
const PACE_TICK_MS = 10;
// Minute 10 (the tables have long filled a window and VACUUM has passed many times); a short trial run
// compares its last two minutes.
const BASELINE_MINUTE = Math.min(10, Math.max(1, MINUTES - 1));
const RUNTIME_TABLES = ['actor_journal', 'actor_snapshots', 'actor_outbox', 'actor_commands'];

interface MinuteFigures {
  minute: number;
  databaseBytes: number;
  /** The four runtime tables with their indexes and TOAST. */
  runtimeTableBytes: number;
  journalRows: number;
  outboxRows: number;
  commandRows: number;
  turnsPerSecond: number;
  purged: SweepCounts;
  failedAsks: number;
}

/** The next command of the mix: half `add`, a third `emit`, the rest `send` to another counter. */
function nextCommand(sequence: number): { id: string; command: unknown } {
  const id = `soak-${sequence % ACTORS}`;
  const pick = sequence % 20;
  if (pick < 10) return { id, command: { type: 'add', by: 1 } };
  if (pick < 17) return { id, command: { type: 'emit', count: 2 } };
  return { id, command: { type: 'send', to: [`soak-${(sequence * 7 + 1) % ACTORS}`], by: 1 } };
}

/** Fires asks at RATE_PER_SECOND (at most MAX_IN_FLIGHT waiting) until stopped; counts completions. */
class PacedLoad {
  completed = 0;
  failed = 0;
  private launched = 0;
  private inFlight = 0;
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private readonly drained: Array<() => void> = [];

  constructor(private readonly runtime: ActorRuntime) {
    this.timer = setInterval(() => this.launchDue(), PACE_TICK_MS);
  }

  private launchDue(): void {
    const due = Math.floor(((Date.now() - this.startedAt) / 1000) * RATE_PER_SECOND) - this.launched;
    // Asks the node could not take in time are skipped, not queued: the load stays steady, the figure shows the shortfall.
    const launching = Math.min(due, MAX_IN_FLIGHT - this.inFlight);
    this.launched += Math.max(due, 0);
    for (let i = 0; i < launching; i++) this.launch(this.launched - i);
  }

  private launch(sequence: number): void {
    const { id, command } = nextCommand(sequence);
    this.inFlight++;
    this.runtime.ask('counter', id, command).then(
      () => this.completed++,
      (error: unknown) => {
        if (this.failed++ < 3) console.error('ask failed', error);
      },
    ).finally(() => {
      if (--this.inFlight === 0) for (const resolve of this.drained.splice(0)) resolve();
    });
  }

  /** Stops launching and waits for the asks in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }
}

/** Counts the sweeper reports through its debug log line. */
function purgeCounter(): { logger: RuntimeLogger; take: () => SweepCounts } {
  let purged: SweepCounts = { journal: 0, outbox: 0, commands: 0 };
  const logger: RuntimeLogger = {
    debug: (fields, message) => {
      if (message !== 'retention sweep') return;
      const counts = fields as SweepCounts;
      purged = { journal: purged.journal + counts.journal, outbox: purged.outbox + counts.outbox, commands: purged.commands + counts.commands };
    },
    info: () => undefined,
    warn: (fields, message) => console.error('warn', message, fields),
    error: (fields, message) => console.error('error', message, fields),
  };
  return {
    logger,
    take: () => {
      const taken = purged;
      purged = { journal: 0, outbox: 0, commands: 0 };
      return taken;
    },
  };
}

async function rowCount(monitor: Client, table: string): Promise<number> {
  return Number((await monitor.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const monitor = new Client({ connectionString: database.url });
  await monitor.connect();
  // The deletes only free space for reuse once VACUUM has passed; a server with autovacuum off (some test servers)
  // gets the same treatment from this script, once a minute like autovacuum's default naptime.
  const autovacuum = (await monitor.query('SHOW autovacuum')).rows[0].autovacuum === 'on';
  const runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 8, applicationName: 'agentrt-soak' });
  const purges = purgeCounter();
  const options = {
    ...defaultRuntimeOptions(),
    shardCount: 64,
    snapshotEvery: 10,
    retentionWindowMs: WINDOW_MS,
    retentionIntervalMs: 10_000,
    retentionBatchSize: 1000,
  };
  const runtime = await ActorRuntime.start({
    database: runtimeDatabase,
    bus: new MemoryBus(),
    leases: new MemoryLeaseProvider(database.url),
    publisher: new MemoryEventPublisher(),
    kinds: [counterKind],
    options,
    logger: purges.logger,
  });
  const load = new PacedLoad(runtime);
  const figures: MinuteFigures[] = [];
  const startedAt = Date.now();
  let completedBefore = 0;
  try {
    console.log(JSON.stringify({ minutes: MINUTES, ratePerSecond: RATE_PER_SECOND, actors: ACTORS, retentionWindowMs: WINDOW_MS, snapshotEvery: options.snapshotEvery, autovacuum, vacuumBySoak: !autovacuum }));
    for (let minute = 1; minute <= MINUTES; minute++) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + minute * MINUTE_MS - Date.now())));
      const completed = load.completed;
      if (!autovacuum) await monitor.query(`VACUUM ${RUNTIME_TABLES.join(', ')}`);
      const line: MinuteFigures = {
        minute,
        databaseBytes: Number((await monitor.query('SELECT pg_database_size(current_database()) AS bytes')).rows[0].bytes),
        runtimeTableBytes: Number(
          (await monitor.query('SELECT sum(pg_total_relation_size(t::regclass)) AS bytes FROM unnest($1::text[]) AS t', [RUNTIME_TABLES])).rows[0].bytes,
        ),
        journalRows: await rowCount(monitor, 'actor_journal'),
        outboxRows: await rowCount(monitor, 'actor_outbox'),
        commandRows: await rowCount(monitor, 'actor_commands'),
        turnsPerSecond: Math.round((completed - completedBefore) / (MINUTE_MS / 1000)),
        purged: purges.take(),
        failedAsks: load.failed,
      };
      completedBefore = completed;
      figures.push(line);
      console.log(JSON.stringify(line));
    }
    const baseline = figures.find((line) => line.minute === BASELINE_MINUTE)!;
    const last = figures[figures.length - 1];
    console.log(
      JSON.stringify({
        summary: true,
        baselineMinute: baseline.minute,
        lastMinute: last.minute,
        databaseBytesAtBaseline: baseline.databaseBytes,
        databaseBytesAtEnd: last.databaseBytes,
        databaseGrowthBytes: last.databaseBytes - baseline.databaseBytes,
        databaseGrowthPercent: Number((((last.databaseBytes - baseline.databaseBytes) / baseline.databaseBytes) * 100).toFixed(2)),
        asksCompleted: load.completed,
        failedAsks: load.failed,
      }),
    );
  } finally {
    await load.stop();
    await runtime.stop();
    await monitor.end();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
