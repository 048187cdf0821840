// FNV-1a (32-bit) over UTF-8 bytes: the one hash that maps an actor id to its
// shard. Every node, the HTTP layer and the tools must agree on it, so it lives
// here once and never changes for a running cluster.

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The 32-bit FNV-1a hash of the UTF-8 encoding of `value`, as an unsigned integer. */
export function fnv1a32(value: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of Buffer.from(value, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The shard of an actor id: `fnv1a32(id) mod shardCount`. */
export function shardOf(id: string, shardCount: number): number {
  return fnv1a32(id) % shardCount;
}
