// `npm run chaos` (issue 10 item 5): three built agentrt nodes on a Postgres
// and a NATS of their own, under a steady load of objectives that call an HTTP
// tool and a slow one and emit webhooks to four receivers (healthy, slow,
// failing for a while, gone with 410), through a rolling deploy (a fourth node
// joins, a node is stopped with SIGTERM and started again: no fault, planned
// moves), kill -9 and restart of a node, SIGSTOP of another past its lease then
// SIGCONT, a NATS restart and a Postgres restart.
// Then the load stops, the run waits until every objective and delivery is
// terminal, and checks, printing each figure:
// - every objective created, terminal and COMPLETED;
// - events numbered 1..N without gaps, FINALIZED last;
// - each tool effect once per tool call id: the runtime promises at-least-once
//   execution under a stable Idempotency-Key (the tool call id), sent again
//   only when a node died or lost its lease with the call in flight; the tool
//   here de-duplicates by key, so each effect is applied once. Checked: every
//   key is a persisted tool call id, every call reached the tool, one
//   TOOL_RESULT per call, and no call sent twice outside a fault window;
// - the rolling deploy: no tool call received twice (a planned move lets the
//   calls in flight finish), the stopped node exited 0;
// - per receiver that accepts: distinct webhook-ids received = deliveries =
//   events persisted for its agents, one id per event, every delivery
//   COMPLETED, every request verified by `standardwebhooks`, first receipts in
//   sequence order per objective;
// - the 410 receiver: every delivery of its agents DISABLED, nothing received
//   after its first 410 (beyond the requests already in flight);
// - no 5xx (nor connection failure) from the API outside the fault windows.
// Exits 1 when a check fails (keeping the nodes' logs), 2 when the run itself
// broke. Settings: CHAOS_RATE (objectives/s, default 5), CHAOS_PHASE_MS (calm
// between faults, default 15000), CHAOS_KEEP=1 keeps the temp folder.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { assertBuilt } from '../test/e2e/cli-process';
import { startEffectTool, type EffectTool } from './effect-tool';
import { ChaosNode } from './nodes';
import { PrivateNats, PrivatePostgres } from '../test/support/private-services';
import { RECEIVER_KINDS, startChaosReceivers, type ChaosReceivers, type ReceiverKind } from './receivers';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const RATE = Number(process.env.CHAOS_RATE ?? 5);
const PHASE_MS = Number(process.env.CHAOS_PHASE_MS ?? 15_000);
const NODE_COUNT = 3;
/** The node that joins in the rolling deploy (started then, not at set-up). */
const JOINING_NODE = NODE_COUNT;
const SHARD_COUNT = 30;
const LEASE_TIMEOUT_MS = 4_000;
const REBALANCE_INTERVAL_MS = 500;
const AGENTS_PER_RECEIVER = 2;
const SLOW_RECEIVER_MS = 3_000;
const FAILING_FROM_MS = 5_000;
const FAILING_FOR_MS = 20_000;
const TOOL_ANSWER_DELAY_MS = 300;
/** The slow tool: calls still running when a node hands its shards off (below the runtime's default drain time, 25 s: actors/runtime-options.ts). */
const SLOW_TOOL_ANSWER_DELAY_MS = 6_000;
const RETRY_SCHEDULE = '1s,2s,4s,8s,8s,8s,8s,8s';
/** A fault window lasts until this long after the run saw the system recovered. */
const GRACE_MS = 5_000;
/** Requests to the 410 receiver may still arrive this long after its first 410 (the endpoint's other heads already in flight). */
const GONE_GRACE_MS = 2_000;
const QUIESCE_TIMEOUT_MS = 180_000;
/** Everything terminal and nothing changing for this long: what is missing will not come. */
const STUCK_MS = 30_000;
const REQUEST_TIMEOUT_MS = 40_000;
const CREATE_DEADLINE_MS = 150_000;

const STARTED = Date.now();
const stamp = (at = Date.now()) => `+${((at - STARTED) / 1000).toFixed(1).padStart(6)}s`;
const say = (message: string) => console.log(`${stamp()}  ${message}`);

interface FaultWindow {
  name: string;
  start: number;
  end: number;
}

interface ApiRecord {
  node: string;
  method: string;
  route: string;
  start: number;
  end: number;
  /** HTTP status, or 0 for a connection failure or timeout. */
  status: number;
  error?: string;
}

interface Check {
  name: string;
  figures: string;
  pass: boolean;
}

