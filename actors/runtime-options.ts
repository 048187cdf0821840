// The actor runtime's knobs: one options interface with defaults, and the one
// function that reads them from the environment (called by the server entry).
import { ConfigError } from '../src/config';
import { newId } from '../src/ids';

/** Every tunable of the actor runtime. */
export interface RuntimeOptions {
  /** This node's id in the membership table. @default a new `node_…` id */
  nodeId: string;
  /** Fixed shard count S; stored in the database, a node with another count refuses to start. @default 256 */
  shardCount: number;
  /** Lease timeout L: a silent node loses its shards after L. @default 15000 */
  leaseTimeoutMs: number;
  /** Membership heartbeat and rebalancing period. @default 1000 */
  rebalanceIntervalMs: number;
  /** Most shards a node hands off in one rebalancing round. @default 32 */
  maxHandoffsPerRound: number;
  /** Idle time after which an actor is passivated (stopped; state stays in Postgres). @default 600000 */
  passivateAfterMs: number;
  /** Snapshot every N journal entries. @default 100 */
  snapshotEvery: number;
  /** Total time an ask/tell retries while the shard is unowned or moving, then UnavailableError. @default 30000 */
  askTimeoutMs: number;
  /** Time one ask attempt waits for its reply. @default 5000 */
  askAttemptTimeoutMs: number;
  /** Reminder and stale-command polling period. @default 1000 */
  reminderPollMs: number;
  /** Outbox relay polling period (the relay is also woken by each write). @default 1000 */
  outboxPollMs: number;
  /**
   * How long events a turn committed wait for those of the turns right after
   * it before the relay publishes them together (milliseconds, 0 for none).
   * @default 10
   */
  outboxLingerMs: number;
  /**
   * Longest a handoff takes, from its start (a rebalance) or from the stop
   * (SIGTERM: the whole shutdown, HTTP included, ends within it). Running
   * effects get what is left of it after `handoffTimeoutMs` to finish, their
   * outcomes recorded under this node's fence; the rest are abandoned (the
   * next owner runs those again). 25 s: below the callers' retry budget
   * (askTimeoutMs, 30 s) and inside Kubernetes' default grace period (30 s).
   * @default 25000
   */
  drainTimeoutMs: number;
  /**
   * The end of the drain time kept for what follows the effects: mailboxes
   * drain, actors snapshot, leases are released (and, on a stop, connections
   * close). Effects get `drainTimeoutMs - handoffTimeoutMs`. @default 5000
   */
  handoffTimeoutMs: number;
  /**
   * First token of every bus subject (`<prefix>.shard.<n>.<kind>.<id>`, `<prefix>.events.…`); in cluster mode
   * the cluster id follows it (`<prefix>.<clusterId>.shard.…`, see cluster-bus-names.ts). @default agentrt
   */
  subjectPrefix: string;
  /** JetStream stream receiving the outbox events (`<eventStream>_<clusterId>` in cluster mode). @default AGENTRT_EVENTS */
  eventStream: string;
  /**
   * Replicas (`num_replicas`) of every JetStream stream and durable consumer
   * the node declares: 3 on a three-server NATS cluster keeps the events of a
   * server that dies with its store. An existing stream with fewer is raised,
   * never lowered (it may be shared with other clusters). At most 5. @default 1
   */
  jetStreamReplicas: number;
  /** Actors with unfinished work activated at once after shards are acquired. @default 32 */
  recoveryConcurrency: number;
  /** Connections of the runtime's own pool (turns, reads, pollers). @default 8 */
  databasePoolSize: number;
  /**
   * Retention window: journal entries covered by a snapshot, published outbox rows and processed commands
   * older than this are purged. It is also how long a command id is recognised (a retried command answered
   * from the journal), so keep it above the longest retry of a command. @default 3600000
   */
  retentionWindowMs: number;
  /** Period of the retention sweep. @default 60000 */
  retentionIntervalMs: number;
  /** Rows deleted per retention batch (one short transaction each). @default 1000 */
  retentionBatchSize: number;
}

