// `agentrt cluster status` as a person reads it: a line per live node with its
// shards as ranges (`0-127,130`), and a line for the shards no live node owns.
import type { ClusterStatus } from './schemas/cluster.schema';
import { shardRanges } from './sharding/shard-ranges';

/** The cluster view as an aligned table under a one-line summary; `now` dates the heartbeats. */
export function formatClusterStatus(status: ClusterStatus, now: Date): string {
  const owned = new Set(status.nodes.flatMap((node) => node.shards));
  const unowned = Array.from({ length: status.shardCount }, (_, shard) => shard).filter((shard) => !owned.has(shard));
  const rows = [
    ['NODE', 'SHARDS', 'ACTORS', 'HEARTBEAT', 'RANGES'],
    ...status.nodes.map((node) => [node.id, String(node.shards.length), String(node.activeActors), heartbeatAge(node.lastHeartbeatAt, now), shardRanges(node.shards) || '-']),
    ...(unowned.length > 0 ? [['(no live owner)', String(unowned.length), '-', '-', shardRanges(unowned)]] : []),
  ];
  const nodes = status.nodes.length === 1 ? '1 live node' : `${status.nodes.length} live nodes`;
  return `${[`${status.shardCount} shards on ${nodes}`, ...alignColumns(rows)].join('\n')}\n`;
}

function heartbeatAge(lastHeartbeatAt: string, now: Date): string {
  return `${Math.max(0, Math.round((now.getTime() - Date.parse(lastHeartbeatAt)) / 1000))} s ago`;
}

/** Pads every column but the last to its widest cell, two spaces apart. */
function alignColumns(rows: string[][]): string[] {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '));
}
