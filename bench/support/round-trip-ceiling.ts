// The floor under a turn's latency on this box at this moment: the round trip
// of a bare prepared `SELECT 1`, and of a one-row autocommit INSERT (its
// commit flushes the WAL), on a connection of the bench's own process, taken
// every 10 ms while the bench runs. A turn's write cannot be faster than the
// INSERT; on a loaded 2-core box both are far from an idle box's 0.1 ms.
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';

export interface RoundTripCeiling {
  /** Stops probing; answers the percentiles (ms). */
  stop(): Promise<{ select: { p50: number; p90: number }; insert: { p50: number; p90: number } }>;
}

const percentile = (values: number[], share: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? 0).toFixed(2));
};

export async function probeRoundTrips(databaseUrl: string): Promise<RoundTripCeiling> {
  const database = new RuntimeDatabase({ url: databaseUrl, poolSize: 1, applicationName: 'bench-round-trip-probe' });
  await database.query('CREATE TABLE IF NOT EXISTS bench_round_trip_probe (n int)');
  const timings = { select: [] as number[], insert: [] as number[] };
  let probing = true;
  const loop = (async () => {
    while (probing) {
      let startedAt = performance.now();
      await database.query('SELECT 1', [], { preparedAs: 'bench_probe_select' });
      timings.select.push(performance.now() - startedAt);
      startedAt = performance.now();
      await database.query('INSERT INTO bench_round_trip_probe VALUES (1)', [], { preparedAs: 'bench_probe_insert' });
      timings.insert.push(performance.now() - startedAt);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      probing = false;
      await loop;
      await database.close();
      return {
        select: { p50: percentile(timings.select, 0.5), p90: percentile(timings.select, 0.9) },
        insert: { p50: percentile(timings.insert, 0.5), p90: percentile(timings.insert, 0.9) },
      };
    },
  };
}
