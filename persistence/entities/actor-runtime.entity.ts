// Entity schemas of the actor runtime's tables (migration ActorRuntime). The
// runtime's repositories query them with plain SQL; these schemas register the
// tables with the data source and give each row a type.
import { EntitySchema } from 'typeorm';

/** Big integers arrive from pg as strings; sequence numbers and epochs stay far below 2^53. */
const bigintNumber = { to: (value: number) => value, from: (value: string | null) => (value === null ? null : Number(value)) };

export interface ActorJournalRow {
  ordering: number;
  persistenceKey: string;
  sequenceNr: number;
  /** The command this entry applied: unique per actor, how a retry is recognised. */
  commandId: string | null;
  payload: unknown;
  tags: string[];
  createdAt: Date;
}

export const ActorJournalEntity = new EntitySchema<ActorJournalRow>({
  name: 'ActorJournal',
  tableName: 'actor_journal',
  columns: {
    ordering: { type: 'bigint', primary: true, generated: 'increment', transformer: bigintNumber },
    persistenceKey: { type: 'text', name: 'persistence_key' },
    sequenceNr: { type: 'bigint', name: 'sequence_nr', transformer: bigintNumber },
    commandId: { type: 'text', name: 'command_id', nullable: true },
    payload: { type: 'jsonb' },
    tags: { type: 'text', array: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});

export interface ActorSnapshotRow {
  persistenceKey: string;
  sequenceNr: number;
  payload: unknown;
  createdAt: Date;
}

export const ActorSnapshotEntity = new EntitySchema<ActorSnapshotRow>({
  name: 'ActorSnapshot',
  tableName: 'actor_snapshots',
  columns: {
    persistenceKey: { type: 'text', name: 'persistence_key', primary: true },
    sequenceNr: { type: 'bigint', name: 'sequence_nr', transformer: bigintNumber },
    payload: { type: 'jsonb' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});

export interface ActorClusterRow {
  id: number;
  shardCount: number;
  createdAt: Date;
}

export const ActorClusterEntity = new EntitySchema<ActorClusterRow>({
  name: 'ActorCluster',
  tableName: 'actor_cluster',
  columns: {
    id: { type: 'smallint', primary: true },
    shardCount: { type: 'integer', name: 'shard_count' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});

export interface ActorNodeRow {
  nodeId: string;
  startedAt: Date;
  lastHeartbeatAt: Date;
  shards: number[];
  activeActors: number;
}

export const ActorNodeEntity = new EntitySchema<ActorNodeRow>({
  name: 'ActorNode',
  tableName: 'actor_nodes',
  columns: {
    nodeId: { type: 'text', name: 'node_id', primary: true },
    startedAt: { type: 'timestamptz', name: 'started_at' },
    lastHeartbeatAt: { type: 'timestamptz', name: 'last_heartbeat_at' },
    shards: { type: 'integer', array: true },
    activeActors: { type: 'integer', name: 'active_actors' },
  },
});

export interface ActorShardRow {
  shard: number;
  epoch: number;
  ownerNodeId: string | null;
  acquiredAt: Date | null;
}

export const ActorShardEntity = new EntitySchema<ActorShardRow>({
  name: 'ActorShard',
  tableName: 'actor_shards',
  columns: {
    shard: { type: 'integer', primary: true },
    epoch: { type: 'bigint', transformer: bigintNumber },
    ownerNodeId: { type: 'text', name: 'owner_node_id', nullable: true },
    acquiredAt: { type: 'timestamptz', name: 'acquired_at', nullable: true },
  },
});

export interface ActorOutboxRow {
  id: string;
  shard: number;
  subject: string;
  /** NULL: the kind's read model keeps it (OutgoingEvent.payloadProjected). */
  payload: unknown;
  headers: Record<string, string> | null;
  /** Write order (a database sequence): publication order per actor. */
  position: string;
  persistenceKey: string | null;
  actorSeq: string | null;
  createdAt: Date;
  publishedAt: Date | null;
}

export const ActorOutboxEntity = new EntitySchema<ActorOutboxRow>({
  name: 'ActorOutbox',
  tableName: 'actor_outbox',
  columns: {
    id: { type: 'text', primary: true },
    shard: { type: 'integer' },
    subject: { type: 'text' },
    payload: { type: 'jsonb', nullable: true },
    headers: { type: 'jsonb', nullable: true },
    position: { type: 'bigint', generated: 'increment' },
    persistenceKey: { type: 'text', name: 'persistence_key', nullable: true },
    actorSeq: { type: 'bigint', name: 'actor_seq', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    publishedAt: { type: 'timestamptz', name: 'published_at', nullable: true },
  },
});

export interface ActorReminderRow {
  kind: string;
  actorId: string;
  name: string;
  shard: number;
  dueAt: Date;
  /** Failed attempts; the next waits until nextAttemptAt. */
  attempts: number;
  nextAttemptAt: Date;
  payload: unknown;
}

export const ActorReminderEntity = new EntitySchema<ActorReminderRow>({
  name: 'ActorReminder',
  tableName: 'actor_reminders',
  columns: {
    kind: { type: 'text', primary: true },
    actorId: { type: 'text', name: 'actor_id', primary: true },
    name: { type: 'text', primary: true },
    shard: { type: 'integer' },
    dueAt: { type: 'timestamptz', name: 'due_at' },
    attempts: { type: 'integer' },
    nextAttemptAt: { type: 'timestamptz', name: 'next_attempt_at' },
    payload: { type: 'jsonb' },
  },
});

export interface ActorCommandRow {
  id: string;
  shard: number;
  kind: string;
  actorId: string;
  payload: unknown;
  /** Write order (a database sequence): application order per receiver. */
  position: string;
  createdAt: Date;
  processedAt: Date | null;
}

export const ActorCommandEntity = new EntitySchema<ActorCommandRow>({
  name: 'ActorCommand',
  tableName: 'actor_commands',
  columns: {
    id: { type: 'text', primary: true },
    shard: { type: 'integer' },
    kind: { type: 'text' },
    actorId: { type: 'text', name: 'actor_id' },
    payload: { type: 'jsonb' },
    position: { type: 'bigint', generated: 'increment' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    processedAt: { type: 'timestamptz', name: 'processed_at', nullable: true },
  },
});

/** An actor with effects in flight: activated by the node that acquires its shard. */
export interface ActorWorkRow {
  kind: string;
  actorId: string;
  shard: number;
  since: Date;
}

export const ActorWorkEntity = new EntitySchema<ActorWorkRow>({
  name: 'ActorWork',
  tableName: 'actor_work',
  columns: {
    kind: { type: 'text', primary: true },
    actorId: { type: 'text', name: 'actor_id', primary: true },
    shard: { type: 'integer' },
    since: { type: 'timestamptz' },
  },
});

/** Every schema above, registered by persistence/entities/index.ts. */
export const actorRuntimeEntities = [
  ActorJournalEntity,
  ActorSnapshotEntity,
  ActorClusterEntity,
  ActorNodeEntity,
  ActorShardEntity,
  ActorOutboxEntity,
  ActorReminderEntity,
  ActorCommandEntity,
  ActorWorkEntity,
];
