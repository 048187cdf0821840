// Shard numbers written compactly for people: `0-127,130,200-255`.

/** The shards as sorted runs of consecutive numbers (`0-3,7,9-12`); duplicates count once, none is the empty string. */
export function shardRanges(shards: readonly number[]): string {
  const sorted = [...new Set(shards)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end] + 1) end++;
    runs.push(end === start ? `${sorted[start]}` : `${sorted[start]}-${sorted[end]}`);
    start = end + 1;
  }
  return runs.join(',');
}
