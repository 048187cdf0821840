// Actor addresses: (kind, id) → shard → bus subject. Subject tokens must not
// contain NATS separators or wildcards, so kinds and ids are checked here.
import { InvalidArgumentError } from '../errors';
import { shardOf } from './fnv1a32';

const KIND = /^[A-Za-z0-9_-]{1,64}$/;
const ID = /^[A-Za-z0-9_\-:]{1,200}$/;

/** Where an actor lives: its kind, id and shard. */
export interface ActorAddress {
  kind: string;
  id: string;
  shard: number;
}

/**
 * Resolves `(kind, id)` to an address.
 * @throws InvalidArgumentError when kind or id holds other characters than letters, digits, `_`, `-` (and `:` in ids).
 */
export function actorAddress(kind: string, id: string, shardCount: number): ActorAddress {
  if (!KIND.test(kind)) throw InvalidArgumentError.forField('kind', 'must match [A-Za-z0-9_-]{1,64}');
  if (!ID.test(id)) throw InvalidArgumentError.forField('id', 'must match [A-Za-z0-9_:-]{1,200}');
  return { kind, id, shard: shardOf(id, shardCount) };
}

/** The subject of one actor: `<prefix>.shard.<n>.<kind>.<id>`. */
export function actorSubject(prefix: string, address: ActorAddress): string {
  return `${prefix}.shard.${address.shard}.${address.kind}.${address.id}`;
}

/** The wildcard subject an owner subscribes to for one shard: `<prefix>.shard.<n>.>`. */
export function shardSubject(prefix: string, shard: number): string {
  return `${prefix}.shard.${shard}.>`;
}

/** The persistence key of an actor's journal and snapshot: `<kind>:<id>`. */
export function persistenceKey(kind: string, id: string): string {
  return `${kind}:${id}`;
}

/** The kind a persistence key names (its part before the first `:`). */
export function kindOfPersistenceKey(key: string): string {
  return key.slice(0, key.indexOf(':'));
}
