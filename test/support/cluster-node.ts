// A runtime node as a separate process, for the cluster suites and the
// benchmark. Started by ClusterNode (cluster-harness.ts) with `node --import tsx`;
// configured by the environment (DATABASE_URL, NATS_URL, AGENTRT_*), driven
// over the IPC channel. SIGTERM stops it gracefully. It reports the shards its
// balancer started handing off. The counter's effect
// handlers are wrapped to record how each run ended (status.effectRuns) and,
// on request, to hold a run's value until released or until the process,
// stopped by itself (freeze), is continued.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { runtimeMetrics, runtimeOptionsFromEnv, startActorRuntime, type ActorRuntime, type RuntimeLogger } from '../../actors';
import { toApiError } from '../../src/errors';
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import { createDataSource } from '../../persistence/data-source';
import { counterKind, type CounterReply } from './cluster-counter';
import { silentLogger } from './cluster-harness';
import type { EffectRunRecord, NodeRequest } from './cluster-protocol';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Shards the balancer started handing off (reported by `status`), read from its log. */
const handoffsStarted: number[] = [];
const recordingLogger: RuntimeLogger = {
  ...silentLogger,
  info(fields, message) {
    if (message === 'handing shards off') handoffsStarted.push(...((fields as { shards?: number[] }).shards ?? []));
    silentLogger.info(fields, message);
  },
};

/** Effect handler runs that ended in this process (reported by `status`). */
const effectRuns: EffectRunRecord[] = [];
/** Effect ids whose runs are held once they have a value (holdEffects), and the held runs' releases. */
const holdIds = new Set<string>();
const held = new Map<string, () => void>();

/** The counter kind, its effect handlers wrapped to record how each run of this process ended. */
function recordingKind(kind: ActorKind): ActorKind {
  const effects = Object.fromEntries(
    Object.entries(kind.effects ?? {}).map(([name, handler]) => [
      name,
      async (input: unknown, context: EffectContext) => {
        const record = (outcome: EffectRunRecord['outcome']) => effectRuns.push({ actorId: context.actorId, effectId: context.effectId, attempt: context.attempt, outcome });
        try {
          const value = await handler(input, context);
          if (holdIds.has(context.effectId)) await new Promise<void>((resolve) => held.set(context.effectId, resolve));
          record('ok');
          return value;
        } catch (error) {
          record(context.signal.aborted ? 'aborted' : 'failed');
          throw error;
        }
      },
    ]),
  );
  return { ...kind, effects };
}

/** Stops this process with the held runs' values ready, then lets them report before the event loop goes on. */
function freeze(): { stoppedMs: number; released: string[] } {
  const before = Date.now();
  process.kill(process.pid, 'SIGSTOP');
  // Running again (SIGCONT): still inside this request's callback, so the runs below report before any timer or I/O callback.
  const stoppedMs = Date.now() - before;
  return { stoppedMs, released: release([...held.keys()]) };
}

/** Lets held runs return their values; they stop being held. @returns the ids released */
function release(effectIds: string[]): string[] {
  const released = effectIds.filter((id) => held.has(id));
  for (const id of effectIds) {
    held.get(id)?.();
    held.delete(id);
    holdIds.delete(id);
  }
  return released;
}

async function metricValue(metric: { get(): Promise<{ values: Array<{ value: number }> }> }): Promise<number> {
  return (await metric.get()).values.reduce((sum, value) => sum + value.value, 0);
}

/** Runs `count` tasks with at most `concurrency` at once. */
async function pool<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

async function burst(runtime: ActorRuntime, request: Extract<NodeRequest, { op: 'burst' }>) {
  const outcomes = await pool(request.count, request.concurrency, async () => {
    try {
      return (await runtime.ask<CounterReply>('counter', request.id, request.command, { timeoutMs: request.timeoutMs })).value;
    } catch (error) {
      return `${toApiError(error).code}: ${(error as Error).message}`;
    }
  });
  return { acked: outcomes.filter((o): o is number => typeof o === 'number'), failed: outcomes.filter((o) => typeof o === 'string') };
}

