// Prefixed ULID ids: every server-assigned id is `<prefix>_<ULID>`. The prefix
// table lives here once; docs/api.md lists it for users.
import { randomFillSync } from 'node:crypto';
import { decodeTime, monotonicFactory } from 'ulid';

export const IdPrefix = {
  account: 'acc',
  workspace: 'ws',
  profile: 'prof',
  apiKey: 'apikey',
  workspaceMember: 'wsm',
  workspaceSecret: 'secret',
  aiProviderKey: 'aipk',
  model: 'model',
  memoryLayer: 'memlayer',
  memoryEntry: 'mement',
  upload: 'upload',
  agent: 'agent',
  agentVariation: 'agentvar',
  variationAssignment: 'vasgn',
  memoryLayerAssignment: 'mlasgn',
  tool: 'tool',
  toolSet: 'toolset',
  feedback: 'feedback',
  tenant: 'tenant',
  subject: 'subject',
  erasure: 'erasure',
  schedule: 'sched',
  objective: 'obj',
  objectiveEvent: 'objevt',
  toolCall: 'toolcall',
  contextWindow: 'ctxwin',
  webhookDelivery: 'whdel',
  widget: 'widget',
  widgetSession: 'wsess',
  event: 'evt',
  node: 'node',
} as const;
export type IdKind = keyof typeof IdPrefix;

const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';
/** A ULID whose time fits its 48 bits (a first character above 7 would not). */
const BARE_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

// ulid's default source asks the system for one random byte per character;
// drawing from a pooled buffer costs one system call per 4 KiB instead.
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;
function pooledRandom(): number {
  if (randomOffset === randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  return randomPool[randomOffset++] / 256;
}

// Monotonic within this process: ids made in the same millisecond still sort
// in the order they were made, so "order by id" is creation order.
const nextUlid = monotonicFactory(pooledRandom);

/**
 * A bare ULID (request ids, command ids, effect ids): 26 Crockford base32
 * characters, ascending within this process even inside one millisecond (a
 * turn's sends and effects keep their order when sorted by id).
 */
export function newUlid(): string {
  return nextUlid();
}

/** A new id of the given kind, e.g. `newId('agent')` → `agent_01J...`; ascending within a node. */
export function newId(kind: IdKind): string {
  return `${IdPrefix[kind]}_${nextUlid()}`;
}

/**
 * When the id was made (ms since the epoch), read from its ULID's time part
 * (`agent_01J…`, or a bare ULID); undefined for a value that holds none.
 */
export function idTime(id: string): number | undefined {
  const ulid = id.slice(id.lastIndexOf('_') + 1);
  return BARE_ULID.test(ulid) ? decodeTime(ulid) : undefined;
}

/** True when `value` is a well-formed id of the given kind. */
export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${IdPrefix[kind]}_${ULID_PATTERN}$`).test(value);
}

/** JSON Schema `pattern` accepting ids of one kind (used by route declarations). */
export function idPattern(kind: IdKind): string {
  return `^${IdPrefix[kind]}_${ULID_PATTERN}$`;
}

/** `count` new ids of one kind in strictly ascending order (seeding rows whose list order matters). */
export function newIds(kind: IdKind, count: number): string[] {
  return Array.from({ length: count }, () => newId(kind));
}
