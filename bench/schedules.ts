// Schedules benchmark (issue 11 item 5): prints JSON lines of figures, asserts
// nothing. One node in this process (the real HTTP API and an embedded actor
// runtime over a fresh Postgres database, in-process bus), an agent on the
// builtin/scripted model whose objectives answer at once (`SAY ok`):
// 1. memory: heap and RSS (after a GC) before and after SCHEDULES active
//    schedules are created through the API, per schedule, with the runtime's
//    active actor count (an idle schedule is passivated: no actor, no memory);
// 2. lateness: every schedule fires `every EVERY s` (default 300: 33 fires/s
//    with 10,000 schedules, a load one node sustains; EVERY=60, 167 fires/s,
//    saturates a 2-core box) with offsets i % SPREAD s
//    (SPREAD defaults to EVERY: SCHEDULES / EVERY fires in each whole second;
//    SPREAD=1 fires all of them in the same second). For every nominal fire
//    time in the DURATION_MS window (after WARMUP_MS), each milestone minus
//    the nominal time:
//    - delivered: the reminder poller hands the reminder to the actor;
//    - decided: the schedule actor's onReminder runs (its clock is the
//      `info.lastFiredAt` it records);
//    - prepared: the prepare effect (objective resolution) has returned;
//    - started: the objective actor decides its `start` command (the
//      scheduled objective exists and runs). This is the fire lateness
//      compared with the target: the moment the user's objective starts;
//    - createdAt: the objective row's created_at (stamped in the prepare
//      effect) minus its schedule_fire_time, read back from Postgres for all
//      fires, the in-process hooks aside;
//    plus missed fires (nominal times with no objective row), double fires
//    (a (schedule, fire time) decided twice, or two rows), fires/s, the active
//    actors sampled between bursts (x.900 s), event-loop delay, the reminder
//    poll, activation reads and turn writes, statements per fire, and the
//    five slowest bursts with their worst fire's milestones (the tail is a
//    few slow bursts: this says which stage made them slow).
// The runtime runs with the service's defaults (the outbox relay's backlog
// poll included: 1 s), so the figures are those of a deployed node.
// Run with `npm run bench:schedules` (knobs: SCHEDULES=10000, EVERY=300 (s),
// SPREAD=EVERY (s), DURATION_MS=120000, WARMUP_MS=10000, CREATORS=32,
// POLL_MS (AGENTRT_REMINDER_POLL_MS, default 1000), SHARDS=256,
// MESSAGE='SAY ok'; PROFILE=<file> writes a CPU profile of the measured window).
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import pg from 'pg';
import { Agent, request } from 'undici';
import { defaultRuntimeOptions } from '../actors';
import { ReminderPoller } from '../actors/runtime/reminder-poller';
import { ActorJournalRepository } from '../persistence/runtime/actor-journal.repository';
import { ActorReminderRepository } from '../persistence/runtime/actor-reminder.repository';
import { TurnWriter, type TurnWrite } from '../persistence/runtime/turn-writer';
import { objectiveBehavior, type ObjectiveCommand } from '../src/objectives/objective.behavior';
import type { ObjectiveRequest } from '../src/objectives/objective.service';
import type { ActorContext, ActorDecision, FiredReminder } from '../src/ports/actor-behavior';
import { scheduleBehavior, type PrepareScheduledObjectiveInput, type ScheduleState } from '../src/schedules/schedule.behavior';
import { startBenchNode } from './support/bench-node';
import { analyzeAsAutovacuumWould } from './support/table-statistics';
import { startProfiler } from './support/cpu-profiler';