async function latencies(runtime: ActorRuntime, request: Extract<NodeRequest, { op: 'latencies' }>) {
  const samples: number[] = [];
  const started = Date.now();
  const timedAsk = async (index: number) => {
    const begin = process.hrtime.bigint();
    await runtime.ask('counter', request.ids[index % request.ids.length], request.message ?? { type: 'get' });
    samples.push(Number(process.hrtime.bigint() - begin) / 1e6);
  };
  if (request.ratePerSecond) {
    // Open loop: asks leave on a fixed schedule whatever the replies do, so
    // slow replies show up as latency instead of lowering the offered rate.
    const pending: Array<Promise<void>> = [];
    for (let index = 0; index < request.count; index++) {
      const due = started + (index * 1000) / request.ratePerSecond;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      pending.push(timedAsk(index));
    }
    await Promise.all(pending);
  } else {
    await pool(request.count, request.concurrency, timedAsk);
  }
  return { samples, elapsedMs: Date.now() - started };
}

async function handle(runtime: ActorRuntime, request: NodeRequest): Promise<unknown> {
  switch (request.op) {
    case 'ask':
      return runtime.ask(request.kind, request.id, request.message, { timeoutMs: request.timeoutMs });
    case 'burst':
      return burst(runtime, request);
    case 'latencies':
      return latencies(runtime, request);
    case 'activate':
      await pool(request.count, request.concurrency, (index) => runtime.ask('counter', `${request.prefix}-${index}`, { type: 'get' }));
      return runtime.activeActors();
    case 'status':
      return {
        nodeId: runtime.nodeId,
        bus: { subjectPrefix: runtime.subjectPrefix, eventStream: runtime.eventStream },
        owned: runtime.ownedShards(),
        active: runtime.activeActors(),
        activations: await metricValue(runtimeMetrics.activations),
        fencedWrites: await metricValue(runtimeMetrics.fencedWrites),
        leaseLosses: await metricValue(runtimeMetrics.leaseLosses),
        staleEffectResults: await metricValue(runtimeMetrics.staleEffectResults),
        effectsRunning: runtime.runningEffects(),
        recoveries: await metricValue(runtimeMetrics.recoveries),
        effectRuns,
        heldEffects: [...held.keys()],
        handoffsStarted,
        now: Date.now(),
      };
    case 'cluster':
      return runtime.clusterStatus();
    case 'holdEffects':
      for (const id of request.effectIds) holdIds.add(id);
      return null;
    case 'releaseEffects':
      return release(request.effectIds);
    case 'freeze':
      return freeze();
    case 'memory':
      for (let i = 0; i < 3; i++) gc();
      return process.memoryUsage().heapUsed;
    case 'stop':
      await runtime.stop();
      setImmediate(() => process.exit(0));
      return null;
  }
}

async function main(): Promise<void> {
  const dataSource = createDataSource({ url: process.env.DATABASE_URL!, poolSize: 8, applicationName: 'agentrt-test-node' });
  await dataSource.initialize();
  const runtime = await startActorRuntime({
    dataSource,
    databaseUrl: process.env.DATABASE_URL,
    natsUrl: process.env.NATS_URL,
    kinds: [recordingKind(counterKind)],
    options: runtimeOptionsFromEnv(),
    logger: recordingLogger,
  });
  process.on('message', (request: NodeRequest & { seq: number }) => {
    handle(runtime, request).then(
      (result) => process.send?.({ seq: request.seq, ok: true, result }),
      (error) => process.send?.({ seq: request.seq, ok: false, code: toApiError(error).code, message: (error as Error).message }),
    );
  });
  process.on('SIGTERM', () => void runtime.stop().then(() => process.exit(0)));
  process.send?.({ ready: true, nodeId: runtime.nodeId });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
