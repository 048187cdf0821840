// Objectives benchmark (issue 9 item 11): prints JSON lines of figures, asserts
// nothing. One node in this process (the real HTTP API and the actor runtime
// over a fresh Postgres database, in-process bus) with the builtin/scripted
// model; a driver child process (this file, forked with DRIVER=1) plays the
// outsides, so its CPU is not the node's: the API client creating objectives
// and watching them finish, and the loopback HTTP tool server:
// 1. throughput: objectives created over HTTP with OBJECTIVES_IN_FLIGHT in
//    flight, each calling the tool once and answering (USER_MESSAGE,
//    ASSISTANT_MESSAGE, TOOL_CALLED, TOOL_RESULT, ASSISTANT_MESSAGE, FINALIZED
//    and the status changes), measured from the POST to COMPLETED in the read
//    model; with the runtime's turn overhead (agentrt_actor_turn_duration_seconds);
//    then the turn overhead again below saturation: objectives started at a
//    fixed LIGHT_PER_SECOND whatever their completions (open loop; a closed
//    loop of a few in flight runs as fast as the box goes, and kept the node
//    three quarters busy once objectives got cheap), beside its floor on this
//    box at that moment (round-trip-ceiling.ts);
// 2. storage: STORAGE_OBJECTIVES objectives of STORAGE_TURNS model turns, each
//    turn calling a tool whose result is 64 KiB of JSON (the most a result
//    keeps), and the bytes they wrote (journal, snapshots, outbox payloads,
//    objective_events rows: the JSON text of each, and what Postgres stored
//    after compressing it) beside their conversation (the text of its
//    messages, tool arguments and results);
// 3. memory: APPROVALS objectives left awaiting approval, the node's heap and
//    RSS once all wait, and again once their actors are passivated.
// Run with `npm run bench:objectives` (APPROVALS=10000 for a quicker run;
// PROFILE=<file> writes a CPU profile of the throughput phase).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Agent, request } from 'undici';
import { register } from 'prom-client';
import { countSnapshotBytes, objectiveStorage, toolTurnsScript } from '../test/support/objective-storage';
import { startBenchNode } from './support/bench-node';
import { startDriverProcess } from './support/driver-process';
import { analyzeAsAutovacuumWould } from './support/table-statistics';
import { probeRoundTrips } from './support/round-trip-ceiling';
import { postgresBackendCpu } from './support/postgres-backend-cpu';
import { startProfiler } from './support/cpu-profiler';

const OBJECTIVES_IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 32);
const DURATION_MS = Number(process.env.DURATION_MS ?? 15_000);
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 3_000);
const LIGHT_PER_SECOND = Number(process.env.LIGHT_PER_SECOND ?? 100);
const LIGHT_DURATION_MS = 5_000;
const APPROVALS = Number(process.env.APPROVALS ?? 100_000);
const APPROVAL_CREATORS = 64;
const PASSIVATE_AFTER_MS = 20_000;
const STORAGE_OBJECTIVES = Number(process.env.STORAGE_OBJECTIVES ?? 4);
const STORAGE_TURNS = Number(process.env.STORAGE_TURNS ?? 30);
/** A tool result of this size: TOOL_RESULT_MAX_BYTES, the most a result keeps. */
const BIG_RESULT_BYTES = 64 * 1024;

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
/** agentrt_actor_active summed over its kinds; null when the gauge is not registered. */
async function activeActorsOfAllKinds(): Promise<number | null> {
  const values = (await register.getSingleMetric('agentrt_actor_active')?.get())?.values;
  return values ? values.reduce((sum, value) => sum + value.value, 0) : null;
}

