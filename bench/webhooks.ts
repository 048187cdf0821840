// Webhook delivery benchmark (issue 10 item 8): prints JSON lines of figures,
// asserts nothing. One node in this process, in cluster mode (the production
// path): the benches' node (bench/support/bench-node.ts: the real services,
// actor kinds and consumers) on a fresh Postgres database, NATS JetStream with a
// unique subject prefix and event stream. A driver child process (this file,
// forked with DRIVER=1) plays both outsides, so its CPU is not the node's:
// it publishes well-formed webhook envelopes to OBJECTIVE_EVENTS with their
// event id as message id, as the runtime's outbox relay does, for AGENTS
// agents whose webhookEventsUrl points at its loopback receiver, round-robin
// over their seeded objectives (rows in `objectives`, which webhook_deliveries
// references), each objective's events numbered 1, 2, 3… The objective loop
// does not run: the delivery path alone is measured.
// 1. throughput: the stream kept BACKLOG events ahead of the receiver for
//    DURATION_MS after WARMUP_MS; deliveries COMPLETED in webhook_deliveries
//    per second, receiver hits per second, node CPU, statements and actor
//    turns per delivery; then the same with one agent (a single endpoint);
// 2. latency: a fixed RATE events/s for LATENCY_MS; latency = arrival at the
//    receiver minus the envelope's `timestamp`, set just before the publish.
// Run with `npm run bench:webhooks` (PROFILE=<file> writes a CPU profile of
// the many-endpoint throughput phase, HEAP_PROFILE=<file> a sampling heap
// profile of the latency window's allocations; AGENTS, OBJECTIVES_PER_AGENT,
// DURATION_MS, SINGLE_DURATION_MS, WARMUP_MS, BACKLOG, RATE, LATENCY_MS).
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { register } from 'prom-client';
import { ulid } from 'ulid';
import { defaultRuntimeOptions } from '../actors';
import { webhookIntakeDurableName } from '../actors/kinds/webhook-intake';
import { newId } from '../src/ids';
import { startBenchNode, type BenchNode } from './support/bench-node';
import { startDriverProcess } from './support/driver-process';
import { analyzeAsAutovacuumWould } from './support/table-statistics';
import { startProfiler } from './support/cpu-profiler';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const STREAM = 'OBJECTIVE_EVENTS';
const AGENTS = Number(process.env.AGENTS ?? 50);
const OBJECTIVES_PER_AGENT = Number(process.env.OBJECTIVES_PER_AGENT ?? 40);
const SINGLE_OBJECTIVES = Number(process.env.SINGLE_OBJECTIVES ?? 200);
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 5000);
const DURATION_MS = Number(process.env.DURATION_MS ?? 20_000);
const SINGLE_DURATION_MS = Number(process.env.SINGLE_DURATION_MS ?? 10_000);
const BACKLOG = Number(process.env.BACKLOG ?? 4000);
const RATE = Number(process.env.RATE ?? 1000);
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 15_000);
const EVENT_TYPE = 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE';

/** One seeded objective, as the driver needs it to build its envelopes. */
interface Target {
  group: 'many' | 'single';
  accountId: string;
  workspaceId: string;
  profileId: string;
  agentId: string;
  objectiveId: string;
}

type DriverRequest =
  | { op: 'start' }
  | { op: 'targets'; targets: Target[] }
  | { op: 'saturate'; group: Target['group']; backlog: number }
  | { op: 'paced'; group: Target['group']; rate: number; durationMs: number; record: boolean }
  | { op: 'stop' }
  | { op: 'stats' }
  | { op: 'latencies' };

interface DriverStats { published: number; received: number; distinctIds: number; publishErrors: number }

// ---------------------------------------------------------------------------------------------
// The driver (child process): publisher and receiver.

