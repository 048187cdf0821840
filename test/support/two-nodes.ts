// Two BUILT nodes (`agentrt serve`) in cluster mode on one fresh Postgres
// database and NATS: how the e2e failover and cluster suites start them, call
// their APIs, find the node owning an actor, stop and restart one, and clean
// up (processes, data folders, the run's NATS stream and durables, database).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { shardOf } from '../../src/sharding/fnv1a32';
import { assertBuilt, cliEnv, startServe, type ServeProcess } from '../e2e/cli-process';
import { deleteStream, deleteWebhookIntakeDurables, eventually, TEST_NATS_URL } from './cluster-harness';
import { createTestDatabase, type TestDatabase } from './database';

/** The file in a node's data folder receiving the first account's global key token (src/server.ts). */
const TOKEN_FILE = 'global-api-key.token';

export interface TwoNodesOptions {
  /** Names the nodes' data folders (`agentrt-<name>-…` in the temporary folder). */
  name: string;
  /** Settings both nodes get beside the cluster's own (database, NATS, master key, names, shard count, PORT 0). @default none */
  env?: Record<string, string>;
  /** AGENTRT_SHARD_COUNT. @default 8 */
  shardCount?: number;
  /** NATS_URL. @default TEST_NATS_URL */
  natsUrl?: string;
  /**
   * A subject prefix and event stream of the run's own (`e2e_<ulid>`, `E2E_<ULID>`), removed from the test
   * NATS server by close() with the cluster's webhook durables. @default true (false: the configured
   * defaults, for NATS servers the suite starts and stops itself)
   */
  ownBusNames?: boolean;
  /** Whether close() also deletes OBJECTIVE_EVENTS, when the suite's objectives were its only writers on the test server. @default false */
  deleteObjectiveEvents?: boolean;
}

/** Two nodes of one cluster; a node's slot is null while it is stopped. */
export class TwoNodes {
  readonly nodes: Array<ServeProcess | null> = [null, null];
  readonly dataDirs: string[] = [];
  readonly shardCount: number;
  /** The global API key token of the first account (whichever node bootstrapped it). */
  token = '';
  /** The index of a node stopped with SIGSTOP: live() never picks it, close() resumes it. @default -1 (none) */
  frozen = -1;
  /** What both nodes run with (cliEnv adds the rest). */
  settings: Record<string, string> = {};
  database: TestDatabase | undefined;

  constructor(private readonly options: TwoNodesOptions) {
    this.shardCount = options.shardCount ?? 8;
  }

  /** The run's subject prefix (empty without ownBusNames). */
  get subjectPrefix(): string {
    return this.settings.AGENTRT_SUBJECT_PREFIX ?? '';
  }

  /** The run's event stream (empty without ownBusNames). */
  get eventStream(): string {
    return this.settings.AGENTRT_EVENT_STREAM ?? '';
  }

  /**
   * Creates the database and the data folders, starts both nodes together
   * (one of them bootstraps the first account) and reads the account's token.
   * Whatever it started is undone by close(), also after a failure.
   */
  async start(): Promise<void> {
    assertBuilt();
    this.database = await createTestDatabase();
    for (let index = 0; index < 2; index += 1) this.dataDirs.push(await fs.mkdtemp(path.join(os.tmpdir(), `agentrt-${this.options.name}-`)));
    const suffix = ulid().toLowerCase();
    this.settings = {
      DATABASE_URL: this.database.url,
      NATS_URL: this.options.natsUrl ?? TEST_NATS_URL,
      AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'),
      ...(this.options.ownBusNames === false ? {} : { AGENTRT_SUBJECT_PREFIX: `e2e_${suffix}`, AGENTRT_EVENT_STREAM: `E2E_${suffix.toUpperCase()}` }),
      AGENTRT_SHARD_COUNT: String(this.shardCount),
      ...this.options.env,
      PORT: '0',
    };
    await Promise.all([this.startNode(0), this.startNode(1)]);
    const tokens = await Promise.all(this.dataDirs.map((dir) => fs.readFile(path.join(dir, TOKEN_FILE), 'utf8').catch(() => null)));
    this.token = tokens.find((value) => value !== null)!.trim();
  }

  /** Starts node `index` (again) on its data folder and waits until it listens. */
  async startNode(index: number): Promise<ServeProcess> {
    const node = await startServe(cliEnv({ ...this.settings, AGENTRT_DATA_DIR: this.dataDirs[index] }));
    this.nodes[index] = node;
    return node;
  }

  /** Sends node `index` the signal, frees its slot and answers how it exited. */
  async stopNode(index: number, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const node = this.nodes[index]!;
    const exit = node.stop(signal);
    this.nodes[index] = null;
    return exit;
  }

  /** A running node that is not frozen. */
  live(): ServeProcess {
    return this.nodes.find((node, index): node is ServeProcess => node !== null && index !== this.frozen)!;
  }

  /** Calls the API with the first account's token and answers the JSON body. @throws an assertion error for a status other than 2xx */
  async call(method: string, route: string, body?: unknown, node = this.live()): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const response = await fetch(`${node.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text);
  }

  /** The index of the node owning an actor id's shard: GET /v1/cluster's shard owners matched with each node's "listening" nodeId. */
  async ownerOf(actorId: string): Promise<number> {
    const shard = shardOf(actorId, this.shardCount);
    let owner = -1;
    await eventually(async () => {
      const status = await this.call('GET', '/v1/cluster');
      const ownerId = (status.nodes as Array<{ id: string; shards: number[] }>).find((node) => node.shards.includes(shard))?.id;
      owner = this.nodes.findIndex((node) => node?.logs().find((line) => line.msg === 'listening')?.nodeId === ownerId);
      return owner >= 0;
    }, `an owner for shard ${shard}`, 20_000);
    return owner;
  }

  /** Waits until both nodes hold half the shards each: no rebalance under way that would move an actor without a failure. */
  async balanced(timeoutMs = 60_000): Promise<void> {
    await eventually(async () => {
      const status = await this.call('GET', '/v1/cluster');
      return status.nodes.length === 2 && status.nodes.every((node: { shards: number[] }) => node.shards.length === this.shardCount / 2);
    }, 'both nodes holding half the shards', timeoutMs);
  }

  /** Writes what the running nodes printed to stderr (an afterEach of a failed test). */
  printOutput(): void {
    for (const node of this.nodes) if (node) process.stderr.write(`node output: ${node.output().stdout.slice(-20_000)}\n${node.output().stderr}\n`);
  }

  /** Kills both nodes, removes their data folders, the run's stream and durables, and drops the database. */
  async close(): Promise<void> {
    if (this.frozen >= 0) this.nodes[this.frozen]?.child.kill('SIGCONT');
    await Promise.all(this.nodes.map((node) => node?.stop('SIGKILL')));
    await Promise.all(this.dataDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
    if (this.subjectPrefix) await deleteWebhookIntakeDurables(this.subjectPrefix).catch(() => undefined);
    if (this.eventStream) await deleteStream(this.eventStream).catch(() => undefined);
    if (this.options.deleteObjectiveEvents) await deleteStream('OBJECTIVE_EVENTS').catch(() => undefined);
    await this.database?.drop();
  }
}