const SCHEDULES = Number(process.env.SCHEDULES ?? 10_000);
const EVERY = Number(process.env.EVERY ?? 300);
const SPREAD = Math.min(EVERY, Number(process.env.SPREAD ?? EVERY));
const DURATION_MS = Number(process.env.DURATION_MS ?? 120_000);
const WARMUP_MS = Number(process.env.WARMUP_MS ?? 10_000);
const CREATORS = Number(process.env.CREATORS ?? 32);
const POLL_MS = process.env.POLL_MS ?? process.env.AGENTRT_REMINDER_POLL_MS;
const SHARDS = Number(process.env.SHARDS ?? 256);
const MESSAGE = process.env.MESSAGE ?? 'SAY ok';
/** Time after the window for its last fires to finish before they are counted. */
const GRACE_MS = 8000;

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1));
}

function summary(values: number[]): { n: number; p50: number | null; p90: number | null; p99: number | null; max: number | null; mean: number | null } {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length ? Number((sorted.reduce((sum, value) => sum + value, 0) / sorted.length).toFixed(1)) : null;
  return { n: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: percentile(sorted, 100), mean };
}

const mib = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sleeps until the next x.900 s: between the bursts of whole-second fires. */
function untilX900(): Promise<unknown> {
  const ms = Date.now() % 1000;
  return sleep(ms < 900 ? 900 - ms : 1900 - ms);
}

function log(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function gcMemory(): NodeJS.MemoryUsage {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage();
}

/** Counts the statements every pg client of the process sends, by their first 60 characters. */
function countQueries(): { stop(): { total: number; top: Array<[string, number]> } } {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const counts = new Map<string, number>();
  prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text ?? '?';
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 60);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.call(this, config, ...rest);
  };
  return {
    stop() {
      prototype.query = original;
      return { total: [...counts.values()].reduce((sum, count) => sum + count, 0), top: [...counts].sort((a, b) => b[1] - a[1]).slice(0, 14) };
    },
  };
}

/** Milestones of one nominal fire (ms since the epoch), keyed `scheduleId|fireMs`. */
interface Fire {
  delivered?: number;
  decided?: number;
  decisions: number;
  prepareStart?: number;
  prepared?: number;
  effectApplied?: number;
  started?: number;
  /** The reminder due at the nominal time reached the schedule actor. */
  fireDelivered?: number;
  /** The schedule actor decided the start (its transactional send). */
  fireDecided?: number;
  /** The fire turn (with the send) was handed to the turn writer, and its write resolved. */
  fireWriteStart?: number;
  fireWritten?: number;
}

/**
 * In-process hooks on the runtime's classes and the behaviours' exported
 * objects (this file edits nothing): they record the milestones of fires whose
 * nominal time falls in [from, to), and the durations of the runtime's reads
 * and writes while `recording`.
 */