/** The defaults, with a fresh node id. */
export function defaultRuntimeOptions(): RuntimeOptions {
  return {
    nodeId: newId('node'),
    shardCount: 256,
    leaseTimeoutMs: 15_000,
    rebalanceIntervalMs: 1000,
    maxHandoffsPerRound: 32,
    passivateAfterMs: 600_000,
    snapshotEvery: 100,
    askTimeoutMs: 30_000,
    askAttemptTimeoutMs: 5000,
    reminderPollMs: 1000,
    outboxPollMs: 1000,
    outboxLingerMs: 10,
    drainTimeoutMs: 25_000,
    handoffTimeoutMs: 5000,
    subjectPrefix: 'agentrt',
    eventStream: 'AGENTRT_EVENTS',
    jetStreamReplicas: 1,
    recoveryConcurrency: 32,
    databasePoolSize: 8,
    retentionWindowMs: 3_600_000,
    retentionIntervalMs: 60_000,
    retentionBatchSize: 1000,
  };
}

const INTEGER_VARIABLES: Array<[keyof RuntimeOptions, string, number]> = [
  ['shardCount', 'AGENTRT_SHARD_COUNT', 1],
  ['leaseTimeoutMs', 'AGENTRT_LEASE_TIMEOUT_MS', 500],
  ['rebalanceIntervalMs', 'AGENTRT_REBALANCE_INTERVAL_MS', 50],
  ['maxHandoffsPerRound', 'AGENTRT_MAX_HANDOFFS_PER_ROUND', 1],
  ['passivateAfterMs', 'AGENTRT_PASSIVATE_AFTER_MS', 1],
  ['snapshotEvery', 'AGENTRT_SNAPSHOT_EVERY', 1],
  ['askTimeoutMs', 'AGENTRT_ASK_TIMEOUT_MS', 1],
  ['askAttemptTimeoutMs', 'AGENTRT_ASK_ATTEMPT_TIMEOUT_MS', 1],
  ['reminderPollMs', 'AGENTRT_REMINDER_POLL_MS', 10],
  ['outboxPollMs', 'AGENTRT_OUTBOX_POLL_MS', 10],
  ['outboxLingerMs', 'AGENTRT_OUTBOX_LINGER_MS', 0],
  ['drainTimeoutMs', 'AGENTRT_DRAIN_TIMEOUT_MS', 1000],
  ['handoffTimeoutMs', 'AGENTRT_HANDOFF_TIMEOUT_MS', 1],
  ['jetStreamReplicas', 'AGENTRT_JETSTREAM_REPLICAS', 1],
  ['recoveryConcurrency', 'AGENTRT_RECOVERY_CONCURRENCY', 1],
  ['databasePoolSize', 'AGENTRT_RUNTIME_POOL_SIZE', 1],
  ['retentionWindowMs', 'AGENTRT_RETENTION_WINDOW_MS', 1000],
  ['retentionIntervalMs', 'AGENTRT_RETENTION_INTERVAL_MS', 10],
  ['retentionBatchSize', 'AGENTRT_RETENTION_BATCH_SIZE', 1],
];

/** JetStream keeps at most 5 replicas of a stream or consumer. */
export const MAX_JETSTREAM_REPLICAS = 5;

function readInteger(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/**
 * Reads the runtime options from the environment over the defaults.
 * @throws ConfigError naming the variable when a value is malformed.
 */
export function runtimeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeOptions {
  const options = defaultRuntimeOptions();
  const numeric = options as unknown as Record<string, number>;
  for (const [key, name, min] of INTEGER_VARIABLES) numeric[key] = readInteger(env, name, min) ?? numeric[key];
  if (options.jetStreamReplicas > MAX_JETSTREAM_REPLICAS) {
    throw new ConfigError(`AGENTRT_JETSTREAM_REPLICAS must be at most ${MAX_JETSTREAM_REPLICAS} (JetStream's maximum), got "${env.AGENTRT_JETSTREAM_REPLICAS}"`);
  }
  if (env.AGENTRT_NODE_ID) options.nodeId = env.AGENTRT_NODE_ID;
  if (env.AGENTRT_SUBJECT_PREFIX) options.subjectPrefix = env.AGENTRT_SUBJECT_PREFIX;
  if (env.AGENTRT_EVENT_STREAM) options.eventStream = env.AGENTRT_EVENT_STREAM;
  return options;
}
