// Two BUILT nodes on a three-server NATS cluster (issue 29 item 4): every
// stream and durable consumer the nodes declare has 3 replicas
// (AGENTRT_JETSTREAM_REPLICAS=3), NATS_URL lists the three servers, and the
// server leading the JetStream meta group, the OBJECTIVE_EVENTS stream and the
// webhook durable (leaderships moved there first) is killed with -9 under a steady
// stream of objectives (one HTTP tool call each, webhooks on), then started
// again on its folder. Nothing may be lost: every objective COMPLETED, every
// persisted event in the stream and at the webhook receiver under one
// webhook-id, each tool call sent once under its Idempotency-Key. The figures
// (objectives, events, deliveries, recovery times) are printed, not asserted.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { eventuallyValue } from '../support/eventually';
import { NatsCluster } from '../support/nats-cluster';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { TwoNodes } from '../support/two-nodes';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import type { ServeProcess } from './cli-process';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SHARD_COUNT = 8;
const REPLICAS = 3;
const OBJECTIVES_PER_SECOND = 4;
/** Objectives completed before the kill: the load is flowing through every path (tool, outbox, webhooks). */
const COMPLETED_BEFORE_KILL = 6;
/** How long the load goes on with one server dead, and after its restart. */
const LOAD_WHILE_DEAD_MS = 5_000;
const LOAD_AFTER_RESTART_MS = 2_000;
const EVENT_STREAM = 'OBJECTIVE_EVENTS';