function installHooks() {
  const window = { from: Infinity, to: Infinity, recording: false };
  const fires = new Map<string, Fire>();
  const timings = { poll: [] as number[], polled: [] as number[], snapshotRead: [] as number[], journalRead: [] as number[], scheduleTurn: [] as number[], objectiveTurn: [] as number[] };
  const inWindow = (fireMs: number) => fireMs >= window.from && fireMs < window.to;
  const fireOf = (scheduleId: string, fireMs: number): Fire | undefined => {
    if (!inWindow(fireMs)) return undefined;
    const key = `${scheduleId}|${fireMs}`;
    let fire = fires.get(key);
    if (!fire) fires.set(key, (fire = { decisions: 0 }));
    return fire;
  };

  const poller = ReminderPoller.prototype as unknown as { deliverOnce(key: string, kind: string, id: string, ...rest: unknown[]): void };
  const deliverOnce = poller.deliverOnce;
  poller.deliverOnce = function (key, kind, id, ...rest) {
    if (kind === 'schedule' && key.startsWith('r:')) {
      const dueMs = Number(key.split(':').at(-2));
      const fire = fireOf(id, dueMs);
      if (fire && fire.delivered === undefined) fire.delivered = Date.now();
      // The reminder due at a nominal fire time (not the one preparing it ahead).
      const nominal = fires.get(`${id}|${dueMs}`);
      if (nominal && nominal.effectApplied !== undefined) nominal.fireDelivered ??= Date.now();
    }
    return deliverOnce.call(this, key, kind, id, ...rest);
  };

  const onReminder = scheduleBehavior.onReminder!;
  scheduleBehavior.onReminder = function (state: ScheduleState, reminder: FiredReminder, context: ActorContext) {
    const decision = onReminder.call(this, state, reminder, context) as ActorDecision<unknown, unknown, unknown>;
    for (const effect of decision.effects?.start ?? []) {
      const input = effect.input as PrepareScheduledObjectiveInput;
      const fire = fireOf(input.scheduleId, Date.parse(input.fireTime));
      if (fire) {
        fire.decisions += 1;
        fire.decided ??= context.now.getTime();
      }
    }
    for (const send of decision.send ?? []) {
      const command = send.command as ObjectiveCommand;
      if (command.type !== 'start' || !command.start.spec.scheduleId || !command.start.spec.scheduleFireTime) continue;
      const fire = fireOf(command.start.spec.scheduleId, Date.parse(command.start.spec.scheduleFireTime));
      if (fire) fire.fireDecided ??= Date.now();
    }
    return decision as never;
  };
  const onEffectResult = scheduleBehavior.onEffectResult!;
  scheduleBehavior.onEffectResult = function (state, outcome, context) {
    const decision = onEffectResult.call(this, state, outcome, context);
    if (outcome.ok) {
      const start = outcome.value as { spec: { scheduleId: string | null; scheduleFireTime?: string } };
      const fire = start.spec.scheduleId && start.spec.scheduleFireTime ? fireOf(start.spec.scheduleId, Date.parse(start.spec.scheduleFireTime)) : undefined;
      if (fire) fire.effectApplied ??= context.now.getTime();
    }
    return decision;
  };

  const decide = objectiveBehavior.decide;
  objectiveBehavior.decide = function (state, command: ObjectiveCommand, context) {
    if (command.type === 'start' && command.start.spec.scheduleId && command.start.spec.scheduleFireTime) {
      const fire = fireOf(command.start.spec.scheduleId, Date.parse(command.start.spec.scheduleFireTime));
      if (fire) fire.started ??= context.now.getTime();
    }
    return decide.call(this, state, command, context);
  };

  const timed = <T extends object>(prototype: T, method: keyof T, into: (duration: number, args: unknown[], result: unknown) => void) => {
    const original = prototype[method] as unknown as (...args: unknown[]) => Promise<unknown>;
    (prototype as Record<keyof T, unknown>)[method] = async function (this: unknown, ...args: unknown[]) {
      if (!window.recording) return original.apply(this, args);
      const startedAt = performance.now();
      const result = await original.apply(this, args);
      into(performance.now() - startedAt, args, result);
      return result;
    };
  };
  timed(ActorReminderRepository.prototype, 'listDue', (duration, _args, result) => {
    timings.poll.push(duration);
    timings.polled.push((result as unknown[]).length);
  });
  timed(ActorJournalRepository.prototype, 'findSnapshot', (duration) => timings.snapshotRead.push(duration));
  timed(ActorJournalRepository.prototype, 'listAfter', (duration) => timings.journalRead.push(duration));
  timed(TurnWriter.prototype, 'write', (duration, args) => {
    const turn = args[0] as TurnWrite;
    if (turn.kind === 'schedule') timings.scheduleTurn.push(duration);
    else if (turn.kind === 'objective') timings.objectiveTurn.push(duration);
    for (const send of turn.sends) {
      const start = send.payload as ObjectiveCommand;
      if (start.type !== 'start' || !start.start.spec.scheduleId || !start.start.spec.scheduleFireTime) continue;
      const fire = fireOf(start.start.spec.scheduleId, Date.parse(start.start.spec.scheduleFireTime));
      if (fire) {
        fire.fireWritten ??= Date.now();
        fire.fireWriteStart ??= fire.fireWritten - duration;
      }
    }
  });

  /** Wraps the objective service's resolve (the prepare effect) of the running node. */
  const hookResolve = (objectives: { resolve(...args: never[]): Promise<unknown> }) => {
    const resolve = objectives.resolve.bind(objectives) as (...args: unknown[]) => Promise<unknown>;
    (objectives as { resolve: unknown }).resolve = async (...args: unknown[]) => {
      const requested = args[2] as ObjectiveRequest;
      const fire = requested.scheduleId && requested.scheduleFireTime ? fireOf(requested.scheduleId, Date.parse(requested.scheduleFireTime)) : undefined;
      if (fire) fire.prepareStart ??= Date.now();
      const result = await resolve(...args);
      if (fire) fire.prepared ??= Date.now();
      return result;
    };
  };
  return { window, fires, timings, hookResolve };
}