async function driver(): Promise<void> {
  const received = { count: 0 };
  const ids = new Set<string>();
  /** Events published from this wall-clock time on are timed (0: none). */
  let recordFrom = 0;
  let latencies: number[] = [];
  const wallNow = () => performance.timeOrigin + performance.now();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const arrivedAt = wallNow();
      received.count += 1;
      ids.add(String(request.headers['webhook-id']));
      if (recordFrom) {
        const publishedAt = Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string }).timestamp);
        if (publishedAt >= recordFrom) latencies.push(arrivedAt - publishedAt);
      }
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const connection = await connect({ servers: NATS_URL, name: 'bench-webhooks-driver' });
  const js: JetStreamClient = jetstream(connection, { timeout: 10_000 });
  let targets: Target[] = [];
  const sequences = new Map<string, number>();
  let published = 0;
  let publishErrors = 0;
  let running: Promise<void> | null = null;
  let stopping = false;
  const cursor = { many: 0, single: 0 };

  /** Publishes the next event of the group's next objective (round-robin); the timestamp is taken just before. */
  function publishNext(group: Target['group'], list: Target[]): Promise<void> {
    const target = list[cursor[group]++ % list.length];
    const sequence = (sequences.get(target.objectiveId) ?? 0) + 1;
    sequences.set(target.objectiveId, sequence);
    const eventId = newId('objectiveEvent');
    const timestamp = new Date().toISOString();
    const objective = {
      id: target.objectiveId, accountId: target.accountId, workspaceId: target.workspaceId, profileId: target.profileId,
      externalId: 'bench', labels: { bench: 'webhooks' }, createdAt: timestamp,
    };
    const envelope = {
      timestamp,
      type: 'objective_event.assistant_message',
      data: {
        agent: { id: target.agentId, accountId: target.accountId, workspaceId: target.workspaceId },
        agentVariation: { id: 'agentvar_bench' },
        objective,
        objectiveEvent: {
          metadata: { id: eventId, accountId: target.accountId, workspaceId: target.workspaceId, profileId: target.profileId, createdAt: timestamp },
          sequence,
          data: { type: EVENT_TYPE, assistantMessage: { content: 'The answer is 42.' } },
          info: { objective },
        },
      },
    };
    const subject = `objective_events.${target.accountId}.${target.workspaceId}.${target.agentId}.${target.objectiveId}.assistant_message`;
    published += 1;
    return js.publish(subject, JSON.stringify(envelope), { msgID: eventId }).then(() => undefined, () => {
      publishErrors += 1;
    });
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function saturate(group: Target['group'], backlog: number): Promise<void> {
    const list = targets.filter((target) => target.group === group);
    while (!stopping) {
      const room = backlog - (published - received.count);
      if (room <= 0) {
        await sleep(2);
        continue;
      }
      const batch: Array<Promise<void>> = [];
      for (let i = 0; i < Math.min(room, 500); i += 1) batch.push(publishNext(group, list));
      await Promise.all(batch);
    }
  }

  async function paced(group: Target['group'], rate: number, durationMs: number): Promise<void> {
    const list = targets.filter((target) => target.group === group);
    const started = performance.now();
    let sent = 0;
    const pending = new Set<Promise<void>>();
    for (;;) {
      const elapsed = performance.now() - started;
      if (elapsed >= durationMs || stopping) break;
      const due = Math.floor((elapsed / 1000) * rate);
      while (sent < due) {
        const work = publishNext(group, list);
        pending.add(work);
        void work.finally(() => pending.delete(work));
        sent += 1;
      }
      await sleep(1);
    }
    await Promise.all(pending);
  }

  process.on('message', (message: { id: number; request: DriverRequest }) => {
    const reply = (result: unknown) => process.send!({ id: message.id, result });
    const { request } = message;
    switch (request.op) {
      case 'start':
        return reply({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      case 'targets':
        targets = request.targets;
        return reply(true);
      case 'saturate':
        stopping = false;
        running = saturate(request.group, request.backlog);
        return reply(true);
      case 'paced':
        stopping = false;
        if (request.record) {
          recordFrom = Date.now();
          latencies = [];
        }
        void paced(request.group, request.rate, request.durationMs).then(() => reply(true));
        return;
      case 'stop':
        stopping = true;
        void (running ?? Promise.resolve()).then(() => reply(true));
        return;
      case 'stats':
        return reply({ published, received: received.count, distinctIds: ids.size, publishErrors } satisfies DriverStats);
      case 'latencies':
        recordFrom = 0;
        return reply(latencies);
    }
  });
  process.on('disconnect', () => {
    void connection.close().finally(() => process.exit(0));
    server.closeAllConnections();
    server.close();
  });
  process.send!({ ready: true });
}

// ---------------------------------------------------------------------------------------------
// The node side (this process).

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(2));
}

