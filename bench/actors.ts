// Actor runtime benchmark: prints one JSON line of figures, asserts nothing.
// First two node processes on real NATS and Postgres (a fresh database): asks
// at a steady 1,000/s (open loop) from one node to actors the other owns, with
// their tail (p99.9, max). Then three node processes (another fresh
// database): ask round trips to actors owned by another node (reads, and
// increments that persist; closed loop), activation from a snapshot, failover
// after kill -9 of an owner (process crash) and after SIGSTOP of an owner
// (silent host loss, lease timeout L).
// Run with `npm run bench:actors`.
import { shardOf } from '../src/sharding/fnv1a32';
import { ClusterNode, clusterEnv, deleteStream, uniqueBusNames, waitForBalance } from '../test/support/cluster-harness';
import type { BurstResult } from '../test/support/cluster-protocol';
import { createTestDatabase } from '../test/support/database';

const SHARDS = 64;
const SNAPSHOT_EVERY = 100;
const LEASE_TIMEOUT_MS = 5000;

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(3));
}

const RATE_PER_SECOND = 1000;
const PACED_ASKS = 10_000;

/** `count` actor ids whose shards `owner` owns. */
function idsOwnedBy(owned: number[], prefix: string, count: number): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (owned.includes(shardOf(`${prefix}-${i}`, SHARDS))) ids.push(`${prefix}-${i}`);
  return ids;
}

async function roundTrips(caller: ClusterNode, ids: string[]) {
  await caller.call({ op: 'latencies', ids, count: 500, concurrency: 16 }); // warm-up and activation
  const serial = await caller.call<{ samples: number[] }>({ op: 'latencies', ids, count: 2000, concurrency: 1 });
  const parallel = await caller.call<{ samples: number[]; elapsedMs: number }>({ op: 'latencies', ids, count: 20_000, concurrency: 32 });
  const writes = await caller.call<{ samples: number[]; elapsedMs: number }>({ op: 'latencies', ids, count: 5000, concurrency: 32, message: { type: 'add', by: 1 } });
  return {
    askRoundTripsPerSecond: Math.round((parallel.samples.length / parallel.elapsedMs) * 1000),
    persistingAsksPerSecond: Math.round((writes.samples.length / writes.elapsedMs) * 1000),
    persistingAskP50MsUnderLoad: percentile(writes.samples, 50),
    persistingAskP99MsUnderLoad: percentile(writes.samples, 99),
    askConcurrency: 32,
    askP50Ms: percentile(serial.samples, 50),
    askP99Ms: percentile(serial.samples, 99),
    askP50MsUnderLoad: percentile(parallel.samples, 50),
    askP99MsUnderLoad: percentile(parallel.samples, 99),
  };
}

/** Two nodes: reads at a steady RATE_PER_SECOND from one node to actors the other owns (open loop: a slow reply does not delay the next ask). */
async function pacedAcrossTwoNodes(env: (databaseUrl: string, names: { subjectPrefix: string; eventStream: string }) => Record<string, string>) {
  const database = await createTestDatabase();
  const names = uniqueBusNames();
  const nodes = await Promise.all([ClusterNode.start(env(database.url, names)), ClusterNode.start(env(database.url, names))]);
  try {
    const [, ownerStatus] = await waitForBalance(nodes, SHARDS);
    const [caller] = nodes;
    const ids = idsOwnedBy(ownerStatus.owned, 'paced', 64);
    await caller.call({ op: 'latencies', ids, count: 2000, concurrency: 16 }); // warm-up and activation
    const paced = await caller.call<{ samples: number[] }>({ op: 'latencies', ids, count: PACED_ASKS, concurrency: 0, ratePerSecond: RATE_PER_SECOND });
    return {
      askP50MsAt1000PerSecond: percentile(paced.samples, 50),
      askP99MsAt1000PerSecond: percentile(paced.samples, 99),
      askP999MsAt1000PerSecond: percentile(paced.samples, 99.9),
      askMaxMsAt1000PerSecond: percentile(paced.samples, 100),
    };
  } finally {
    await Promise.all(nodes.map((node) => node.dispose()));
    await database.drop();
    await deleteStream(names.eventStream);
  }
}

