// The system a chaos scenario runs: built agentrt nodes on a Postgres and a
// NATS of their own (test/support/private-services.ts: free ports, a temporary
// folder, never the machine's shared services), the idempotent HTTP tool, the
// webhook receivers, and one workspace with agents whose variations run the
// scripted model. Every API request the run makes goes through `request`, which
// records its node, route, times and answer for the checks.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { startEffectTool, type EffectTool } from './effect-tool';
import { say } from './log';
import { ChaosNode } from './nodes';
import { startChaosReceivers, type ChaosReceivers, type ReceiverKind } from './receivers';
import { FaultWindows } from './windows';
import { PrivateNats, PrivatePostgres } from '../test/support/private-services';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Json = any;

export interface ApiRecord {
  node: string;
  method: string;
  route: string;
  start: number;
  end: number;
  /** HTTP status, or 0 for a connection failure or timeout. */
  status: number;
  error?: string;
}

export interface ClusterOptions {
  /** Nodes started at set-up. */
  nodes: number;
  /** Nodes prepared but started later by the scenario (a node joining in a deploy). @default 0 */
  spareNodes?: number;
  shardCount: number;
  leaseTimeoutMs: number;
  rebalanceIntervalMs: number;
  webhookRetrySchedule: string;
  /** The receivers the agents send webhooks to, `agentsPerReceiver` agents each. */
  receiverKinds: ReceiverKind[];
  agentsPerReceiver: number;
  slowReceiverMs: number;
  /** The HTTP tools assigned to every agent: name → path on the effect tool (`/slow` answers after `slowToolAnswerDelayMs`). */
  tools: Record<string, string>;
  toolAnswerDelayMs: number;
  slowToolAnswerDelayMs: number;
}

const REQUEST_TIMEOUT_MS = 40_000;

export class ChaosCluster {
  readonly logDir: string;
  postgres!: PrivatePostgres;
  nats!: PrivateNats;
  nodes: ChaosNode[] = [];
  tool!: EffectTool;
  receivers!: ChaosReceivers;
  token = '';
  workspaceId = '';
  agents: Array<{ id: string; kind: ReceiverKind }> = [];
  readonly windows = new FaultWindows();
  readonly api: ApiRecord[] = [];
  private readonly masterKey = randomBytes(32).toString('base64');
  private pool: Pool | undefined;

  constructor(
    readonly root: string,
    readonly options: ClusterOptions,
  ) {
    this.logDir = path.join(root, 'logs');
  }

  // ---------------------------------------------------------------- set-up