function log(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * A JSON answer of `bytes` bytes that compresses as an API's answer does: records
 * of ids, numbers and words (a pseudo-random sequence, the same for every run).
 */
function bigJsonResult(bytes: number): string {
  const words = ['order', 'shipped', 'pending', 'refund', 'customer', 'invoice', 'warehouse', 'priority', 'express', 'returned', 'Berlin', 'Lyon', 'Osaka'];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const records: string[] = [];
  let size = 2;
  for (let index = 0; size < bytes - 200; index++) {
    const record = JSON.stringify({
      id: `ord_${next().toString(36)}`, amountCents: next() % 100_000, status: words[next() % 4],
      note: Array.from({ length: 6 }, () => words[next() % words.length]).join(' '), city: words[10 + (next() % 3)],
    });
    records.push(record);
    size += record.length + 1;
  }
  return `[${records.join(',')}]`.padEnd(bytes, ' ');
}

async function startToolServer(): Promise<{ url: string; close(): Promise<void> }> {
  const big = bigJsonResult(BIG_RESULT_BYTES);
  const server = http.createServer((incoming, response) => {
    incoming.resume();
    const body = incoming.url?.startsWith('/big') ? big : '{"answer":42}';
    incoming.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Sums the turn-duration histogram into percentiles (bucket upper bounds, ms). */
async function turnOverhead(): Promise<{ turns: number; p50Ms: number | null; p99Ms: number | null; shareWithin2Ms: number }> {
  const metric = register.getSingleMetric('agentrt_actor_turn_duration_seconds');
  if (!metric) return { turns: 0, p50Ms: null, p99Ms: null, shareWithin2Ms: 0 };
  const values = (await metric.get()).values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
  const buckets = values.filter((value) => value.metricName?.endsWith('_bucket') && value.labels.kind === 'objective');
  const total = values.find((value) => value.metricName?.endsWith('_count') && value.labels.kind === 'objective')?.value ?? 0;
  const at = (share: number) => {
    const wanted = total * share;
    const sorted = buckets.map((bucket) => ({ le: Number(bucket.labels.le), count: bucket.value })).sort((a, b) => a.le - b.le);
    return (sorted.find((bucket) => bucket.count >= wanted)?.le ?? Infinity) * 1000;
  };
  // The share of turns in the buckets up to 2 ms: the median is under the target when it is above one half.
  const within2Ms = buckets.find((bucket) => Number(bucket.labels.le) === 0.002)?.value ?? 0;
  return { turns: total, p50Ms: at(0.5), p99Ms: at(0.99), shareWithin2Ms: total ? Number((within2Ms / total).toFixed(3)) : 0 };
}

/** Counts the statements every pg client of the process sends, by their first 60 characters. */
function countQueries(): { stop(): { total: number; top: Array<[string, number]> } } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const counts = new Map<string, number>();
  prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    // Counted by the whole text, shortened once at the end: this runs in the node measured, on every statement.
    const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text ?? '?';
    counts.set(text, (counts.get(text) ?? 0) + 1);
    return original.call(this, config, ...rest);
  };
  return {
    stop() {
      prototype.query = original;
      const byStart = new Map<string, number>();
      for (const [text, count] of counts) {
        const key = text.replace(/\s+/g, ' ').trim().slice(0, 60);
        byStart.set(key, (byStart.get(key) ?? 0) + count);
      }
      return { total: [...byStart.values()].reduce((sum, count) => sum + count, 0), top: [...byStart].sort((a, b) => b[1] - a[1]).slice(0, 16) };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The driver (child process): the API client and the tool server.

type DriverRequest =
  | { op: 'configure'; apiUrl: string; token: string; workspaceId: string; agentId: string; databaseUrl: string }
  | { op: 'run'; durationMs: number; inFlight?: number }
  | { op: 'runAtRate'; durationMs: number; perSecond: number }
  | { op: 'approvals'; count: number }
  | { op: 'storage'; agentId: string; count: number; turns: number };

async function driver(): Promise<void> {
  const tools = await startToolServer();
  const dispatcher = new Agent({ connections: APPROVAL_CREATORS, keepAliveTimeout: 60_000 });
  let settings: Extract<DriverRequest, { op: 'configure' }>;
  let database: pg.Client;
  const create = async (initialMessage: string, agentId = settings.agentId) => {
    const response = await request(`${settings.apiUrl}/v1/workspaces/${settings.workspaceId}/objectives`, {
      method: 'POST',
      headers: { authorization: `Bearer ${settings.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId, initialMessage }),
      dispatcher,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`POST objectives: ${response.statusCode} ${text}`);
    return JSON.parse(text) as { metadata: { id: string } };
  };

  // Completion is read from the read model in one query per poll for every objective in flight.
  const waiting = new Map<string, () => void>();
  let polling = true;
  const poller = async () => {
    while (polling) {
      if (waiting.size) {
        const { rows } = await database.query<{ id: string }>(
          "SELECT id FROM objectives WHERE id = ANY($1) AND status IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')",
          [[...waiting.keys()]],
        );
        for (const row of rows) waiting.get(row.id)?.();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const runOne = async (latencies: number[]) => {
    const startedAt = process.hrtime.bigint();
    const objective = await create('CALL lookup {"q":"meaning"}\nSAY done');
    await new Promise<void>((resolve) => waiting.set(objective.metadata.id, resolve));
    waiting.delete(objective.metadata.id);
    latencies.push(Number(process.hrtime.bigint() - startedAt) / 1e6);
  };
  const run = async (durationMs: number, inFlight = OBJECTIVES_IN_FLIGHT) => {
    const latencies: number[] = [];
    const deadline = Date.now() + durationMs;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (Date.now() < deadline) await runOne(latencies);
    }));
    return latencies;
  };
  /** Starts perSecond objectives a second on a fixed timetable (open loop) and waits for them all. */
  const runAtRate = async (durationMs: number, perSecond: number) => {
    const latencies: number[] = [];
    const running: Array<Promise<void>> = [];
    const started = performance.now();
    for (let index = 0; index < (durationMs / 1000) * perSecond; index++) {
      const due = started + (index * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      running.push(runOne(latencies));
    }
    await Promise.all(running);
    return latencies;
  };
  const approvals = async (count: number) => {
    let claimed = 0;
    let created = 0;
    const progressEvery = Math.max(1000, Math.floor(count / 20));
    const started = Date.now();
    await Promise.all(Array.from({ length: APPROVAL_CREATORS }, async () => {
      while (claimed < count) {
        claimed += 1;
        await create('CALL risky {"q":"drop"}\nSAY approved');
        created += 1;
        if (created % progressEvery === 0) log({ progress: 'awaiting-approval objectives created', count: created, elapsedS: Math.round((Date.now() - started) / 1000) });
      }
    }));
    return created;
  };

  /** Objectives of `turns` model turns, one 64 KiB tool result each (a SLEEP 0 line ends a turn's calls), run to their end. */
  const storage = async (agentId: string, count: number, turns: number) => {
    const script = toolTurnsScript('big', turns);
    return Promise.all(Array.from({ length: count }, async () => {
      const objective = await create(script, agentId);
      await new Promise<void>((resolve) => waiting.set(objective.metadata.id, resolve));
      waiting.delete(objective.metadata.id);
      return objective.metadata.id;
    }));
  };

  process.on('message', (message: { id: number; request: DriverRequest }) => {
    const reply = (result: unknown) => process.send!({ id: message.id, result });
    const { request: call } = message;
    switch (call.op) {
      case 'configure':
        settings = call;
        database = new pg.Client({ connectionString: call.databaseUrl });
        void database.connect().then(() => {
          void poller();
          reply(true);
        });
        return;
      case 'run':
        void run(call.durationMs, call.inFlight).then(reply);
        return;
      case 'runAtRate':
        void runAtRate(call.durationMs, call.perSecond).then(reply);
        return;
      case 'approvals':
        void approvals(call.count).then(reply);
        return;
      case 'storage':
        void storage(call.agentId, call.count, call.turns).then(reply);
        return;
    }
  });
  process.on('disconnect', () => {
    polling = false;
    void Promise.allSettled([database?.end(), dispatcher.close(), tools.close()]).finally(() => process.exit(0));
  });
  process.send!({ ready: true, toolUrl: tools.url });
}

// ---------------------------------------------------------------------------------------------
// The node side (this process).

async function main(): Promise<void> {
  const driverProcess = startDriverProcess<DriverRequest, { ready: true; toolUrl: string }>(__filename);
  const { toolUrl } = await driverProcess.ready;
  const api = await startBenchNode({
    runtime: { shardCount: 64, passivateAfterMs: PASSIVATE_AFTER_MS, outboxPollMs: 1000 },
    env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' },
  });
  try {
    const account = await api.bootstrap('bench-objectives');
    const headers = { authorization: `Bearer ${account.globalApiKey.token}`, 'content-type': 'application/json' };
    const ws = account.workspaceId;
    const post = async (path: string, body: unknown) => {
      const response = await request(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`POST ${path}: ${response.statusCode} ${text}`);
      return JSON.parse(text) as { metadata: { id: string } };
    };
    const agent = await post(`/v1/workspaces/${ws}/agents`, { metadata: { name: 'bench-agent' } });
    const variation = await post(`/v1/workspaces/${ws}/agents/${agent.metadata.id}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You help.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    const lookup = await post(`/v1/workspaces/${ws}/tools`, { metadata: { name: 'lookup' }, spec: { description: 'Looks up', http: { url: `${toolUrl}/lookup`, method: 'POST' } } });
    const risky = await post(`/v1/workspaces/${ws}/tools`, { metadata: { name: 'risky' }, spec: { description: 'Needs approval', requiresApproval: true, http: { url: `${toolUrl}/risky`, method: 'POST' } } });
    for (const tool of [lookup, risky]) {
      await post(`/v1/workspaces/${ws}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
    }
    const storageAgent = await post(`/v1/workspaces/${ws}/agents`, { metadata: { name: 'bench-storage-agent' } });
    const storageVariation = await post(`/v1/workspaces/${ws}/agents/${storageAgent.metadata.id}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You read orders.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    const big = await post(`/v1/workspaces/${ws}/tools`, { metadata: { name: 'big' }, spec: { description: 'Lists orders', http: { url: `${toolUrl}/big`, method: 'POST' } } });
    await post(`/v1/workspaces/${ws}/agents/${storageAgent.metadata.id}/variations/${storageVariation.metadata.id}/assignments`, { toolId: big.metadata.id });
    const databaseUrl = api.database.url;
    await driverProcess.call({ op: 'configure', apiUrl: api.url, token: account.globalApiKey.token, workspaceId: ws, agentId: agent.metadata.id, databaseUrl });

    // Warm-up: connections, prepared statements, JIT.
    await driverProcess.call({ op: 'run', durationMs: WARMUP_MS });
    await analyzeAsAutovacuumWould(api.dataSource);
    register.getSingleMetric('agentrt_actor_turn_duration_seconds')?.reset();

    const queries = countQueries();
    const postgresCpu = await postgresBackendCpu(databaseUrl);
    const postgresCpuStart = postgresCpu.seconds();
    const cpuStart = process.cpuUsage();
    const profiler = process.env.PROFILE ? await startProfiler() : null;
    const started = Date.now();
    const latencies = await driverProcess.call<number[]>({ op: 'run', durationMs: DURATION_MS });
    const elapsedMs = Date.now() - started;
    if (profiler) await profiler.stopInto(process.env.PROFILE!);
    const cpu = process.cpuUsage(cpuStart);
    const postgresCpuSeconds = postgresCpu.seconds() - postgresCpuStart;
    const counted = queries.stop();
    const [{ events }] = await api.dataSource.query(
      'SELECT round(avg(c), 1)::float AS events FROM (SELECT count(*) AS c FROM objective_events e JOIN objectives o ON o.id = e.objective_id WHERE o.workspace_id = $1 GROUP BY e.objective_id) per',
      [ws],
    );
    latencies.sort((a, b) => a - b);
    log({
      bench: 'objectives-throughput',
      inFlight: OBJECTIVES_IN_FLIGHT,
      completed: latencies.length,
      objectivesPerSecond: Math.round((latencies.length / elapsedMs) * 1000),
      endToEndP50Ms: percentile(latencies, 50),
      endToEndP99Ms: percentile(latencies, 99),
      eventsPerObjective: events,
      turnOverhead: await turnOverhead(),
      nodeCpuMsPerObjective: Number(((cpu.user + cpu.system) / 1000 / latencies.length).toFixed(1)),
      postgresCpuMsPerObjective: Number(((postgresCpuSeconds * 1000) / latencies.length).toFixed(1)),
      queriesPerObjective: Number((counted.total / latencies.length).toFixed(1)),
      topQueriesPerObjective: counted.top.map(([text, count]) => `${(count / latencies.length).toFixed(2)} ${text}`),
      target: '>= 300 objectives/s; turn overhead median < 2 ms',
    });

    // The turn overhead below saturation: at 32 in flight both cores are busy, and a turn's
    // commit waits for the event loop and for the batch ahead of it as much as for its own write.
    register.getSingleMetric('agentrt_actor_turn_duration_seconds')?.reset();
    const ceiling = await probeRoundTrips(databaseUrl);
    const lightCpuStart = process.cpuUsage();
    const eventLoopStart = performance.eventLoopUtilization();
    const light = await driverProcess.call<number[]>({ op: 'runAtRate', durationMs: LIGHT_DURATION_MS, perSecond: LIGHT_PER_SECOND });
    const eventLoopBusy = performance.eventLoopUtilization(eventLoopStart).utilization;
    const lightCpu = process.cpuUsage(lightCpuStart);
    const roundTrips = await ceiling.stop();
    light.sort((a, b) => a - b);
    log({
      bench: 'objectives-turn-overhead-light-load',
      objectivesPerSecond: LIGHT_PER_SECOND,
      completed: light.length,
      nodeEventLoopBusy: Number(eventLoopBusy.toFixed(2)),
      nodeCpuMsPerObjective: Number(((lightCpu.user + lightCpu.system) / 1000 / light.length).toFixed(1)),
      endToEndP50Ms: percentile(light, 50),
      turnOverhead: await turnOverhead(),
      ceilingMs: { ...roundTrips, note: 'round trips on a connection of this process meanwhile: bare SELECT 1, one-row autocommit INSERT (a turn cannot commit faster)' },
      target: 'turn overhead median < 2 ms',
    });

    // Storage: long conversations with large tool results, and what they wrote.
    const snapshots = countSnapshotBytes();
    const storageIds = await driverProcess.call<string[]>({ op: 'storage', agentId: storageAgent.metadata.id, count: STORAGE_OBJECTIVES, turns: STORAGE_TURNS });
    const storage = await objectiveStorage(api.dataSource, storageIds, snapshots.stop());
    log({
      bench: 'objectives-storage', turns: STORAGE_TURNS, toolResultBytes: BIG_RESULT_BYTES, ...storage,
      bytesWrittenPerTurn: Math.round(storage.bytesWrittenPerObjective.total / STORAGE_TURNS),
      target: 'bytes written <= 3x the conversation (writtenToConversation: jsonb before compression; storedToConversation: after)',
    });

    // Memory: objectives waiting for approval.
    global.gc?.();
    const before = process.memoryUsage();
    const approvalsStarted = Date.now();
    const created = await driverProcess.call<number>({ op: 'approvals', count: APPROVALS });
    const awaiting = async () => {
      const [{ count }] = await api.dataSource.query("SELECT count(*)::int AS count FROM objectives WHERE workspace_id = $1 AND status = 'OBJECTIVE_STATUS_AWAITING_APPROVAL'", [ws]);
      return count as number;
    };
    while ((await awaiting()) < created) await new Promise((resolve) => setTimeout(resolve, 500));
    global.gc?.();
    const waitingActive = process.memoryUsage();
    const activeActors = await activeActorsOfAllKinds();
    await new Promise((resolve) => setTimeout(resolve, PASSIVATE_AFTER_MS + 5_000));
    global.gc?.();
    const passivated = process.memoryUsage();
    const activeAfter = await activeActorsOfAllKinds();
    log({
      bench: 'objectives-awaiting-approval',
      objectives: created,
      createdPerSecond: Math.round((created / (Date.now() - approvalsStarted - PASSIVATE_AFTER_MS - 5_000)) * 1000),
      gcExposed: typeof global.gc === 'function',
      whileActive: { activeActors, heapUsedMiB: mib(waitingActive.heapUsed), heapGrowthMiB: mib(waitingActive.heapUsed - before.heapUsed), rssMiB: mib(waitingActive.rss) },
      afterPassivation: { activeActors: activeAfter, heapUsedMiB: mib(passivated.heapUsed), heapGrowthMiB: mib(passivated.heapUsed - before.heapUsed), rssMiB: mib(passivated.rss) },
      target: '100,000 awaiting approval in < 1 GiB',
    });
  } finally {
    driverProcess.child.disconnect();
    await api.close();
  }
}

(process.env.DRIVER ? driver() : main()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
