// Webhook delivery through a node failure (issue 10 items 4 and 7), on two
// BUILT nodes in cluster mode over real Postgres and NATS: the node whose
// endpoint actor is sending a delivery is killed with SIGKILL while the
// receiver holds the request; the other node takes the endpoint over and sends
// the delivery again with the same webhook-id, then the objective's later
// events, in order. The receiver verifies every request with standardwebhooks
// and never sees two ids for one event.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { shardOf } from '../../src/sharding/fnv1a32';
import { webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';
import { deleteStream, deleteWebhookIntakeDurables, eventually } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { assertBuilt, cliEnv, startServe, type ServeProcess } from './cli-process';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const SHARD_COUNT = 8;

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('webhook delivery through a node kill (two built nodes, Postgres and NATS)', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  const dataDirs: string[] = [];
  let nodes: Array<ServeProcess | null> = [];
  let shared: Record<string, string>;
  let subjectPrefix: string;
  let token: string;
  let workspaceId: string;

  const liveNode = () => nodes.find((node): node is ServeProcess => node !== null)!;

  async function call(method: string, route: string, body?: unknown): Promise<any> {
    const response = await fetch(`${liveNode().url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text);
  }

  /** The index in `nodes` of the node owning an actor id's shard. */
  async function ownerOf(actorId: string): Promise<number> {
    const shard = shardOf(actorId, SHARD_COUNT);
    let owner = -1;
    await eventually(async () => {
      const status = await call('GET', '/v1/cluster');
      const ownerId = (status.nodes as Array<{ id: string; shards: number[] }>).find((node) => node.shards.includes(shard))?.id;
      owner = nodes.findIndex((node) => node?.logs().find((line) => line.msg === 'listening')?.nodeId === ownerId);
      return owner >= 0;
    }, `an owner for shard ${shard}`, 20_000);
    return owner;
  }

  before(async () => {
    assertBuilt();
    database = await createTestDatabase();
    receiver = await startWebhookReceiver();
    for (let index = 0; index < 2; index += 1) dataDirs.push(await fs.mkdtemp(path.join(os.tmpdir(), 'agentrt-webhook-e2e-')));
    const suffix = ulid().toLowerCase();
    subjectPrefix = `e2e_${suffix}`;
    shared = {
      DATABASE_URL: database.url,
      NATS_URL,
      AGENTRT_MASTER_KEY: randomBytes(32).toString('base64'),
      AGENTRT_SUBJECT_PREFIX: subjectPrefix,
      AGENTRT_EVENT_STREAM: `E2E_${suffix.toUpperCase()}`,
      AGENTRT_SHARD_COUNT: String(SHARD_COUNT),
      AGENTRT_ALLOW_PRIVATE_NETWORK: 'true',
      AGENTRT_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
      AGENTRT_RATE_LIMIT_PER_SECOND: '10000',
      AGENTRT_RATE_LIMIT_BURST: '10000',
      PORT: '0',
    };
    nodes = await Promise.all(dataDirs.map((dir) => startServe(cliEnv({ ...shared, AGENTRT_DATA_DIR: dir }))));
    const tokens = await Promise.all(dataDirs.map((dir) => fs.readFile(path.join(dir, 'global-api-key.token'), 'utf8').catch(() => null)));
    token = tokens.find((value) => value !== null)!.trim();
    workspaceId = (await call('GET', '/v1/account/workspaces')).items[0].metadata.id;
    // Balanced first: a shard handed over while the test runs would re-send the held delivery without any kill.
    await eventually(async () => {
      const status = await call('GET', '/v1/cluster');
      return status.nodes.length === 2 && status.nodes.every((node: { shards: number[] }) => node.shards.length === SHARD_COUNT / 2);
    }, 'both nodes holding half the shards', 60_000);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      for (const node of nodes) if (node) process.stderr.write(`node output: ${node.output().stdout.slice(-20_000)}\n${node.output().stderr}\n`);
    }
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node?.stop('SIGKILL')));
    await receiver?.close();
    await Promise.all(dataDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
    await deleteWebhookIntakeDurables(subjectPrefix).catch(() => undefined);
    await deleteStream(shared.AGENTRT_EVENT_STREAM).catch(() => undefined);
    await database?.drop();
  });

  it('sends a delivery again with the same webhook-id from the node that takes over, then the later events in order', async () => {
    const webhookUrl = `${receiver.url}/held`;
    // The first request of the first delivery is never answered: its sender is killed while it waits.
    let held: string | undefined;
    receiver.answer('/held', (webhook) => {
      if (held === undefined) held = webhook.id;
      return webhook.id === held && receiver.at('/held').filter((request) => request.id === held).length === 1 ? { status: 200, delayMs: 600_000 } : { status: 204 };
    });
    const agentId = (await call('POST', `/v1/workspaces/${workspaceId}/agents`, { metadata: { name: 'hooked' }, spec: { webhookEventsUrl: webhookUrl } })).metadata.id as string;
    await call('POST', `/v1/workspaces/${workspaceId}/agents/${agentId}/variations`, { metadata: { name: 'v1' }, spec: { prompt: 'You help.', modelConfig: { modelId: 'builtin/scripted' } } });
    const account = await call('GET', '/v1/account');
    const secret = account.info.webhookEventsHmacSecret as string;

    const objective = await call('POST', `/v1/workspaces/${workspaceId}/objectives`, { agentId, initialMessage: 'SAY one\nSAY two' });
    const objectiveId = objective.metadata.id as string;
    await eventually(async () => held !== undefined, 'the first delivery reached the receiver', 30_000);
    const owner = await ownerOf(webhookEndpointIdOf(agentId, webhookUrl));
    const killedAt = Date.now();
    await nodes[owner]!.stop('SIGKILL');
    nodes[owner] = null;

    let events: any[] = [];
    await eventually(async () => {
      const list = (await call('GET', `/v1/workspaces/${workspaceId}/objectives/${objectiveId}/events?limit=1000`)).items as any[];
      const finalized = list.at(-1)?.data.type === 'OBJECTIVE_EVENT_TYPE_FINALIZED';
      const deliveries = (await call('GET', `/v1/workspaces/${workspaceId}/agents/${agentId}/webhook_deliveries?limit=1000`)).items as any[];
      events = list;
      return finalized && deliveries.length === list.length && deliveries.every((row) => row.data.status === 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
    }, 'every delivery COMPLETED on the surviving node', 90_000);

    const requests = receiver.at('/held');
    const verifier = new Webhook(secret.replace(/^wh_/, 'whsec_'));
    const bodies = requests.map((request) => verifier.verify(request.body, request.headers) as any);
    const heldRequests = requests.filter((request) => request.id === held);
    assert.equal(heldRequests.length, 2, 'the held delivery was sent again once');
    assert.ok(heldRequests[1].receivedAt > killedAt, 'by the node that took over after the kill');
    const idsByEvent = new Map<string, Set<string>>();
    for (const [index, body] of bodies.entries()) {
      const eventId = body.data.objectiveEvent.metadata.id as string;
      idsByEvent.set(eventId, (idsByEvent.get(eventId) ?? new Set()).add(requests[index].id));
    }
    assert.deepEqual([...idsByEvent.keys()].sort(), events.map((event) => event.metadata.id).sort(), 'every event reached the receiver');
    for (const [eventId, ids] of idsByEvent) assert.equal(ids.size, 1, `one webhook-id for event ${eventId}`);
    const firstReceipts = bodies.map((body) => body.data.objectiveEvent.sequence as number).filter((sequence, index, all) => all.indexOf(sequence) === index);
    assert.deepEqual(firstReceipts, events.map((event) => event.sequence), 'first receipts in sequence order');
    const row = (await call('GET', `/v1/workspaces/${workspaceId}/agents/${agentId}/webhook_deliveries?limit=1000`)).items.find((item: any) => item.metadata.id === held);
    assert.equal(row.data.status, 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
  });
});