  async setUp(): Promise<void> {
    const { options } = this;
    await fs.mkdir(this.logDir, { recursive: true });
    this.postgres = await PrivatePostgres.create(path.join(this.root, 'postgres'));
    const admin = new Pool({ connectionString: this.postgres.url(), max: 1 });
    await admin.query('CREATE DATABASE agentrt');
    await admin.end();
    say(`Postgres up on port ${this.postgres.port} (${this.root}/postgres)`);
    this.nats = await PrivateNats.create(path.join(this.root, 'nats'));
    say(`NATS (JetStream) up on port ${this.nats.port}`);
    this.tool = await startEffectTool(options.toolAnswerDelayMs, options.slowToolAnswerDelayMs);
    const { receivers, setSecret } = await startChaosReceivers(options.slowReceiverMs);
    this.receivers = receivers;

    const env = (): Record<string, string> => ({
      DATABASE_URL: this.postgres.url('agentrt'),
      NATS_URL: this.nats.url,
      AGENTRT_MASTER_KEY: this.masterKey,
      AGENTRT_SUBJECT_PREFIX: 'chaos',
      AGENTRT_EVENT_STREAM: 'CHAOS_EVENTS',
      AGENTRT_SHARD_COUNT: String(options.shardCount),
      AGENTRT_LEASE_TIMEOUT_MS: String(options.leaseTimeoutMs),
      AGENTRT_REBALANCE_INTERVAL_MS: String(options.rebalanceIntervalMs),
      AGENTRT_ALLOW_PRIVATE_NETWORK: 'true',
      AGENTRT_WEBHOOK_RETRY_SCHEDULE: options.webhookRetrySchedule,
      AGENTRT_RATE_LIMIT_PER_SECOND: '1000',
      AGENTRT_RATE_LIMIT_BURST: '2000',
      PORT: '0',
    });
    const count = options.nodes + (options.spareNodes ?? 0);
    this.nodes = Array.from({ length: count }, (_, index) => new ChaosNode(index, path.join(this.root, `node${index}`), this.logDir, env));
    // The first node migrates and bootstraps; the others join it (the spare ones later, when the scenario says).
    await this.nodes[0].start();
    await Promise.all(this.nodes.slice(1, options.nodes).map((node) => node.start()));
    say(`nodes up: ${this.liveNodes().map((node) => `${node.name} ${node.url} ${node.nodeId}`).join(', ')}`);
    this.token = (await fs.readFile(path.join(this.nodes[0].dataDir, 'global-api-key.token'), 'utf8')).trim();
    await this.waitBalanced(60_000);

    this.workspaceId = (await this.call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    setSecret((await this.call('GET', '/v1/account')).info.webhookEventsHmacSecret);
    const tools: Json[] = [];
    for (const [name, toolPath] of Object.entries(options.tools)) {
      tools.push(await this.call('POST', `/v1/workspaces/${this.workspaceId}/tools`, {
        metadata: { name }, spec: { description: 'Performs an effect once per Idempotency-Key', http: { url: `${this.tool.url}${toolPath}`, method: 'POST' } },
      }));
    }
    for (const kind of options.receiverKinds) {
      for (let n = 0; n < options.agentsPerReceiver; n += 1) {
        const agent = await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents`, { metadata: { name: `chaos-${kind}-${n}` }, spec: { webhookEventsUrl: this.receivers.url(kind) } });
        const variation = await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents/${agent.metadata.id}/variations`, {
          metadata: { name: 'v1' }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: 'builtin/scripted' } },
        });
        for (const assigned of tools) {
          await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: assigned.metadata.id });
        }
        this.agents.push({ id: agent.metadata.id, kind });
      }
    }
    say(`workspace ${this.workspaceId}: ${this.agents.length} agents (${options.agentsPerReceiver} per receiver: ${options.receiverKinds.join(', ')}), tools ${Object.keys(options.tools).map((name) => `"${name}"`).join(' and ')}`);
  }

  // ---------------------------------------------------------------- API

  liveNodes(): ChaosNode[] {
    return this.nodes.filter((node) => node.state === 'up' && node.process);
  }

  /** A live node picked at random, or undefined when none is. */
  anyLiveNode(): ChaosNode | undefined {
    const live = this.liveNodes();
    return live[Math.floor(Math.random() * live.length)];
  }

  /** One request to one node, recorded. */
  async request(node: ChaosNode, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
    const record: ApiRecord = { node: node.name, method, route: route.replace(/obj_\w+/, 'obj_…'), start: Date.now(), end: 0, status: 0 };
    this.api.push(record);
    try {
      const response = await fetch(`${node.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      record.status = response.status;
      let parsed: Json = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      return { status: response.status, body: parsed };
    } catch (error) {
      record.error = (error as Error).message;
      throw error;
    } finally {
      record.end = Date.now();
    }
  }

  /** A set-up or status call to any live node; retried on failures for a while. @throws when it keeps failing */
  async call(method: string, route: string, body?: unknown, timeoutMs = 30_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const node = this.anyLiveNode();
      if (node) {
        try {
          const answer = await this.request(node, method, route, body);
          if (answer.status < 300) return answer.body;
          last = `${answer.status} ${JSON.stringify(answer.body)}`;
          if (answer.status < 500 && answer.status !== 429) break;
        } catch (error) {
          last = (error as Error).message;
        }
      }
      await sleep(300);
    }
    throw new Error(`${method} ${route}: ${last}`);
  }

  /** Waits until every live node owns shards and the live nodes own them all (twice in a row). */
  async waitBalanced(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let good = 0;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const view = await this.call('GET', '/v1/cluster', undefined, 5_000);
        const members = view.nodes as Array<{ id: string; shards: number[] }>;
        const live = this.liveNodes();
        const owned = live.map((node) => members.find((member) => member.id === node.nodeId)?.shards.length ?? 0);
        const total = members.reduce((sum, member) => sum + member.shards.length, 0);
        last = `${live.map((node, i) => `${node.name}: ${owned[i]}`).join(', ')}; ${members.length} members, ${total} shards`;
        good = owned.every((count) => count > 0) && owned.reduce((a, b) => a + b, 0) === this.options.shardCount ? good + 1 : 0;
        if (good >= 2) return;
      } catch (error) {
        last = (error as Error).message;
        good = 0;
      }
      await sleep(500);
    }
    throw new Error(`the cluster did not settle within ${timeoutMs} ms: ${last}`);
  }

  /** A query on the nodes' database (for the checks; not recorded as API traffic). */
  async query<Row = Json>(text: string, values: unknown[] = []): Promise<Row[]> {
    this.pool ??= new Pool({ connectionString: this.postgres.url('agentrt'), max: 2 }).on('error', () => undefined);
    return (await this.pool.query(text, values)).rows as Row[];
  }

  // ---------------------------------------------------------------- teardown

  async tearDown(keep: boolean): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.dispose().catch(() => undefined)));
    await this.pool?.end().catch(() => undefined);
    await this.tool?.close().catch(() => undefined);
    await this.receivers?.close().catch(() => undefined);
    if (this.nats) {
      await fs.writeFile(path.join(this.logDir, 'nats.log'), this.nats.log()).catch(() => undefined);
      await this.nats.stop('SIGKILL').catch(() => undefined);
    }
    if (this.postgres) {
      await fs.writeFile(path.join(this.logDir, 'postgres.log'), await this.postgres.log()).catch(() => undefined);
      await this.postgres.stop().catch(() => undefined);
    }
    if (keep) {
      say(`kept: node, NATS and Postgres logs in ${this.logDir}`);
      // Everything but the logs goes.
      for (const entry of await fs.readdir(this.root)) if (entry !== 'logs') await fs.rm(path.join(this.root, entry), { recursive: true, force: true });
    } else {
      await fs.rm(this.root, { recursive: true, force: true });
    }
  }
}