function log(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the statements every pg client of the process sends, by their first 70 characters. */
function countQueries(): { stop(): { total: number; top: Array<[string, number]> } } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const counts = new Map<string, number>();
  prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text ?? '?';
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 70);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.call(this, config, ...rest);
  };
  return {
    stop() {
      prototype.query = original;
      return { total: [...counts.values()].reduce((sum, count) => sum + count, 0), top: [...counts].sort((a, b) => b[1] - a[1]).slice(0, 15) };
    },
  };
}

/**
 * A sampling heap profile (Chrome's .heapprofile) of every allocation, those the collector took back included: the
 * latency tail follows the node's major GCs, so what the path allocates, not only what it keeps, is the figure.
 */
async function startHeapProfiler(): Promise<{ stopInto(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    async stopInto(file) {
      const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: unknown };
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** Counter and histogram-count values of the runtime's metrics for the webhook endpoint kind. */
async function actorCounters(): Promise<{ turns: number; activations: number; passivations: number; asks: number }> {
  const read = async (name: string, suffix: string, label: Record<string, string> = { kind: 'webhook_endpoint' }) => {
    const metric = register.getSingleMetric(name);
    if (!metric) return 0;
    const values = (await metric.get()).values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
    return values
      .filter((value) => (suffix ? value.metricName?.endsWith(suffix) : true) && Object.entries(label).every(([key, wanted]) => value.labels[key] === wanted))
      .reduce((sum, value) => sum + value.value, 0);
  };
  return {
    turns: await read('agentrt_actor_turn_duration_seconds', '_count'),
    activations: await read('agentrt_actor_activations_total', ''),
    passivations: await read('agentrt_actor_passivations_total', ''),
    asks: await read('agentrt_actor_ask_duration_seconds', '_count'),
  };
}

/** CPU seconds so far per process group, from /proc (Linux; empty elsewhere): where the box's cores go. */
function boxCpu(driverPid: number | undefined): Record<string, number> {
  const groups: Record<string, number> = {};
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return groups;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
      const group = Number(pid) === process.pid ? 'node' : Number(pid) === driverPid ? 'driver' : /^postgres/.test(comm) ? 'postgres' : /nats/.test(comm) ? 'nats' : 'other';
      groups[group] = (groups[group] ?? 0) + seconds;
    } catch {
      // the process ended meanwhile
    }
  }
  return groups;
}

/** Cores used per group between two boxCpu readings. */
function coresBetween(before: Record<string, number>, after: Record<string, number>, elapsedMs: number): Record<string, number> {
  // 'other' holds processes that ended or started in between too: a rough figure.
  return Object.fromEntries(Object.keys(after).map((group) => [group, Number((Math.max(0, after[group] - (before[group] ?? 0)) / (elapsedMs / 1000)).toFixed(2))]));
}

async function streamExists(name: string): Promise<boolean> {
  const connection = await connect({ servers: NATS_URL });
  try {
    return await (await jetstreamManager(connection)).streams.info(name).then(() => true, () => false);
  } finally {
    await connection.close();
  }
}

async function cleanUpNats(streams: string[], consumer: { stream: string; name: string } | null, purge: { stream: string; filter: string } | null): Promise<void> {
  const connection = await connect({ servers: NATS_URL });
  try {
    const manager = await jetstreamManager(connection);
    if (consumer) await manager.consumers.delete(consumer.stream, consumer.name).catch(() => false);
    if (purge) await manager.streams.purge(purge.stream, { filter: purge.filter }).catch(() => undefined);
    for (const name of streams) await manager.streams.delete(name).catch(() => false);
  } finally {
    await connection.close();
  }
}