describe('two nodes on a three-server NATS cluster (JetStream replicas 3), one server killed with -9 under load', function () {
  this.timeout(240_000);
  let root: string;
  let cluster: NatsCluster;
  let agentrt: TwoNodes | undefined;
  let pool: Pool;
  let tool: TestToolServer;
  let receiver: WebhookReceiver;
  let verifier: Webhook;
  const nodes: ServeProcess[] = [];
  let workspaceId: string;
  let agentId: string;

  /** A client on the servers that run now (a dead one in the list only slows its first connect). */
  async function natsClient(): Promise<NatsConnection> {
    return connect({ servers: cluster.servers.filter((server) => server.running).map((server) => server.url), reconnect: false, timeout: 5_000 });
  }

  async function withJetStream<T>(use: (connection: NatsConnection) => Promise<T>): Promise<T> {
    const connection = await natsClient();
    try {
      return await use(connection);
    } finally {
      await connection.close();
    }
  }

  /** The leaders of OBJECTIVE_EVENTS and of the webhook intake durable. */
  async function leaders(connection: NatsConnection): Promise<{ stream?: string; durable?: string; durableName?: string }> {
    // A short timeout: while a stream has no leader its info request goes unanswered, and the samplers below time elections with it.
    const manager = await jetstreamManager(connection, { timeout: 1_000 });
    const stream = await manager.streams.info(EVENT_STREAM);
    for await (const consumer of manager.consumers.list(EVENT_STREAM)) {
      if (consumer.name.endsWith('-webhooks')) return { stream: stream.cluster?.leader, durable: consumer.cluster?.leader, durableName: consumer.name };
    }
    return { stream: stream.cluster?.leader };
  }

  /**
   * Moves the leadership of the stream and of the durable (JetStream picks a
   * random other peer at each step-down) onto the JetStream meta leader, so
   * that one server leads all three. The meta leadership itself can only be
   * moved from the system account, which this cluster has not.
   * @returns the roles held by one server in the end
   */
  async function gatherLeadershipsOnMetaLeader(): Promise<{ meta: string; stream?: string; durable?: string }> {
    const meta = await cluster.waitReady();
    return withJetStream(async (connection) => {
      let now = await leaders(connection);
      for (let attempt = 0; attempt < 16 && (now.stream !== meta || now.durable !== meta); attempt += 1) {
        const before = now;
        const [api, moved] = before.stream !== meta
          ? [`$JS.API.STREAM.LEADER.STEPDOWN.${EVENT_STREAM}`, (after: typeof now) => after.stream !== undefined && after.stream !== before.stream]
          : [`$JS.API.CONSUMER.LEADER.STEPDOWN.${EVENT_STREAM}.${before.durableName}`, (after: typeof now) => after.durable !== undefined && after.durable !== before.durable];
        await connection.request(api, undefined, { timeout: 5_000 });
        now = await eventuallyValue(async () => {
          const after = await leaders(connection).catch(() => undefined);
          return after && moved(after) ? after : undefined;
        }, `a new leader after ${api}`, 30_000, 100);
      }
      return { meta, stream: now.stream, durable: now.durable };
    });
  }

  async function request(node: ServeProcess, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const response = await fetch(`${node.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${agentrt!.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, body: parsed };
  }

  async function call(method: string, route: string, body?: unknown): Promise<any> {
    const answer = await request(nodes[0], method, route, body);
    assert.ok(answer.status < 300, `${method} ${route}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  async function query<Row = any>(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await pool.query(text, values)).rows as Row[];
  }

  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-nats-cluster-'));
    cluster = await NatsCluster.start(path.join(root, 'nats'));
    tool = await startTestToolServer();
    receiver = await startWebhookReceiver();
    // The cluster is alone on these NATS servers: the configured subject prefix and stream names.
    agentrt = new TwoNodes({
      name: 'nats-cluster',
      natsUrl: cluster.urlList,
      ownBusNames: false,
      shardCount: SHARD_COUNT,
      env: {
        AGENTRT_JETSTREAM_REPLICAS: String(REPLICAS),
        AGENTRT_ALLOW_PRIVATE_NETWORK: 'true',
        AGENTRT_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
        AGENTRT_RATE_LIMIT_PER_SECOND: '10000',
        AGENTRT_RATE_LIMIT_BURST: '10000',
      },
    });
    await agentrt.start();
    nodes.push(...(agentrt.nodes as ServeProcess[]));
    pool = new Pool({ connectionString: agentrt.database!.url, max: 2 }).on('error', () => undefined);
    await agentrt.balanced();

    workspaceId = (await call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    verifier = new Webhook((await call('GET', '/v1/account')).info.webhookEventsHmacSecret.replace(/^wh_/, 'whsec_'));
    const effect = await call('POST', `/v1/workspaces/${workspaceId}/tools`, {
      metadata: { name: 'effect' }, spec: { description: 'Performs an effect once per Idempotency-Key', http: { url: `${tool.url}/idempotent`, method: 'POST' } },
    });
    agentId = (await call('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'clustered' }, spec: { webhookEventsUrl: `${receiver.url}/events` } })).metadata.id;
    const variation = await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations`, {
      metadata: { name: 'v1' }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: 'builtin/scripted' } },
    });
    await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: effect.metadata.id });
  });

  afterEach(async function () {
    // NATS_CLUSTER_TEST_LOGS=<folder>: keep every output there, passed or failed.
    const keep = process.env.NATS_CLUSTER_TEST_LOGS;
    if (keep) {
      await fs.mkdir(keep, { recursive: true });
      for (const [index, node] of nodes.entries()) await fs.writeFile(path.join(keep, `node${index}.log`), `${node.output().stdout}\n--- stderr ---\n${node.output().stderr}`);
      await fs.writeFile(path.join(keep, 'nats.log'), cluster?.logs() ?? '');
    }
    if (this.currentTest?.state !== 'failed') return;
    for (const node of nodes) process.stderr.write(`node output: ${node.output().stdout.slice(-20_000)}\n${node.output().stderr}\n`);
    process.stderr.write(`NATS cluster output:\n${cluster?.logs().slice(-20_000)}\n`);
  });

  after(async () => {
    await pool?.end();
    await agentrt?.close();
    await tool?.close();
    await receiver?.close();
    await cluster?.stop();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it('declares every stream and the webhook durable consumer with 3 replicas, each on its own server', async () => {
    await withJetStream(async (connection) => {
      const manager = await jetstreamManager(connection);
      const streams: StreamInfo[] = [];
      for await (const stream of manager.streams.list()) streams.push(stream);
      assert.ok(streams.some((stream) => stream.config.name === EVENT_STREAM), `${EVENT_STREAM} declared (have ${streams.map((stream) => stream.config.name).join(', ')})`);
      assert.ok(streams.length >= 2, `the runtime's own stream and ${EVENT_STREAM} (have ${streams.map((stream) => stream.config.name).join(', ')})`);
      for (const stream of streams) {
        assert.equal(stream.config.num_replicas, REPLICAS, `stream ${stream.config.name}: num_replicas`);
        const peers = [stream.cluster?.leader, ...(stream.cluster?.replicas ?? []).map((replica) => replica.name)];
        assert.equal(new Set(peers).size, REPLICAS, `stream ${stream.config.name} placed on ${REPLICAS} servers (${peers.join(', ')})`);
      }
      const durables: Array<{ stream: string; name: string; replicas: number; peers: number }> = [];
      for (const stream of streams) {
        for await (const consumer of manager.consumers.list(stream.config.name)) {
          if (!consumer.config.durable_name) continue;
          const peers = new Set([consumer.cluster?.leader, ...(consumer.cluster?.replicas ?? []).map((replica) => replica.name)]).size;
          durables.push({ stream: stream.config.name, name: consumer.name, replicas: consumer.config.num_replicas ?? 0, peers });
        }
      }
      const webhookDurables = durables.filter((durable) => durable.stream === EVENT_STREAM && durable.name.endsWith('-webhooks'));
      assert.equal(webhookDurables.length, 1, `one webhook intake durable on ${EVENT_STREAM} (have ${JSON.stringify(durables)})`);
      // 0 would mean "as the stream": the node declares the count itself, so a stream made elsewhere with fewer does not lower it.
      for (const durable of durables) {
        assert.equal(durable.replicas, REPLICAS, `durable ${durable.stream}/${durable.name}: num_replicas`);
        assert.equal(durable.peers, REPLICAS, `durable ${durable.stream}/${durable.name} placed on ${REPLICAS} servers`);
      }
    });
  });

  it('loses no event, no webhook and no objective when the server leading JetStream (meta group, stream, durable) is killed with -9, and takes it back', async () => {
    const created = new Map<number, { id: string; answeredAt: number }>();
    const failedCreates: Array<{ index: number; why: string }> = [];
    const answers = new Map<string, number>();
    const creations: Array<Promise<void>> = [];
    let next = 0;

    async function createObjective(index: number): Promise<void> {
      const body = { agentId, initialMessage: `CALL effect {"n": ${index}}\nSAY done ${index}` };
      const deadline = Date.now() + 90_000;
      let last = '';
      while (Date.now() < deadline) {
        const node = nodes[index % nodes.length];
        try {
          const answer = await request(node, 'POST', `/v1/workspaces/${workspaceId}/objectives`, body, { 'idempotency-key': `cluster-${index}` });
          answers.set(String(answer.status), (answers.get(String(answer.status)) ?? 0) + 1);
          if (answer.status < 300) {
            created.set(index, { id: answer.body.metadata.id, answeredAt: Date.now() });
            return;
          }
          last = `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
          if (answer.status < 500 && answer.status !== 429 && answer.status !== 409) break;
        } catch (error) {
          answers.set('no answer', (answers.get('no answer') ?? 0) + 1);
          last = (error as Error).message;
        }
        await sleep(250);
      }
      failedCreates.push({ index, why: last });
    }

    const completedIds = async () =>
      new Set((await query<{ id: string }>(`SELECT id FROM objectives WHERE status = 'OBJECTIVE_STATUS_COMPLETED'`)).map((row) => row.id));
    const receivedEventIds = () => {
      const ids = new Set<string>();
      for (const webhook of receiver.at('/events')) {
        try {
          ids.add((verifier.verify(webhook.body, webhook.headers) as any).data.objectiveEvent.metadata.id);
        } catch {
          // unverifiable: counted in the assertions below
        }
      }
      return ids;
    };

    // The hardest single loss: one server leading JetStream's meta group, the stream the outbox publishes to and the durable the webhook intake reads.
    const gathered = await gatherLeadershipsOnMetaLeader();
    const loadStartedAt = Date.now();
    const load = setInterval(() => creations.push(createObjective(next++)), 1000 / OBJECTIVES_PER_SECOND);
    let killedAt = 0;
    let restartedAt = 0;
    try {
      await eventuallyValue(async () => (await completedIds()).size >= COMPLETED_BEFORE_KILL, `${COMPLETED_BEFORE_KILL} objectives COMPLETED before the kill`, 30_000, 200);

      const roles = await withJetStream(async (connection) => {
        const manager = await jetstreamManager(connection);
        const stream = await manager.streams.info(EVENT_STREAM);
        let durableLeader: string | undefined;
        for await (const consumer of manager.consumers.list(EVENT_STREAM)) if (consumer.name.endsWith('-webhooks')) durableLeader = consumer.cluster?.leader;
        return { streamLeader: stream.cluster!.leader!, durableLeader, metaLeader: await cluster.metaLeader() };
      });
      const victim = cluster.byName(roles.streamLeader);
      // Which server each node's connection is on: a node on the killed server reconnects (and re-pulls), the others do not.
      const nodeIds = nodes.map((node) => String(node.logs().find((line) => line.msg === 'listening')?.nodeId));
      const connectedTo = await Promise.all(cluster.servers.map(async (server) => ({ server: server.name, names: await server.clientNames() })));
      const placement = nodeIds.map((nodeId, index) => `node${index} on ${connectedTo.filter((entry) => entry.names.includes(nodeId)).map((entry) => entry.server).join('+') || '?'}`);
      const led = [`${EVENT_STREAM} stream`, ...(roles.durableLeader === victim.name ? ['webhook durable'] : []), ...(roles.metaLeader === victim.name ? ['JetStream meta group'] : [])];
      killedAt = Date.now();
      await victim.stop('SIGKILL');
      const killedAtObjective = next;
      if (gathered.stream !== gathered.meta || gathered.durable !== gathered.meta) console.log(`      (the leaderships could not be gathered on one server: ${JSON.stringify(gathered)})`);
      console.log(`      kill -9 ${victim.name} (leader of: ${led.join(', ')}; ${placement.join(', ')}) after ${((killedAt - loadStartedAt) / 1000).toFixed(1)} s of load, ${killedAtObjective} objectives sent`);

      // Back to service, each step timed when first seen: new leaders of the stream and of the durable, an objective sent
      // after the kill COMPLETED, and one COMPLETED with every webhook received.
      const seen: { stream?: { name: string; at: number }; durable?: { name: string; at: number }; completedAt?: number; serviceAt?: number } = {};
      // Two samplers: a JetStream request to a leaderless stream waits for its timeout, which must not delay the other one.
      await Promise.all([
        eventuallyValue(async () => {
          const now = await withJetStream(leaders).catch(() => ({ stream: undefined, durable: undefined }));
          if (!seen.stream && now.stream && now.stream !== victim.name) seen.stream = { name: now.stream, at: Date.now() };
          if (!seen.durable && now.durable && now.durable !== victim.name) seen.durable = { name: now.durable, at: Date.now() };
          return seen.stream && seen.durable;
        }, `new leaders of ${EVENT_STREAM} and of the webhook durable`, 90_000, 100),
        eventuallyValue(async () => {
          const completed = await completedIds();
          const after = [...created.entries()].filter(([index, objective]) => index >= killedAtObjective && completed.has(objective.id)).map(([, objective]) => objective.id);
          if (after.length === 0) return undefined;
          seen.completedAt ??= Date.now();
          const events = await query<{ id: string; objective_id: string }>('SELECT id, objective_id FROM objective_events WHERE objective_id = ANY($1)', [after]);
          const received = receivedEventIds();
          if (after.some((id) => events.filter((event) => event.objective_id === id).every((event) => received.has(event.id)))) seen.serviceAt ??= Date.now();
          return seen.serviceAt;
        }, 'an objective sent after the kill COMPLETED with every webhook received', 90_000, 100),
      ]);
      const stillDead = LOAD_WHILE_DEAD_MS - (Date.now() - killedAt);
      if (stillDead > 0) await sleep(stillDead);

      await victim.start();
      restartedAt = Date.now();
      await cluster.waitReady();
      const caughtUpAt = await eventuallyValue(async () => {
        try {
          const info = await withJetStream(async (connection) => (await jetstreamManager(connection)).streams.info(EVENT_STREAM));
          const replica = info.cluster?.replicas?.find((peer) => peer.name === victim.name);
          return info.cluster?.leader === victim.name || (replica?.current && !replica.offline) ? Date.now() : undefined;
        } catch {
          return undefined;
        }
      }, `${victim.name} a current replica of ${EVENT_STREAM} again`, 60_000, 100);
      const since = (at: number) => `${((at - killedAt) / 1000).toFixed(1)} s`;
      console.log(`      after the kill: new ${EVENT_STREAM} leader ${seen.stream!.name} at ${since(seen.stream!.at)}, new webhook durable leader ${seen.durable!.name} at ${since(seen.durable!.at)}, ` +
        `an objective sent after the kill COMPLETED at ${since(seen.completedAt!)}, and one with every webhook received at ${since(seen.serviceAt!)}; ` +
        `${victim.name} restarted after ${((restartedAt - killedAt) / 1000).toFixed(1)} s, current again ${((caughtUpAt - restartedAt) / 1000).toFixed(1)} s later`);
      await sleep(LOAD_AFTER_RESTART_MS);
    } finally {
      clearInterval(load);
      await Promise.all(creations);
    }

    // Quiet: every objective terminal, every delivery terminal, every event received.
    const ids = [...created.values()].map((objective) => objective.id);
    await eventuallyValue(async () => {
      const [state] = await query<{ open: number; events: number; pending: number }>(`
        SELECT (SELECT count(*)::int FROM objectives WHERE id = ANY($1) AND status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')) AS open,
               (SELECT count(*)::int FROM objective_events) AS events,
               (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'WEBHOOK_DELIVERY_STATUS_PENDING') AS pending`, [ids]);
      return state.open === 0 && state.pending === 0 && receivedEventIds().size >= state.events;
    }, 'every objective and delivery terminal, every event received', 60_000, 250);

    // Objectives.
    assert.deepEqual(failedCreates, [], 'every create accepted (retried with its Idempotency-Key)');
    const statuses = await query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM objectives WHERE id = ANY($1) GROUP BY status', [ids]);
    assert.deepEqual(statuses, [{ status: 'OBJECTIVE_STATUS_COMPLETED', n: created.size }], 'every objective COMPLETED');
    const [{ n: objectives }] = await query<{ n: number }>('SELECT count(*)::int AS n FROM objectives');
    assert.equal(objectives, created.size, 'one objective per create');

    // Events: persisted = in the stream = received under one webhook-id each.
    const events = await query<{ id: string }>('SELECT id FROM objective_events');
    const eventIds = new Set(events.map((event) => event.id));
    const streamIds = await withJetStream(async (connection) => {
      const manager = await jetstreamManager(connection);
      const info = await manager.streams.info(EVENT_STREAM);
      const consumer = await jetstream(connection).consumers.get(EVENT_STREAM, { headers_only: true });
      const seen: string[] = [];
      while (seen.length < info.state.messages) {
        let read = 0;
        for await (const message of await consumer.fetch({ max_messages: info.state.messages - seen.length, expires: 2_000 })) {
          read += 1;
          seen.push(message.headers?.get('Nats-Msg-Id') ?? '');
        }
        if (read === 0) break;
      }
      return { ids: seen, messages: info.state.messages };
    });
    assert.equal(streamIds.messages, events.length, `messages in ${EVENT_STREAM} = events persisted`);
    assert.deepEqual([...new Set(streamIds.ids)].sort(), [...eventIds].sort(), `every persisted event in ${EVENT_STREAM}, under its id`);

    const webhooks = receiver.at('/events');
    const idsByEvent = new Map<string, Set<string>>();
    let unverified = 0;
    for (const webhook of webhooks) {
      try {
        const eventId = (verifier.verify(webhook.body, webhook.headers) as any).data.objectiveEvent.metadata.id as string;
        idsByEvent.set(eventId, (idsByEvent.get(eventId) ?? new Set()).add(webhook.id));
      } catch {
        unverified += 1;
      }
    }
    assert.equal(unverified, 0, 'every webhook request verified');
    assert.deepEqual([...idsByEvent.keys()].sort(), [...eventIds].sort(), 'a webhook for every persisted event, and none for another');
    const doubled = [...idsByEvent.entries()].filter(([, webhookIds]) => webhookIds.size > 1);
    assert.deepEqual(doubled, [], 'one webhook-id per event');
    const distinctWebhookIds = new Set(webhooks.map((webhook) => webhook.id)).size;
    assert.equal(distinctWebhookIds, events.length, 'distinct webhook-ids = events');
    const deliveries = await query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status');
    assert.deepEqual(deliveries, [{ status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', n: events.length }], 'one COMPLETED delivery per event');

    // Tool calls: each persisted call reached the tool once, under its own Idempotency-Key.
    const calls = await query<{ id: string }>(`
      SELECT jsonb_path_query_first(data, 'strict $.**.toolCallId') #>> '{}' AS id FROM objective_events
      WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') = 'TOOL_CALLED'`);
    const requestsByKey = new Map<string, number>();
    for (const received of tool.requestsTo('/idempotent')) {
      const key = String(received.headers['idempotency-key'] ?? '');
      requestsByKey.set(key, (requestsByKey.get(key) ?? 0) + 1);
    }
    assert.equal(calls.length, created.size, 'one tool call per objective');
    assert.deepEqual([...requestsByKey.keys()].sort(), calls.map((row) => row.id).sort(), 'the tool got the persisted calls, each under its id');
    const resent = [...requestsByKey.entries()].filter(([, count]) => count > 1);
    assert.deepEqual(resent, [], 'each tool call sent once');

    console.log(`      ${created.size} objectives COMPLETED, ${events.length} events persisted = ${streamIds.messages} in ${EVENT_STREAM}, ` +
      `${distinctWebhookIds} webhook-ids received in ${webhooks.length} requests, ${calls.length} tool calls (${tool.requestsTo('/idempotent').length} requests); ` +
      `create answers: ${[...answers.entries()].map(([status, n]) => `${status}: ${n}`).join(', ')}`);
  });
});