async function activationFromSnapshot(caller: ClusterNode, ids: string[], passivateAfterMs: number) {
  for (const id of ids) await caller.call<BurstResult>({ op: 'burst', id, count: SNAPSHOT_EVERY + 20, concurrency: 4, command: { type: 'add', by: 1 } });
  await new Promise((resolve) => setTimeout(resolve, passivateAfterMs + 1500));
  const cold: number[] = [];
  for (const id of ids) cold.push(...(await caller.call<{ samples: number[] }>({ op: 'latencies', ids: [id], count: 1, concurrency: 1 })).samples);
  return { activationAskP50Ms: percentile(cold, 50), activationAskP99Ms: percentile(cold, 99), activationJournalTail: 20 };
}

/** Milliseconds from the signal to the first successful ask to `id` (owned by `victim`) on its new owner. */
async function failover(caller: ClusterNode, victim: ClusterNode, id: string, signal: NodeJS.Signals): Promise<number> {
  await caller.call({ op: 'ask', kind: 'counter', id, message: { type: 'add', by: 1 } });
  const signalledAt = Date.now();
  victim.signal(signal);
  await caller.call({ op: 'ask', kind: 'counter', id, message: { type: 'add', by: 1 }, timeoutMs: 60_000 });
  return Date.now() - signalledAt;
}

async function main(): Promise<void> {
  const passivateAfterMs = 3000;
  const env = (databaseUrl: string, names: { subjectPrefix: string; eventStream: string }) =>
    clusterEnv(databaseUrl, names, {
      AGENTRT_SHARD_COUNT: String(SHARDS),
      AGENTRT_LEASE_TIMEOUT_MS: String(LEASE_TIMEOUT_MS),
      AGENTRT_REBALANCE_INTERVAL_MS: '500',
      AGENTRT_SNAPSHOT_EVERY: String(SNAPSHOT_EVERY),
      AGENTRT_PASSIVATE_AFTER_MS: String(passivateAfterMs),
      AGENTRT_ASK_TIMEOUT_MS: '60000',
    });
  const paced = { pacedNodes: 2, ...(await pacedAcrossTwoNodes(env)) };
  const database = await createTestDatabase();
  const names = uniqueBusNames();
  const nodeEnv = env(database.url, names);
  const nodes = await Promise.all([ClusterNode.start(nodeEnv), ClusterNode.start(nodeEnv), ClusterNode.start(nodeEnv)]);
  try {
    const [callerStatus, ownerStatus, spareStatus] = await waitForBalance(nodes, SHARDS);
    const [caller, owner, spare] = nodes;
    const figures = {
      ...paced,
      nodes: 3,
      shards: SHARDS,
      leaseTimeoutMs: LEASE_TIMEOUT_MS,
      ...(await roundTrips(caller, idsOwnedBy(ownerStatus.owned, 'hot', 64))),
      ...(await activationFromSnapshot(caller, idsOwnedBy(ownerStatus.owned, 'cold', 20), passivateAfterMs)),
      failoverAfterKillMs: await failover(caller, owner, idsOwnedBy(ownerStatus.owned, 'crash', 1)[0], 'SIGKILL'),
      failoverAfterSilentLossMs: await failover(caller, spare, idsOwnedBy((await waitForBalance([caller, spare], SHARDS))[1].owned, 'silent', 1)[0], 'SIGSTOP'),
      callerShards: callerStatus.owned.length,
      spareShards: spareStatus.owned.length,
    };
    console.log(JSON.stringify(figures));
  } finally {
    await Promise.all(nodes.map((node) => node.dispose()));
    await database.drop();
    await deleteStream(names.eventStream);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
