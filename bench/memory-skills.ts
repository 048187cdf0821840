// load_skill benchmark (issue 25 target: over a 10-layer stack with 10,000
// entries, p99 < 5 ms): prints one JSON line of figures, asserts nothing.
// A fresh Postgres database with LAYERS SKILLS layers of ENTRIES / LAYERS
// entries each (keys drawn from a shared pool, so a key often sits in
// several layers and the topmost must win; contents of 1 to 4 KiB), then
// MemoryToolsService.loadSkill called CALLS times, one at a time, with random
// keys (MISS_RATE of them held by no layer), as the service_tool.call effect
// calls it, its lastUsedAt write included; then CONCURRENCY callers at once.
// Also: the objective creation's stack read (memoryLayerIds checked and the
// skills manifest, ObjectiveMemoryResolver.resolve) over the same stack.
// Run with `tsx bench/memory-skills.ts` (CALLS=20000 for a longer run).
import { performance } from 'node:perf_hooks';
import { startBenchNode } from './support/bench-node';
import { newId } from '../src/ids';
import { EpisodicMemory } from '../src/memory/episodic-memory';
import { MemoryToolsService } from '../src/memory/memory-tools.service';
import { ObjectiveMemoryResolver } from '../src/memory/objective-memory';
import { MemoryLayerType } from '../src/memory/records';
import type { ServiceToolContext } from '../src/ports/service-tools';
import { createMemoryStore } from '../persistence/repositories/memory.store';

const LAYERS = Number(process.env.LAYERS ?? 10);
const ENTRIES = Number(process.env.ENTRIES ?? 10_000);
/** Distinct keys the layers draw from: fewer than ENTRIES, so keys repeat across layers. */
const KEY_POOL = Number(process.env.KEY_POOL ?? 6_000);
const CALLS = Number(process.env.CALLS ?? 5_000);
const WARMUP_CALLS = 500;
const MISS_RATE = Number(process.env.MISS_RATE ?? 0.1);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const STACK_READS = Number(process.env.STACK_READS ?? 200);

/** A pseudo-random sequence, the same for every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function percentiles(samples: number[]): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(3));
  return { p50: at(50), p90: at(90), p99: at(99), max: Number(sorted[sorted.length - 1].toFixed(3)) };
}

const keyOf = (index: number) => `skills/topic-${String(index).padStart(5, '0')}`;

async function main(): Promise<void> {
  const api = await startBenchNode({ poolSize: CONCURRENCY + 2 });
  try {
    const account = await api.bootstrap('bench');
    const workspace = { id: account.workspaceId, accountId: account.accountId, name: 'default', status: 'STATUS_ENABLED' as const };
    const layerIds: string[] = [];
    for (let index = 0; index < LAYERS; index++) {
      const layer = await api.services.memoryLayers.create({ profileId: account.profileId } as never, workspace, { metadata: { name: `skills-${index}` }, spec: { type: MemoryLayerType.SKILLS } });
      layerIds.push(layer.metadata.id);
    }
    const next = random(42);
    const perLayer = Math.floor(ENTRIES / LAYERS);
    const started = performance.now();
    for (const layerId of layerIds) {
      const keys = new Set<number>();
      while (keys.size < perLayer) keys.add(Math.floor(next() * KEY_POOL));
      const rows = [...keys].map((index) => ({
        id: newId('memoryEntry'), key: keyOf(index),
        title: `Topic ${index}`, description: `When the customer asks about topic ${index}`,
        content: `# Topic ${index}\n${'Steps to follow, one by one. '.repeat(Math.floor(36 + next() * 110))}`,
      }));
      await api.dataSource.query(
        `INSERT INTO memory_entries (id, account_id, workspace_id, memory_layer_id, name, key, title, description, content, created_at, updated_at)
         SELECT id, $1, $2, $3, key, key, title, description, content, now(), now()
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS t(id, key, title, description, content)`,
        [account.accountId, account.workspaceId, layerId, rows.map((row) => row.id), rows.map((row) => row.key), rows.map((row) => row.title), rows.map((row) => row.description), rows.map((row) => row.content)],
      );
    }
    // As autovacuum leaves a table after a load (PG 13+ vacuums after inserts): statistics and the visibility map.
    await api.dataSource.query('VACUUM ANALYZE memory_entries');
    await api.dataSource.query('VACUUM ANALYZE memory_layers');
    const loadMs = performance.now() - started;

    const store = createMemoryStore(api.dataSource);
    const tools = new MemoryToolsService(store, new EpisodicMemory(store));
    const memory = await new ObjectiveMemoryResolver(store).resolve({
      workspace,
      variation: { layers: layerIds.map((memoryLayerId, position) => ({ memoryLayerId, position, type: MemoryLayerType.SKILLS })), enableEpisodicMemory: false, episodicMemoryTtl: null },
    });
    const context: ServiceToolContext = { accountId: account.accountId, workspaceId: account.workspaceId, objectiveId: newId('objective'), memory: memory ?? null, discovery: null };
    const randomKey = () => (next() < MISS_RATE ? `skills/absent-${Math.floor(next() * 1e6)}` : keyOf(Math.floor(next() * KEY_POOL)));

    let hits = 0;
    let contentBytes = 0;
    const call = async (): Promise<number> => {
      const begin = performance.now();
      const outcome = await tools.loadSkill(context, randomKey());
      const elapsed = performance.now() - begin;
      if (outcome.ok) {
        hits++;
        contentBytes += outcome.content.length;
      }
      return elapsed;
    };
    for (let index = 0; index < WARMUP_CALLS; index++) await call();
    hits = 0;
    contentBytes = 0;
    const sequential: number[] = [];
    for (let index = 0; index < CALLS; index++) sequential.push(await call());
    const sequentialHits = hits;

    const concurrent: number[] = [];
    const concurrentStarted = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      for (let index = 0; index < Math.ceil(CALLS / CONCURRENCY); index++) concurrent.push(await call());
    }));
    const concurrentSeconds = (performance.now() - concurrentStarted) / 1000;

    const resolver = new ObjectiveMemoryResolver(store);
    const stackReads: number[] = [];
    for (let index = 0; index < STACK_READS; index++) {
      const begin = performance.now();
      await resolver.resolve({
        workspace,
        variation: { layers: layerIds.slice(0, -1).map((memoryLayerId, position) => ({ memoryLayerId, position, type: MemoryLayerType.SKILLS })), enableEpisodicMemory: false, episodicMemoryTtl: null },
        memoryLayerIds: layerIds.slice(-1),
      });
      stackReads.push(performance.now() - begin);
    }

    console.log(JSON.stringify({
      bench: 'memory-skills',
      layers: LAYERS,
      entries: perLayer * LAYERS,
      distinctKeys: KEY_POOL,
      loadSeconds: Number((loadMs / 1000).toFixed(1)),
      loadSkill: {
        calls: CALLS,
        hitRate: Number((sequentialHits / CALLS).toFixed(3)),
        meanContentBytes: Math.round(contentBytes / Math.max(1, hits)),
        sequentialMs: percentiles(sequential),
        concurrency: CONCURRENCY,
        concurrentMs: percentiles(concurrent),
        concurrentCallsPerSecond: Math.round(concurrent.length / concurrentSeconds),
      },
      creationStackReadMs: { reads: STACK_READS, manifestBytes: memory?.skillsManifest?.length ?? 0, ...percentiles(stackReads) },
    }));
  } finally {
    await api.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
