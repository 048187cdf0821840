// A runtime node as a separate process, for the cluster suites and the
// benchmark. Started by ClusterNode (cluster-harness.ts) with `node --import tsx`;
// configured by the environment (DATABASE_URL, NATS_URL, AGENTRT_*), driven
// over the IPC channel. SIGTERM stops it gracefully.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { runtimeMetrics, runtimeOptionsFromEnv, startActorRuntime, type ActorRuntime } from '../../actors';
import { toApiError } from '../../src/errors';
import { createDataSource } from '../../persistence/data-source';
import { counterKind, type CounterReply } from './cluster-counter';
import { silentLogger } from './cluster-harness';
import type { NodeRequest } from './cluster-protocol';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

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
        owned: runtime.ownedShards(),
        active: runtime.activeActors(),
        activations: await metricValue(runtimeMetrics.activations),
        fencedWrites: await metricValue(runtimeMetrics.fencedWrites),
        leaseLosses: await metricValue(runtimeMetrics.leaseLosses),
      };
    case 'cluster':
      return runtime.clusterStatus();
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
    kinds: [counterKind],
    options: runtimeOptionsFromEnv(),
    logger: silentLogger,
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