async function main(): Promise<void> {
  const objectiveStreamExisted = await streamExists(STREAM);
  const suffix = ulid().toLowerCase();
  const subjectPrefix = `bench_wh_${suffix}`;
  const eventStream = `BENCH_WH_${suffix.toUpperCase()}`;
  const drive = startDriverProcess<DriverRequest>(__filename);
  let node: BenchNode | undefined;
  let benchAccountId: string | undefined;
  try {
    node = await startBenchNode({
      logLevel: process.env.LOG_LEVEL ?? 'warn',
      logDestination: process.stderr,
      natsUrl: NATS_URL,
      // A node polls its outbox every second; the test node's 50 ms would add its queries to every figure.
      runtime: { shardCount: 64, subjectPrefix, eventStream, outboxPollMs: defaultRuntimeOptions().outboxPollMs },
      env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' },
    });
    const { dataSource, services, url: apiUrl } = node;
    await drive.ready;
    const { url: receiverUrl } = await drive.call<{ url: string }>({ op: 'start' });

    // Agents with their webhook URL (over the API), objectives seeded as rows.
    const account = await services.accounts.bootstrap({ accountName: 'bench-webhooks', email: 'bench-webhooks@example.com' });
    benchAccountId = account.accountId;
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${apiUrl}${path}`, {
        method: 'POST', headers: { authorization: `Bearer ${account.globalApiKey.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${text}`);
      return JSON.parse(text) as { metadata: { id: string } };
    };
    const targets: Target[] = [];
    const seed = async (group: Target['group'], index: number, objectives: number) => {
      const agent = await post(`/v1/workspaces/${account.workspaceId}/agents`, {
        metadata: { name: `bench-${group}-${index}` }, spec: { webhookEventsUrl: `${receiverUrl}/${group}/${index}` },
      });
      for (let i = 0; i < objectives; i += 1) {
        targets.push({ group, accountId: account.accountId, workspaceId: account.workspaceId, profileId: account.profileId, agentId: agent.metadata.id, objectiveId: newId('objective') });
      }
    };
    for (let index = 0; index < AGENTS; index += 1) await seed('many', index, OBJECTIVES_PER_AGENT);
    await seed('single', 0, SINGLE_OBJECTIVES);
    await dataSource.query(
      `INSERT INTO objectives (id, account_id, workspace_id, agent_id, variation_id, profile_id, external_id, labels, status, info)
       SELECT id, $2, $3, agent_id, 'agentvar_bench', $4, 'bench', '{"bench":"webhooks"}', 'OBJECTIVE_STATUS_RUNNING', '{}'
       FROM unnest($1::text[], $5::text[]) AS seeded(id, agent_id)`,
      [targets.map((target) => target.objectiveId), account.accountId, account.workspaceId, account.profileId, targets.map((target) => target.agentId)],
    );
    await drive.call({ op: 'targets', targets });
    const completed = async () => {
      const [{ count }] = await dataSource.query("SELECT count(*)::int AS count FROM webhook_deliveries WHERE status = 'WEBHOOK_DELIVERY_STATUS_COMPLETED'");
      return count as number;
    };
    const drained = async () => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const stats = await drive.call<DriverStats>({ op: 'stats' });
        if (stats.received >= stats.published - stats.publishErrors && (await completed()) >= stats.received) return stats;
        if (Date.now() > deadline) throw new Error(`not drained (was ${STREAM} deleted by another run meanwhile?): ${JSON.stringify(stats)}`);
        await sleep(100);
      }
    };

    /** Saturates one group: warm-up, then the measured window. */
    const throughput = async (group: Target['group'], durationMs: number, profile: string | undefined) => {
      await drive.call({ op: 'saturate', group, backlog: BACKLOG });
      await sleep(WARMUP_MS);
      await analyzeAsAutovacuumWould(dataSource);
      const rowsBefore = await completed();
      const hitsBefore = (await drive.call<DriverStats>({ op: 'stats' })).received;
      const actorsBefore = await actorCounters();
      const queries = countQueries();
      const profiler = profile ? await startProfiler() : null;
      const cpuStart = process.cpuUsage();
      const boxBefore = boxCpu(drive.child.pid);
      const started = performance.now();
      await sleep(durationMs);
      const cpu = process.cpuUsage(cpuStart);
      const elapsedMs = performance.now() - started;
      const boxCores = coresBetween(boxBefore, boxCpu(drive.child.pid), elapsedMs);
      if (profiler) await profiler.stopInto(profile!);
      const counted = queries.stop();
      const rows = (await completed()) - rowsBefore;
      const hits = (await drive.call<DriverStats>({ op: 'stats' })).received - hitsBefore;
      const actorsAfter = await actorCounters();
      await drive.call({ op: 'stop' });
      const stats = await drained();
      const per = (value: number) => Number((value / Math.max(rows, 1)).toFixed(2));
      log({
        bench: `webhooks-throughput-${group === 'many' ? `${AGENTS}-endpoints` : 'single-endpoint'}`,
        endpoints: group === 'many' ? AGENTS : 1,
        objectives: targets.filter((target) => target.group === group).length,
        backlog: BACKLOG,
        measuredMs: Math.round(elapsedMs),
        deliveriesPerSecond: Math.round((rows / elapsedMs) * 1000),
        receiverHitsPerSecond: Math.round((hits / elapsedMs) * 1000),
        nodeCpuMsPerDelivery: Number(((cpu.user + cpu.system) / 1000 / Math.max(rows, 1)).toFixed(3)),
        nodeCpuCores: Number(((cpu.user + cpu.system) / 1000 / elapsedMs).toFixed(2)),
        boxCores,
        statementsPerDelivery: per(counted.total),
        turnsPerDelivery: per(actorsAfter.turns - actorsBefore.turns),
        asksPerDelivery: per(actorsAfter.asks - actorsBefore.asks),
        activationsPerDelivery: per(actorsAfter.activations - actorsBefore.activations),
        passivationsPerDelivery: per(actorsAfter.passivations - actorsBefore.passivations),
        topStatementsPerDelivery: counted.top.map(([text, count]) => `${per(count).toFixed(2)} ${text}`),
        duplicatesAtReceiver: stats.received - stats.distinctIds,
        publishErrors: stats.publishErrors,
        target: '>= 2,000 deliveries/s sustained with their records on one node',
      });
    };

    await throughput('many', DURATION_MS, process.env.PROFILE || undefined);
    await throughput('single', SINGLE_DURATION_MS, undefined);

    // Latency at a fixed rate: a short unrecorded warm-up at the same rate, then the measured window.
    await drive.call({ op: 'paced', group: 'many', rate: RATE, durationMs: 2000, record: false });
    const cpuStart = process.cpuUsage();
    const boxBefore = boxCpu(drive.child.pid);
    const pacedStarted = performance.now();
    const publishedBefore = (await drive.call<DriverStats>({ op: 'stats' })).published;
    const heapProfiler = process.env.HEAP_PROFILE ? await startHeapProfiler() : null;
    await drive.call({ op: 'paced', group: 'many', rate: RATE, durationMs: LATENCY_MS, record: true });
    if (heapProfiler) await heapProfiler.stopInto(process.env.HEAP_PROFILE!);
    const publishedInWindow = (await drive.call<DriverStats>({ op: 'stats' })).published - publishedBefore;
    const pacedMs = performance.now() - pacedStarted;
    const cpu = process.cpuUsage(cpuStart);
    const boxCores = coresBetween(boxBefore, boxCpu(drive.child.pid), pacedMs);
    const stats = await drained();
    const latencies = (await drive.call<number[]>({ op: 'latencies' })).sort((a, b) => a - b);
    log({
      bench: 'webhooks-latency',
      endpoints: AGENTS,
      eventsPerSecond: RATE,
      published: publishedInWindow,
      delivered: latencies.length,
      p50Ms: percentile(latencies, 50),
      p90Ms: percentile(latencies, 90),
      p99Ms: percentile(latencies, 99),
      maxMs: Number((latencies.at(-1) ?? 0).toFixed(2)),
      nodeCpuCores: Number(((cpu.user + cpu.system) / 1000 / pacedMs).toFixed(2)),
      boxCores,
      duplicatesAtReceiver: stats.received - stats.distinctIds,
      measuredFrom: 'the envelope timestamp, taken just before the JetStream publish (the outbox relay\'s publish; the actor commit is earlier still)',
      target: 'p99 from event commit to receiver < 50 ms at 1,000 events/s',
    });
  } finally {
    const runtime = node?.runtime;
    await node?.close();
    drive.child.disconnect();
    // OBJECTIVE_EVENTS has a fixed name: deleted only when this run created it, else this run's durable consumer goes and
    // its messages are purged (its account's subjects): kept, a gigabyte of them piled up over a day of runs and slowed NATS.
    // The runtime's stream and durable carry the cluster id (cluster-bus-names.ts).
    const runtimeStream = runtime?.eventStream ?? eventStream;
    await cleanUpNats(
      objectiveStreamExisted ? [runtimeStream] : [runtimeStream, STREAM],
      objectiveStreamExisted && runtime ? { stream: STREAM, name: webhookIntakeDurableName(runtime.subjectPrefix) } : null,
      objectiveStreamExisted && benchAccountId ? { stream: STREAM, filter: `objective_events.${benchAccountId}.>` } : null,
    );
  }
}

const entry = process.env.DRIVER ? driver() : main();
entry.catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