async function main(): Promise<void> {
  const hooks = installHooks();
  const api = await startBenchNode({
    logLevel: 'warn',
    // The test API polls the outbox every 50 ms (tests want their events at once); a node polls every second.
    runtime: { shardCount: SHARDS, outboxPollMs: defaultRuntimeOptions().outboxPollMs, ...(POLL_MS ? { reminderPollMs: Number(POLL_MS) } : {}) },
  });
  hooks.hookResolve(api.services.objectives as never);
  const runtime = api.runtime!;
  const dispatcher = new Agent({ connections: CREATORS, keepAliveTimeout: 60_000 });
  try {
    const account = await api.bootstrap('bench-schedules');
    const headers = { authorization: `Bearer ${account.globalApiKey.token}`, 'content-type': 'application/json' };
    const ws = account.workspaceId;
    const post = async (path: string, body: unknown) => {
      const response = await request(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`POST ${path}: ${response.statusCode} ${text}`);
      return JSON.parse(text) as { metadata: { id: string } };
    };
    const agent = await post(`/v1/workspaces/${ws}/agents`, { metadata: { name: 'bench-scheduled' } });
    await post(`/v1/workspaces/${ws}/agents/${agent.metadata.id}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    const schedulesPath = `/v1/workspaces/${ws}/agents/${agent.metadata.id}/schedules`;
    const every = `${EVERY}s`;
    const createOne = (index: number) => post(schedulesPath, {
      metadata: { name: `s${index}` },
      spec: { initialMessage: MESSAGE, schedule: { intervals: [{ every, ...(index % SPREAD ? { offset: `${index % SPREAD}s` } : {}) }], timezone: 'UTC' } },
    });
    // Warm-up: connections, prepared statements, JIT (archived, so they never fire).
    for (let index = 0; index < 20; index += 1) {
      const warm = await post(schedulesPath, { metadata: { name: `warm${index}` }, spec: { initialMessage: MESSAGE, schedule: { intervals: [{ every: '1d' }], timezone: 'UTC' } } });
      const deleted = await request(`${api.url}${schedulesPath}/${warm.metadata.id}`, { method: 'DELETE', headers, dispatcher });
      await deleted.body.text();
    }

    // 1. Memory per schedule.
    await sleep(500);
    const before = gcMemory();
    const activeBefore = runtime.activeActors();
    const createdAt = Date.now();
    const ids: string[] = new Array<string>(SCHEDULES);
    let next = 0;
    await Promise.all(Array.from({ length: CREATORS }, async () => {
      while (next < SCHEDULES) {
        const index = next++;
        ids[index] = (await createOne(index)).metadata.id;
        if ((index + 1) % 2000 === 0) log({ progress: 'schedules created', count: index + 1, elapsedS: Math.round((Date.now() - createdAt) / 1000) });
      }
    }));
    const creationMs = Date.now() - createdAt;
    await analyzeAsAutovacuumWould(api.dataSource);
    // Between bursts (fires are whole seconds): x.900.
    await sleep(1000);
    await untilX900();
    const after = gcMemory();
    const activeAfter = runtime.activeActors();
    log({
      bench: 'schedules-memory',
      schedules: SCHEDULES,
      createdPerSecond: Math.round((SCHEDULES / creationMs) * 1000),
      gcExposed: typeof global.gc === 'function',
      before: { activeActors: activeBefore, heapUsedMiB: mib(before.heapUsed), rssMiB: mib(before.rss) },
      after: { activeActors: activeAfter, heapUsedMiB: mib(after.heapUsed), rssMiB: mib(after.rss) },
      heapPerScheduleBytes: Math.round((after.heapUsed - before.heapUsed) / SCHEDULES),
      rssPerScheduleBytes: Math.round((after.rss - before.rss) / SCHEDULES),
      note: 'heap growth includes this driver\'s id list (~60 B per schedule) and the fires in flight at x.900 s',
      target: 'each idle schedule holds no memory between fires (passivated: no actor)',
    });

    // 2. Lateness over the window [from, to) of nominal fire times.
    const from = Math.ceil((Date.now() + WARMUP_MS) / 1000) * 1000;
    const to = from + Math.ceil(DURATION_MS / 1000) * 1000;
    Object.assign(hooks.window, { from, to });
    await sleep(from - Date.now() - 50);
    hooks.window.recording = true;
    const queries = countQueries();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    // Garbage collections (epoch ms, duration), to tell a burst held up by one from one held up by work.
    const collections: Array<{ at: number; ms: number; kind: number }> = [];
    const gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        collections.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration, kind: (entry.detail as { kind?: number } | undefined)?.kind ?? 0 });
      }
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    const cpuStart = process.cpuUsage();
    const profiler = process.env.PROFILE ? await startProfiler() : null;
    const activeSamples: number[] = [];
    while (Date.now() < to) {
      await untilX900();
      if (Date.now() < to) activeSamples.push(runtime.activeActors());
    }
    await sleep(GRACE_MS);
    if (profiler) await profiler.stopInto(process.env.PROFILE!);
    const cpu = process.cpuUsage(cpuStart);
    loopDelay.disable();
    gcObserver.disconnect();
    hooks.window.recording = false;
    const counted = queries.stop();

    // Expected nominal times: schedule i fires at the seconds s with (s - i % SPREAD) % EVERY = 0.
    const expected = new Map<string, number>();
    let expectedTotal = 0;
    for (let index = 0; index < SCHEDULES; index += 1) {
      const offset = index % SPREAD;
      let count = 0;
      for (let second = from / 1000; second < to / 1000; second += 1) if ((((second - offset) % EVERY) + EVERY) % EVERY === 0) count += 1;
      expected.set(ids[index], count);
      expectedTotal += count;
    }
    const rows: Array<{ schedule_id: string; fire_ms: number; lateness_ms: number; copies: number }> = await api.dataSource.query(
      `SELECT schedule_id, (extract(epoch FROM schedule_fire_time) * 1000)::float8 AS fire_ms,
         (extract(epoch FROM min(created_at) - schedule_fire_time) * 1000)::float8 AS lateness_ms, count(*)::int AS copies
       FROM objectives WHERE workspace_id = $1 AND schedule_id IS NOT NULL AND schedule_fire_time >= $2 AND schedule_fire_time < $3
       GROUP BY schedule_id, schedule_fire_time`,
      [ws, new Date(from), new Date(to)],
    );
    const present = new Map<string, number>();
    for (const row of rows) present.set(row.schedule_id, (present.get(row.schedule_id) ?? 0) + 1);
    let missed = 0;
    for (const [id, count] of expected) missed += Math.max(0, count - (present.get(id) ?? 0));
    const unexpected = rows.length - (expectedTotal - missed);
    const [{ completed, running }] = await api.dataSource.query(
      `SELECT count(*) FILTER (WHERE status = 'OBJECTIVE_STATUS_COMPLETED')::int AS completed, count(*) FILTER (WHERE status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED'))::int AS running
       FROM objectives WHERE workspace_id = $1 AND schedule_fire_time >= $2 AND schedule_fire_time < $3`,
      [ws, new Date(from), new Date(to)],
    );

    const stage = (pick: (fire: Fire, fireMs: number) => number | undefined) => {
      const values: number[] = [];
      for (const [key, fire] of hooks.fires) {
        const value = pick(fire, Number(key.split('|')[1]));
        if (value !== undefined && Number.isFinite(value)) values.push(value);
      }
      return summary(values);
    };
    const since = (milestone: keyof Fire) => (fire: Fire, fireMs: number) => (fire[milestone] === undefined ? undefined : (fire[milestone] as number) - fireMs);
    const between = (a: keyof Fire, b: keyof Fire) => (fire: Fire) => (fire[a] === undefined || fire[b] === undefined ? undefined : (fire[b] as number) - (fire[a] as number));
    const doubleDecided = [...hooks.fires.values()].filter((fire) => fire.decisions > 1).length;
    // The tail is a few slow bursts, not slow fires spread evenly: each burst's worst fire, with its stages.
    const worstOfBurst = new Map<number, Fire & { started: number }>();
    // When the burst's fires were written: more than one time means the burst went out in several batches.
    const burstWrites = new Map<number, Map<number, number>>();
    for (const [key, fire] of hooks.fires) {
      if (fire.started === undefined) continue;
      const fireMs = Number(key.split('|')[1]);
      if (fire.fireWritten !== undefined) {
        const writes = burstWrites.get(fireMs) ?? new Map<number, number>();
        writes.set(fire.fireWritten - fireMs, (writes.get(fire.fireWritten - fireMs) ?? 0) + 1);
        burstWrites.set(fireMs, writes);
      }
      if (fire.started > (worstOfBurst.get(fireMs)?.started ?? -Infinity)) worstOfBurst.set(fireMs, { ...fire, started: fire.started });
    }
    const slowestBursts = [...worstOfBurst]
      .sort(([aMs, a], [bMs, b]) => b.started - bMs - (a.started - aMs))
      .slice(0, 5)
      .map(([fireMs, worst]) => {
        const at = (milestone: keyof Fire) => (worst[milestone] === undefined ? null : (worst[milestone] as number) - fireMs);
        return { atS: Number(((fireMs - from) / 1000).toFixed(0)), worst: { delivered: at('fireDelivered'), decided: at('fireDecided'), writeStart: at('fireWriteStart'), written: at('fireWritten'), started: at('started') },
          writtenAtMsByFires: Object.fromEntries([...(burstWrites.get(fireMs) ?? [])].sort(([a], [b]) => a - b)),
          // Collections from 50 ms before the fire time to the burst's last start: [start ms from the fire time, duration ms, kind (1 scavenge, 4 mark-compact, 8 incremental, 16 weak callbacks)].
          collections: collections
            .filter((gc) => gc.at + gc.ms >= fireMs - 50 && gc.at <= worst.started)
            .map((gc) => [Math.round(gc.at - fireMs), Number(gc.ms.toFixed(1)), gc.kind]) };
      });
    const startedLateness = stage(since('started'));
    const elapsedMs = to - from;
    const timings = hooks.timings;
    const polledSorted = [...timings.polled].sort((a, b) => a - b);
    log({
      bench: 'schedules-lateness',
      schedules: SCHEDULES,
      every: `${EVERY}s`,
      spread: `${SPREAD}s (${Math.round(SCHEDULES / SPREAD)} fires per burst)`,
      windowS: elapsedMs / 1000,
      fires: rows.length,
      firesPerSecond: Number(((rows.length / elapsedMs) * 1000).toFixed(1)),
      expected: expectedTotal,
      missed,
      unexpected,
      doubleFires: { decidedTwice: doubleDecided, duplicateRows: rows.filter((row) => row.copies > 1).length },
      objectives: { completed, notFinished: running },
      latenessMs: {
        started: startedLateness,
        decided: stage(since('decided')),
        delivered: stage(since('delivered')),
        prepared: stage(since('prepared')),
        createdAtColumn: summary(rows.map((row) => row.lateness_ms)),
      },
      stagesMs: {
        timerToDelivered: stage(since('delivered')),
        deliveredToDecided: stage(between('delivered', 'decided')),
        decidedToPrepareStart: stage(between('decided', 'prepareStart')),
        prepare: stage(between('prepareStart', 'prepared')),
        preparedToEffectApplied: stage(between('prepared', 'effectApplied')),
        effectAppliedToStarted: stage(between('effectApplied', 'started')),
        fireDelivered: stage(since('fireDelivered')),
        fireDeliveredToDecided: stage(between('fireDelivered', 'fireDecided')),
        fireDecidedToStarted: stage(between('fireDecided', 'started')),
        fireDecidedToWriteStart: stage(between('fireDecided', 'fireWriteStart')),
        fireWrite: stage(between('fireWriteStart', 'fireWritten')),
        fireWrittenToStarted: stage(between('fireWritten', 'started')),
      },
      slowestBursts,
      runtimeMs: {
        reminderPoll: { ...summary(timings.poll), remindersPerPoll: { p50: percentile(polledSorted, 50), max: percentile(polledSorted, 100) } },
        snapshotRead: summary(timings.snapshotRead),
        journalRead: summary(timings.journalRead),
        scheduleTurnWrite: summary(timings.scheduleTurn),
        objectiveTurnWrite: summary(timings.objectiveTurn),
      },
      eventLoopDelayMs: { p50: Number((loopDelay.percentile(50) / 1e6).toFixed(1)), p99: Number((loopDelay.percentile(99) / 1e6).toFixed(1)), max: Number((loopDelay.max / 1e6).toFixed(1)) },
      activeActorsAtX900: summary(activeSamples),
      nodeCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / (elapsedMs + GRACE_MS)) * 100),
      nodeCpuMsPerFire: rows.length ? Number(((cpu.user + cpu.system) / 1000 / rows.length).toFixed(2)) : null,
      queriesPerFire: rows.length ? Number((counted.total / rows.length).toFixed(1)) : null,
      topQueriesPerFire: counted.top.map(([text, count]) => `${(count / Math.max(1, rows.length)).toFixed(2)} ${text}`),
      target: 'fire lateness (started) p99 < 50 ms; 0 missed, 0 double fires',
    });

    const end = gcMemory();
    log({
      bench: 'schedules-memory-after-run',
      activeActors: runtime.activeActors(),
      heapUsedMiB: mib(end.heapUsed),
      heapGrowthSinceCreatedMiB: mib(end.heapUsed - after.heapUsed),
      rssMiB: mib(end.rss),
      note: 'includes the bench\'s own per-fire records',
    });
    log({
      bench: 'schedules-figures',
      fireLatenessStartedMs: { p50: startedLateness.p50, p99: startedLateness.p99, target: 'p99 < 50 (Temporal: ~1000)' },
      activeSchedules: SCHEDULES,
      heapPerScheduleBytes: Math.round((after.heapUsed - before.heapUsed) / SCHEDULES),
      activeActorsBetweenBursts: summary(activeSamples).p50,
      missed,
      doubleFires: doubleDecided + rows.filter((row) => row.copies > 1).length,
    });
  } finally {
    await dispatcher.close();
    await api.close();
  }
}

main().then(() => {
  // Something the node leaves behind can hold the event loop after close (seen after full-size
  // runs); name it, and exit, since the figures are out.
  const left = process.getActiveResourcesInfo().filter((type) => type !== 'TTYWrap' && type !== 'PipeWrap');
  if (left.length) process.stderr.write(`resources still open after close: ${JSON.stringify(left)}\n`);
  process.exit(0);
}, (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
