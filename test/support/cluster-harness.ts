// Test helpers for the runtime and cluster suites: a silent logger, unique
// names per run, polling, and node processes driven over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ulid } from 'ulid';
import type { RuntimeLogger } from '../../actors';
import type { NodeRequest, NodeStatus } from './cluster-protocol';

/** A logger that drops everything (set TEST_RUNTIME_LOG=1 to see it on stderr). */
export const silentLogger: RuntimeLogger = process.env.TEST_RUNTIME_LOG
  ? {
      debug: (fields, message) => console.error('debug', message, fields),
      info: (fields, message) => console.error('info', message, fields),
      warn: (fields, message) => console.error('warn', message, fields),
      error: (fields, message) => console.error('error', message, fields),
    }
  : { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A subject prefix and stream name no other run uses. */
export function uniqueBusNames(): { subjectPrefix: string; eventStream: string } {
  const suffix = ulid().toLowerCase();
  return { subjectPrefix: `agentrt_t${suffix}`, eventStream: `AGENTRT_T${suffix.toUpperCase()}` };
}

/** Polls `condition` every 25 ms until it holds. @throws after `timeoutMs` naming `what`. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** The NATS server tests use; override with TEST_NATS_URL. */
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A runtime node running as a child process (test/support/cluster-node.ts). */
export class ClusterNode {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly nodeId: string,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.on('message', (message: { seq: number; ok: boolean; result?: unknown; code?: string; message?: string }) => {
      const waiter = this.pending.get(message.seq);
      if (!waiter) return;
      this.pending.delete(message.seq);
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(Object.assign(new Error(message.message), { code: message.code }));
    });
    void this.exited.then(() => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`node ${nodeId} exited`));
      this.pending.clear();
    });
  }

  /**
   * Starts a node process and waits until it owns its first shards. With
   * AGENTRT_TEST_CLOCK_SKEW_MS in `env` the process's wall clock is skewed
   * by that much (test/support/skewed-clock.ts, preloaded).
   */
  static async start(env: Record<string, string>): Promise<ClusterNode> {
    const skewed = env.AGENTRT_TEST_CLOCK_SKEW_MS ? ['--import', pathToFileURL(path.join(__dirname, 'skewed-clock.ts')).href] : [];
    const child = fork(path.join(__dirname, 'cluster-node.ts'), [], {
      execArgv: ['--import', 'tsx', ...skewed],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const nodeId = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: { ready?: boolean; nodeId?: string }) => (message.ready ? resolve(message.nodeId!) : reject(new Error('unexpected message'))));
      child.once('exit', (code) => reject(new Error(`node exited with ${code} before it was ready`)));
    });
    return new ClusterNode(child, nodeId);
  }

  /** Sends an IPC request and waits for its answer. */
  call<T>(request: NodeRequest): Promise<T> {
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ ...request, seq });
    });
  }

  status(): Promise<NodeStatus> {
    return this.call<NodeStatus>({ op: 'status' });
  }

  /** Sends a signal (SIGKILL, SIGSTOP, SIGCONT, SIGTERM). */
  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Kills the process if it still runs. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    }
    await this.exited;
  }
}

/** Environment of a test node: short lease, small shard count, unique subjects. */
export function clusterEnv(databaseUrl: string, names: { subjectPrefix: string; eventStream: string }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    NATS_URL: TEST_NATS_URL,
    AGENTRT_SHARD_COUNT: '32',
    AGENTRT_LEASE_TIMEOUT_MS: '2000',
    AGENTRT_REBALANCE_INTERVAL_MS: '200',
    AGENTRT_ASK_ATTEMPT_TIMEOUT_MS: '1000',
    AGENTRT_ASK_TIMEOUT_MS: '15000',
    AGENTRT_REMINDER_POLL_MS: '200',
    AGENTRT_OUTBOX_POLL_MS: '200',
    AGENTRT_SUBJECT_PREFIX: names.subjectPrefix,
    AGENTRT_EVENT_STREAM: names.eventStream,
    ...extra,
  };
}

/** Waits until the live nodes own every shard exactly once, each within one of its fair share. */
export async function waitForBalance(nodes: ClusterNode[], shardCount: number, timeoutMs = 15_000): Promise<NodeStatus[]> {
  let statuses: NodeStatus[] = [];
  await eventually(async () => {
    statuses = await Promise.all(nodes.map((node) => node.status()));
    const all = statuses.flatMap((status) => status.owned).sort((a, b) => a - b);
    const fair = Math.floor(shardCount / nodes.length);
    const exact = all.length === shardCount && all.every((shard, index) => shard === index);
    return exact && statuses.every((status) => status.owned.length >= fair && status.owned.length <= fair + 1);
  }, `${nodes.length} nodes sharing ${shardCount} shards fairly`, timeoutMs);
  return statuses;
}

/** Deletes a test run's JetStream stream, if it was created, with the cluster-scoped streams made from its name (`<name>_<clusterId>`). */
export async function deleteStream(name: string): Promise<void> {
  const connection = await connect({ servers: TEST_NATS_URL });
  try {
    const manager = await jetstreamManager(connection);
    const names: string[] = [];
    for await (const stream of manager.streams.names()) if (stream === name || stream.startsWith(`${name}_`)) names.push(stream);
    await Promise.all(names.map((stream) => manager.streams.delete(stream).catch(() => undefined)));
  } finally {
    await connection.close();
  }
}

/**
 * Whether `name` is a webhook intake durable of a cluster whose configured
 * prefix is `stem` (sanitized): `<stem>-webhooks` (the legacy name), or
 * `<stem>_<clusterId>-webhooks` with the head cut so the name fits 64
 * characters (actors/kinds/webhook-intake.ts): what is left of the stem
 * before the last `_` is the stem's tail (at least 16 characters of it, so
 * another run's name never matches).
 */
function isWebhookIntakeDurableOf(stem: string, name: string): boolean {
  if (!name.endsWith('-webhooks')) return false;
  const base = name.slice(0, -'-webhooks'.length);
  if (base === stem) return true;
  const head = base.slice(0, base.lastIndexOf('_'));
  return head.length >= Math.min(stem.length, 16) && stem.endsWith(head);
}

/** Deletes the webhook intake durables a test run's clusters made on OBJECTIVE_EVENTS (named from the prefix and each cluster id). */
export async function deleteWebhookIntakeDurables(subjectPrefix: string): Promise<void> {
  const stem = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  const connection = await connect({ servers: TEST_NATS_URL });
  try {
    const manager = await jetstreamManager(connection);
    const names: string[] = [];
    try {
      for await (const consumer of manager.consumers.list('OBJECTIVE_EVENTS')) if (isWebhookIntakeDurableOf(stem, consumer.name)) names.push(consumer.name);
    } catch {
      return; // no OBJECTIVE_EVENTS stream: nothing to delete
    }
    await Promise.all(names.map((name) => manager.consumers.delete('OBJECTIVE_EVENTS', name).catch(() => undefined)));
  } finally {
    await connection.close();
  }
}