class ChaosRun {
  readonly root: string;
  readonly logDir: string;
  postgres!: PrivatePostgres;
  nats!: PrivateNats;
  nodes: ChaosNode[] = [];
  tool!: EffectTool;
  receivers!: ChaosReceivers;
  token = '';
  workspaceId = '';
  agents: Array<{ id: string; kind: ReceiverKind }> = [];
  readonly windows: FaultWindow[] = [];
  /** The rolling deploy's span (not a fault window: nothing may be sent twice in it), and the stopped node's exit code. */
  deploy: { start: number; end: number; exitCode: number | null } | undefined;
  readonly api: ApiRecord[] = [];
  readonly checks: Check[] = [];
  readonly created = new Map<number, string>();
  readonly creationFailures: Array<{ index: number; why: string }> = [];
  private readonly creations: Array<Promise<void>> = [];
  private loadTimer: NodeJS.Timeout | undefined;
  private failingTimers: NodeJS.Timeout[] = [];
  private masterKey = randomBytes(32).toString('base64');
  pool: Pool | undefined;

  constructor(root: string) {
    this.root = root;
    this.logDir = path.join(root, 'logs');
  }

  // ---------------------------------------------------------------- setup

  async setUp(): Promise<void> {
    await fs.mkdir(this.logDir, { recursive: true });
    this.postgres = await PrivatePostgres.create(path.join(this.root, 'postgres'));
    const admin = new Pool({ connectionString: this.postgres.url(), max: 1 });
    await admin.query('CREATE DATABASE agentrt');
    await admin.end();
    say(`Postgres up on port ${this.postgres.port} (${this.root}/postgres)`);
    this.nats = await PrivateNats.create(path.join(this.root, 'nats'));
    say(`NATS (JetStream) up on port ${this.nats.port}`);
    this.tool = await startEffectTool(TOOL_ANSWER_DELAY_MS, SLOW_TOOL_ANSWER_DELAY_MS);
    const { receivers, setSecret } = await startChaosReceivers(SLOW_RECEIVER_MS);
    this.receivers = receivers;

    const env = (): Record<string, string> => ({
      DATABASE_URL: this.postgres.url('agentrt'),
      NATS_URL: this.nats.url,
      AGENTRT_MASTER_KEY: this.masterKey,
      AGENTRT_SUBJECT_PREFIX: 'chaos',
      AGENTRT_EVENT_STREAM: 'CHAOS_EVENTS',
      AGENTRT_SHARD_COUNT: String(SHARD_COUNT),
      AGENTRT_LEASE_TIMEOUT_MS: String(LEASE_TIMEOUT_MS),
      AGENTRT_REBALANCE_INTERVAL_MS: String(REBALANCE_INTERVAL_MS),
      AGENTRT_ALLOW_PRIVATE_NETWORK: 'true',
      AGENTRT_WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
      AGENTRT_RATE_LIMIT_PER_SECOND: '1000',
      AGENTRT_RATE_LIMIT_BURST: '2000',
      PORT: '0',
    });
    this.nodes = Array.from({ length: NODE_COUNT + 1 }, (_, index) => new ChaosNode(index, path.join(this.root, `node${index}`), this.logDir, env));
    // The first node migrates and bootstraps; the others join it (the last one later, in the rolling deploy).
    await this.nodes[0].start();
    await Promise.all(this.nodes.slice(1, NODE_COUNT).map((node) => node.start()));
    say(`nodes up: ${this.liveNodes().map((node) => `${node.name} ${node.url} ${node.nodeId}`).join(', ')}`);
    this.token = (await fs.readFile(path.join(this.nodes[0].dataDir, 'global-api-key.token'), 'utf8')).trim();
    await this.waitBalanced(60_000);

    this.workspaceId = (await this.call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    setSecret((await this.call('GET', '/v1/account')).info.webhookEventsHmacSecret);
    const tool = await this.call('POST', `/v1/workspaces/${this.workspaceId}/tools`, {
      metadata: { name: 'effect' }, spec: { description: 'Performs an effect once per Idempotency-Key', http: { url: `${this.tool.url}/effect`, method: 'POST' } },
    });
    const slowTool = await this.call('POST', `/v1/workspaces/${this.workspaceId}/tools`, {
      metadata: { name: 'slow' }, spec: { description: 'Performs an effect once per Idempotency-Key, slowly', http: { url: `${this.tool.url}/slow`, method: 'POST' } },
    });
    for (const kind of RECEIVER_KINDS) {
      for (let n = 0; n < AGENTS_PER_RECEIVER; n += 1) {
        const agent = await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents`, { metadata: { name: `chaos-${kind}-${n}` }, spec: { webhookEventsUrl: this.receivers.url(kind) } });
        const variation = await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents/${agent.metadata.id}/variations`, {
          metadata: { name: 'v1' }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: 'builtin/scripted' } },
        });
        for (const assigned of [tool, slowTool]) {
          await this.call('POST', `/v1/workspaces/${this.workspaceId}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: assigned.metadata.id });
        }
        this.agents.push({ id: agent.metadata.id, kind });
      }
    }
    say(`workspace ${this.workspaceId}: ${this.agents.length} agents (${AGENTS_PER_RECEIVER} per receiver: ${RECEIVER_KINDS.join(', ')}), tools "effect" and "slow"`);
  }

  // ---------------------------------------------------------------- API

  private liveNodes(): ChaosNode[] {
    return this.nodes.filter((node) => node.state === 'up' && node.process);
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
      const live = this.liveNodes();
      const node = live[Math.floor(Math.random() * live.length)];
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
        good = owned.every((count) => count > 0) && owned.reduce((a, b) => a + b, 0) === SHARD_COUNT ? good + 1 : 0;
        if (good >= 2) return;
      } catch (error) {
        last = (error as Error).message;
        good = 0;
      }
      await sleep(500);
    }
    throw new Error(`the cluster did not settle within ${timeoutMs} ms: ${last}`);
  }

  // ---------------------------------------------------------------- load

  startLoad(): void {
    let index = 0;
    this.loadTimer = setInterval(() => {
      const current = index++;
      this.creations.push(this.createObjective(current));
    }, 1000 / RATE);
    const failingKindAt = Date.now();
    this.failingTimers.push(
      setTimeout(() => {
        this.receivers.setFailing(true);
        say(`receiver "failing" starts answering 503 (for ${FAILING_FOR_MS / 1000} s)`);
      }, FAILING_FROM_MS),
      setTimeout(() => {
        this.receivers.setFailing(false);
        say(`receiver "failing" answers 200 again (${((Date.now() - failingKindAt) / 1000).toFixed(1)} s after the load started)`);
      }, FAILING_FROM_MS + FAILING_FOR_MS),
    );
    say(`load started: ${RATE} objectives/s over ${this.agents.length} agents, each "CALL effect {...}" and "CALL slow {...}" then "SAY done"`);
  }

  async stopLoad(): Promise<void> {
    clearInterval(this.loadTimer);
    say(`load stopped after ${this.creations.length} objectives; waiting for the creations in flight`);
    await Promise.all(this.creations);
    say(`creations done: ${this.created.size} created, ${this.creationFailures.length} failed`);
  }

  /** Creates objective `index` through a random live node, retrying with the same Idempotency-Key. */
  private async createObjective(index: number): Promise<void> {
    const agent = this.agents[index % this.agents.length];
    const body = { agentId: agent.id, initialMessage: `CALL effect {"n": ${index}}\nCALL slow {"n": ${index}}\nSAY done`, metadata: { externalId: `chaos-${index}`, labels: { receiver: agent.kind } } };
    const deadline = Date.now() + CREATE_DEADLINE_MS;
    let last = '';
    while (Date.now() < deadline) {
      const live = this.liveNodes();
      const node = live[Math.floor(Math.random() * live.length)];
      if (node) {
        try {
          const answer = await this.request(node, 'POST', `/v1/workspaces/${this.workspaceId}/objectives`, body, { 'idempotency-key': `chaos-${index}` });
          if (answer.status < 300) {
            this.created.set(index, answer.body.metadata.id);
            return;
          }
          last = `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
          if (answer.status < 500 && answer.status !== 429 && answer.status !== 409) break;
        } catch (error) {
          last = (error as Error).message;
        }
      }
      await sleep(500);
    }
    this.creationFailures.push({ index, why: last });
  }

  // ---------------------------------------------------------------- faults

  private fault(name: string): FaultWindow {
    const window = { name, start: Date.now(), end: Number.POSITIVE_INFINITY };
    this.windows.push(window);
    say(`FAULT ${name}`);
    return window;
  }

  private recovered(window: FaultWindow, extraMs = GRACE_MS): void {
    window.end = Date.now() + extraMs;
    say(`recovered from "${window.name}" after ${((Date.now() - window.start) / 1000).toFixed(1)} s (window open ${extraMs / 1000} s more)`);
  }

  /**
   * A rolling deploy under load, with slow tool calls running: a fourth node
   * joins (the others hand it shards), a node is stopped with SIGTERM and
   * started again. Planned moves, not faults: no window opens, so a call sent
   * twice or an API failure meanwhile fails the checks.
   */
  async rollingDeploy(): Promise<void> {
    const start = Date.now();
    const joining = this.nodes[JOINING_NODE];
    say(`DEPLOY: ${joining.name} joins`);
    await joining.start();
    say(`${joining.name} listening as ${joining.nodeId}`);
    await this.waitBalanced(90_000);
    const stopped = this.nodes[NODE_COUNT - 1];
    say(`DEPLOY: SIGTERM ${stopped.name} (${stopped.nodeId})`);
    const exitCode = await stopped.terminate();
    say(`${stopped.name} exited with ${exitCode} after ${((Date.now() - start) / 1000).toFixed(1)} s into the deploy; starting it again`);
    await stopped.start();
    say(`${stopped.name} listening again as ${stopped.nodeId}`);
    await this.waitBalanced(90_000);
    this.deploy = { start, end: Date.now(), exitCode };
    say(`DEPLOY done in ${((Date.now() - start) / 1000).toFixed(1)} s`);
  }

  async runFaults(): Promise<void> {
    await sleep(PHASE_MS);
    await this.rollingDeploy();
    await sleep(PHASE_MS);

    const killed = this.nodes[0];
    const kill = this.fault(`kill -9 ${killed.name} (${killed.nodeId})`);
    await killed.kill();
    await sleep(3_000);
    say(`restarting ${killed.name}`);
    await killed.start();
    say(`${killed.name} listening again as ${killed.nodeId}`);
    await this.waitBalanced(90_000);
    this.recovered(kill);
    await sleep(PHASE_MS);

    const paused = this.nodes[1];
    const stop = this.fault(`SIGSTOP ${paused.name} for ${(LEASE_TIMEOUT_MS + 4_000) / 1000} s (lease ${LEASE_TIMEOUT_MS / 1000} s)`);
    paused.pause();
    await sleep(LEASE_TIMEOUT_MS + 4_000);
    paused.resume();
    say(`SIGCONT ${paused.name}`);
    await this.waitBalanced(90_000);
    this.recovered(stop);
    await sleep(PHASE_MS);

    const natsRestart = this.fault('restart NATS (down 5 s)');
    await this.nats.stop();
    await sleep(5_000);
    await this.nats.start();
    say('NATS up again');
    await this.waitBalanced(90_000);
    // Clients reconnect with a back-off: the window stays open a little longer.
    this.recovered(natsRestart, 2 * GRACE_MS);
    await sleep(PHASE_MS);

    const pgRestart = this.fault('restart Postgres (immediate stop, down 5 s)');
    await this.postgres.stop();
    await sleep(5_000);
    await this.postgres.start();
    say('Postgres up again');
    await this.waitBalanced(120_000);
    this.recovered(pgRestart, 2 * GRACE_MS);
    await sleep(PHASE_MS);
  }

  // ---------------------------------------------------------------- quiescence

  async query<Row = Json>(text: string, values: unknown[] = []): Promise<Row[]> {
    this.pool ??= new Pool({ connectionString: this.postgres.url('agentrt'), max: 2 }).on('error', () => undefined);
    return (await this.pool.query(text, values)).rows as Row[];
  }

  async waitQuiet(): Promise<boolean> {
    const deadline = Date.now() + QUIESCE_TIMEOUT_MS;
    let lastSaid = 0;
    let lastFigures = '';
    let sameSince = Date.now();
    for (;;) {
      try {
        const [state] = await this.query<{ open: number; events: number; deliveries: number; pending: number }>(`
          SELECT (SELECT count(*)::int FROM objectives WHERE status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')) AS open,
                 (SELECT count(*)::int FROM objective_events) AS events,
                 (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
                 (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'WEBHOOK_DELIVERY_STATUS_PENDING') AS pending`);
        const figures = `${state.open} objectives not terminal, ${state.events} events, ${state.deliveries} deliveries (${state.pending} pending), ${this.tool.open()} tool calls open`;
        if (figures !== lastFigures) {
          lastFigures = figures;
          sameSince = Date.now();
        }
        const settled = state.open === 0 && state.pending === 0 && this.tool.open() === 0;
        if (settled && state.events === state.deliveries) {
          say(`quiet: ${figures}`);
          return true;
        }
        // Nothing left to do, yet events without a delivery: they will not come (checked below).
        if (settled && Date.now() - sameSince > STUCK_MS) {
          say(`quiet, with events that never became deliveries: ${figures}, unchanged for ${STUCK_MS / 1000} s`);
          return true;
        }
        if (Date.now() - lastSaid > 10_000) {
          say(`waiting: ${figures}`);
          lastSaid = Date.now();
        }
      } catch (error) {
        say(`waiting: database read failed: ${(error as Error).message}`);
      }
      if (Date.now() > deadline) {
        say(`NOT quiet after ${QUIESCE_TIMEOUT_MS / 1000} s`);
        return false;
      }
      await sleep(1_000);
    }
  }

  // ---------------------------------------------------------------- checks

  private check(name: string, pass: boolean, figures: string): void {
    this.checks.push({ name, figures, pass });
  }

  private inWindow(start: number, end: number): boolean {
    return this.windows.some((window) => start <= window.end && end >= window.start);
  }

  async runChecks(quiet: boolean): Promise<void> {
    this.check('quiescence: every objective terminal, every delivery terminal', quiet, quiet ? 'reached' : `not reached within ${QUIESCE_TIMEOUT_MS / 1000} s`);

    // Objectives.
    const attempted = this.created.size + this.creationFailures.length;
    const byStatus = await this.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM objectives GROUP BY status ORDER BY status');
    const total = byStatus.reduce((sum, row) => sum + row.n, 0);
    const completed = byStatus.find((row) => row.status === 'OBJECTIVE_STATUS_COMPLETED')?.n ?? 0;
    const doubled = await this.query<{ n: number }>('SELECT count(*)::int AS n FROM (SELECT external_id FROM objectives GROUP BY external_id HAVING count(*) > 1) twice');
    this.check('objectives created (each once, through retries with the same Idempotency-Key)',
      this.creationFailures.length === 0 && total === attempted && doubled[0].n === 0,
      `${attempted} requested, ${this.created.size} created, ${this.creationFailures.length} creation failures${this.creationFailures.length ? ` (first: #${this.creationFailures[0].index} ${this.creationFailures[0].why})` : ''}, ${total} in the database, ${doubled[0].n} external ids twice`);
    this.check('every objective terminal and COMPLETED', completed === total && total > 0,
      `${completed}/${total} COMPLETED; by status: ${byStatus.map((row) => `${row.status.replace('OBJECTIVE_STATUS_', '')} ${row.n}`).join(', ')}`);

    // Events.
    const [numbering] = await this.query<{ objectives: number; events: number; gapped: number; unfinished: number; silent: number }>(`
      WITH per AS (SELECT objective_id, count(*) AS n, count(DISTINCT sequence) AS d, min(sequence) AS lo, max(sequence) AS hi FROM objective_events GROUP BY objective_id),
           last AS (SELECT DISTINCT ON (objective_id) objective_id, type FROM objective_events ORDER BY objective_id, sequence DESC)
      SELECT (SELECT count(*)::int FROM per) AS objectives,
             (SELECT coalesce(sum(n), 0)::int FROM per) AS events,
             (SELECT count(*)::int FROM per WHERE n <> d OR lo <> 1 OR hi <> n) AS gapped,
             (SELECT count(*)::int FROM last WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') <> 'FINALIZED') AS unfinished,
             (SELECT count(*)::int FROM objectives o WHERE NOT EXISTS (SELECT 1 FROM objective_events e WHERE e.objective_id = o.id)) AS silent`);
    this.check('events numbered 1..N without gaps per objective, FINALIZED last',
      numbering.gapped === 0 && numbering.unfinished === 0 && numbering.silent === 0,
      `${numbering.events} events over ${numbering.objectives} objectives; ${numbering.gapped} with a gap or a repeat, ${numbering.unfinished} not ending in FINALIZED, ${numbering.silent} objectives without events`);

    // Tool effects.
    // The event type column holds TOOL_CALLED or OBJECTIVE_EVENT_TYPE_TOOL_CALLED; the call id is wherever the event's data keeps it.
    const calls = await this.query<{ id: string }>(`
      SELECT jsonb_path_query_first(data, 'strict $.**.toolCallId') #>> '{}' AS id FROM objective_events
      WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') = 'TOOL_CALLED'`);
    const callIds = new Set(calls.map((row) => row.id));
    const results = await this.query<{ id: string; type: string }>(`
      SELECT jsonb_path_query_first(data, 'strict $.**.toolCallId') #>> '{}' AS id, replace(type, 'OBJECTIVE_EVENT_TYPE_', '') AS type FROM objective_events
      WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') IN ('TOOL_RESULT', 'TOOL_ERROR')`);
    const resultsPerCall = new Map<string, number>();
    for (const row of results) resultsPerCall.set(row.id, (resultsPerCall.get(row.id) ?? 0) + 1);
    const toolErrors = results.filter((row) => row.type === 'TOOL_ERROR').length;
    const keys = [...this.tool.byKey.keys()];
    const strangers = keys.filter((key) => !callIds.has(key)).length;
    const unsent = [...callIds].filter((id) => !this.tool.byKey.has(id)).length;
    const notOneResult = [...callIds].filter((id) => resultsPerCall.get(id) !== 1).length;
    const resent = [...this.tool.byKey.values()].filter((requests) => requests.length > 1);
    const resentAfterAnswer = resent.filter((requests) => requests.some((request) => request.afterAnswer)).length;
    const resentOutside = resent.filter((requests) => requests.slice(1).some((request) => !this.inWindow(request.receivedAt, request.receivedAt))).length;
    this.check('tool calls: each persisted call reached the tool under its own id, one result each',
      strangers === 0 && unsent === 0 && notOneResult === 0 && toolErrors === 0 && this.tool.keyless === 0 && callIds.size === calls.length,
      `${calls.length} TOOL_CALLED (${callIds.size} distinct ids), ${keys.length} distinct Idempotency-Keys at the tool, ${strangers} keys not a persisted call, ${unsent} calls never sent, ${notOneResult} calls without exactly one result, ${toolErrors} TOOL_ERROR, ${this.tool.keyless} requests without a key`);
    const deploy = this.deploy;
    const resentInDeploy = deploy ? resent.filter((requests) => requests.slice(1).some((request) => request.receivedAt >= deploy.start && request.receivedAt <= deploy.end + GRACE_MS)).length : 0;
    const sentInDeploy = deploy ? this.tool.requests.filter((request) => request.receivedAt >= deploy.start && request.receivedAt <= deploy.end).length : 0;
    this.check('rolling deploy (a node joins, a node SIGTERMed and restarted): no tool call received twice, the stopped node exited 0',
      deploy !== undefined && deploy.exitCode === 0 && resentInDeploy === 0 && sentInDeploy > 0,
      deploy
        ? `${((deploy.end - deploy.start) / 1000).toFixed(1)} s, ${sentInDeploy} tool requests received meanwhile, ${resentInDeploy} keys received again during it (or within ${GRACE_MS / 1000} s after), exit code ${deploy.exitCode}`
        : 'the deploy did not run');
    this.check('each tool effect once per tool call id (at-least-once sends, same key; re-sends only in fault windows)',
      resentOutside === 0 && strangers === 0,
      `${this.tool.requests.length} requests for ${keys.length} keys: effects applied ${keys.length} (once per key); ${resent.length} keys sent more than once, ${resentAfterAnswer} of them after the tool had answered (the answer lost with a node), ${resentOutside} re-sent outside a fault window`);

    // Webhooks.
    const events = await this.query<{ id: string; agent_id: string; objective_id: string; sequence: number; created_at: Date }>(
      'SELECT e.id, o.agent_id, e.objective_id, e.sequence, e.created_at FROM objective_events e JOIN objectives o ON o.id = e.objective_id');
    const deliveries = await this.query<{ id: string; agent_id: string; objective_event_id: string; status: string; attempt_count: number }>(
      'SELECT id, agent_id, objective_event_id, status, attempt_count FROM webhook_deliveries');
    const unsigned = this.receivers.receipts.filter((receipt) => !receipt.verified);
    this.check('every webhook request verified with standardwebhooks',
      unsigned.length === 0,
      `${this.receivers.receipts.length} requests, ${unsigned.length} not verified${unsigned.length ? ` (first: ${unsigned[0].error})` : ''}`);
    const perEvent = new Map<string, number>();
    for (const delivery of deliveries) perEvent.set(delivery.objective_event_id, (perEvent.get(delivery.objective_event_id) ?? 0) + 1);
    const undelivered = events.filter((event) => !perEvent.has(event.id));
    const eventsWithTwo = [...perEvent.values()].filter((n) => n > 1).length;
    const lost = undelivered.slice(0, 10).map((event) => {
      const at = event.created_at.getTime();
      const window = this.windows.find((w) => at >= w.start && at <= w.end);
      return `${event.id} (${event.objective_id} #${event.sequence}, persisted at ${stamp(at)}${window ? `, during "${window.name}"` : ''})`;
    });
    this.check('one delivery per persisted event (none dropped, none doubled)', undelivered.length === 0 && eventsWithTwo === 0,
      `${events.length} events, ${deliveries.length} deliveries, ${undelivered.length} events without a delivery${lost.length ? `: ${lost.join('; ')}` : ''}, ${eventsWithTwo} events with more than one`);

    for (const kind of RECEIVER_KINDS) {
      const agentIds = new Set(this.agents.filter((agent) => agent.kind === kind).map((agent) => agent.id));
      const kindEvents = events.filter((event) => agentIds.has(event.agent_id));
      const kindDeliveries = deliveries.filter((delivery) => agentIds.has(delivery.agent_id));
      const deliveryIds = new Set(kindDeliveries.map((delivery) => delivery.id));
      const receipts = this.receivers.receipts.filter((receipt) => receipt.kind === kind && receipt.verified);
      const statuses = countBy(kindDeliveries.map((delivery) => delivery.status.replace('WEBHOOK_DELIVERY_STATUS_', '')));
      const attempts = kindDeliveries.reduce((sum, delivery) => sum + delivery.attempt_count, 0);
      if (kind === 'gone') {
        const goneAt = this.receivers.firstGoneAt();
        const late = goneAt === undefined ? 0 : receipts.filter((receipt) => receipt.receivedAt > goneAt + GONE_GRACE_MS).length;
        const disabled = kindDeliveries.filter((delivery) => delivery.status === 'WEBHOOK_DELIVERY_STATUS_DISABLED').length;
        this.check('receiver "gone" (410): every delivery DISABLED, nothing sent after the first 410',
          disabled === kindDeliveries.length && kindDeliveries.length === kindEvents.length && kindEvents.length > 0 && late === 0 && goneAt !== undefined,
          `${kindEvents.length} events, ${kindDeliveries.length} deliveries (${statuses}), ${receipts.length} requests received (${new Set(receipts.map((r) => r.webhookId)).size} ids), ${late} more than ${GONE_GRACE_MS / 1000} s after the first 410`);
        continue;
      }
      const accepted = receipts.filter((receipt) => receipt.status >= 200 && receipt.status < 300);
      const acceptedIds = new Set(accepted.map((receipt) => receipt.webhookId));
      const allIds = new Set(receipts.map((receipt) => receipt.webhookId));
      const unknownIds = [...allIds].filter((id) => !deliveryIds.has(id)).length;
      const idsPerEvent = new Map<string, Set<string>>();
      for (const receipt of receipts) {
        const ids = idsPerEvent.get(receipt.eventId ?? '') ?? new Set<string>();
        ids.add(receipt.webhookId);
        idsPerEvent.set(receipt.eventId ?? '', ids);
      }
      const eventsWithTwoIds = [...idsPerEvent.values()].filter((ids) => ids.size > 1).length;
      const completedDeliveries = kindDeliveries.filter((delivery) => delivery.status === 'WEBHOOK_DELIVERY_STATUS_COMPLETED').length;
      const repeats = accepted.length - acceptedIds.size;
      const firstAccepted = new Set<string>();
      let repeatsOutside = 0;
      for (const receipt of accepted) {
        if (firstAccepted.has(receipt.webhookId) && !this.inWindow(receipt.receivedAt, receipt.receivedAt)) repeatsOutside += 1;
        firstAccepted.add(receipt.webhookId);
      }
      this.check(`receiver "${kind}": distinct webhook-ids received = events persisted, every delivery COMPLETED`,
        acceptedIds.size === kindEvents.length && allIds.size === kindEvents.length && kindDeliveries.length === kindEvents.length
          && completedDeliveries === kindDeliveries.length && unknownIds === 0 && eventsWithTwoIds === 0 && kindEvents.length > 0,
        `${kindEvents.length} events persisted, ${acceptedIds.size} distinct webhook-ids accepted (${allIds.size} seen), ${kindDeliveries.length} deliveries (${statuses}, ${attempts} attempts), ${receipts.length} requests (${repeats} repeats of an accepted id, same id, ${repeatsOutside} of them outside the fault windows), ${unknownIds} unknown ids, ${eventsWithTwoIds} events under two ids`);

      // Order: per objective, the first receipt of each sequence comes in increasing sequence order.
      const firsts = new Map<string, number[]>();
      const seen = new Set<string>();
      for (const receipt of receipts) {
        const key = `${receipt.objectiveId}:${receipt.sequence}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const list = firsts.get(receipt.objectiveId ?? '') ?? [];
        list.push(receipt.sequence ?? -1);
        firsts.set(receipt.objectiveId ?? '', list);
      }
      const outOfOrder = [...firsts.values()].filter((list) => list.some((sequence, i) => i > 0 && sequence < list[i - 1])).length;
      const skipping = [...firsts.values()].filter((list) => list[0] !== 1 || list.some((sequence, i) => i > 0 && sequence > list[i - 1] + 1)).length;
      this.check(`receiver "${kind}": events in order per objective (first receipts in increasing sequence)`, outOfOrder === 0,
        `${firsts.size} objectives, ${outOfOrder} with a sequence received after a later one, ${skipping} with a sequence never received (counted above)`);
    }

    // The API.
    const failures = this.api.filter((record) => record.status === 0 || record.status >= 500);
    const outside = failures.filter((record) => !this.inWindow(record.start, record.end));
    const inside = failures.length - outside.length;
    const describe = (records: ApiRecord[]) => Object.entries(countBy(records.map((record) => (record.status === 0 ? `no answer (${record.error?.slice(0, 60)})` : String(record.status))))).map(([what, n]) => `${what}: ${n}`).join(', ');
    this.check('no 5xx (nor connection failure) from the API outside the fault windows', outside.length === 0,
      `${this.api.length} requests; inside the windows ${inside} (${describe(failures.filter((record) => this.inWindow(record.start, record.end)))}); outside ${outside.length}${outside.length ? ` (${describe(outside)}; first: ${outside[0].method} ${outside[0].route} to ${outside[0].node} at ${stamp(outside[0].start)})` : ''}`);
  }

  report(): boolean {
    console.log('\nFault windows:');
    for (const window of this.windows) console.log(`  ${stamp(window.start)} → ${stamp(window.end)}  ${window.name}`);
    console.log('\nChecks:');
    for (const check of this.checks) console.log(`  ${check.pass ? 'PASS' : 'FAIL'}  ${check.name}\n        ${check.figures}`);
    const failed = this.checks.filter((check) => !check.pass).length;
    const problems = this.nodes.map((node) => `${node.name}: ${node.problems().length}`).join(', ');
    console.log(`\nwarnings and errors logged by the nodes' current starts: ${problems}`);
    console.log(failed === 0 ? `\nchaos run PASSED (${this.checks.length} checks)` : `\nchaos run FAILED: ${failed} of ${this.checks.length} checks`);
    return failed === 0;
  }

  // ---------------------------------------------------------------- teardown

  async tearDown(keep: boolean): Promise<void> {
    clearInterval(this.loadTimer);
    for (const timer of this.failingTimers) clearTimeout(timer);
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

function countBy(values: string[]): Record<string, number> & { toString(): string } {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  Object.defineProperty(counts, 'toString', { value: () => Object.entries(counts).map(([key, n]) => `${key} ${n}`).join(', ') || 'none', enumerable: false });
  return counts;
}

async function main(): Promise<number> {
  assertBuilt();
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-chaos-'));
  // Postgres runs as its own user and must reach its folder inside.
  await fs.chmod(root, 0o755);
  const run = new ChaosRun(root);
  let tornDown = false;
  const interrupt = (signal: NodeJS.Signals) => {
    say(`${signal}: cleaning up`);
    if (tornDown) process.exit(130);
    tornDown = true;
    void run.tearDown(false).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let passed = false;
  try {
    await run.setUp();
    run.startLoad();
    await run.runFaults();
    await run.stopLoad();
    const quiet = await run.waitQuiet();
    await run.runChecks(quiet);
    passed = run.report();
    return passed ? 0 : 1;
  } catch (error) {
    console.error(`chaos run broke: ${(error as Error).stack ?? error}`);
    return 2;
  } finally {
    if (!tornDown) {
      tornDown = true;
      await run.tearDown(!passed || process.env.CHAOS_KEEP === '1');
    }
  }
}

void main().then((code) => process.exit(code));
