// The objective behaviour on the real runtime (embedded mode over Postgres),
// with its effects served by the real libraries: `model.call` by the
// builtin/scripted model, `tool.call` by the ToolExecutor against a real HTTP
// tool server. Proves the pieces of issue 9 fit the stage-2 runtime: an
// objective runs to COMPLETED with no outside message after `start`, the tool
// sees the tool call id as its Idempotency-Key, and every event is published
// in sequence and projected in the same turns. (The API, the tables and the
// real projector are not built yet.) Events whose outbox rows keep no payload
// (the projector stores it) and that a node left unpublished when it stopped
// are published by the next node with the payloads the read model gives back.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { runtimeMetrics, type ActorRuntime } from '../../actors';
import { FailedPreconditionError } from '../../src/errors';
import { isId } from '../../src/ids';
import { ScriptedChatModel } from '../../src/models/scripted-model';
import type { ActorKind } from '../../src/ports/actor-behavior';
import type { ChatRequest } from '../../src/objectives/chat-model-types';
import type { ModelCallEffectInput, ToolCallEffectInput } from '../../src/objectives/objective-loop';
import { objectiveKindDeclaration, type ObjectiveReply } from '../../src/objectives/objective.behavior';
import { ObjectiveStatus } from '../../src/objectives/objective-state';
import { ToolExecutor } from '../../src/tools/tool-executor';
import { createDataSource } from '../../persistence/data-source';
import { eventually } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import type { FlakyPublisher } from '../support/flaky-publisher';
import { lookupTool, startOf } from '../unit/objectives/objective-driver';

const RUNTIME_OPTIONS = { shardCount: 8, outboxPollMs: 50 };

describe('objective behaviour on the runtime (scripted model, real tool server)', () => {
  let objectiveKind: ActorKind;
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  let publisher: FlakyPublisher;
  let toolServer: Server;
  let toolUrl: string;
  const toolRequests: Array<{ idempotencyKey: string | undefined; body: string }> = [];

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE test_objective_changes (id bigserial PRIMARY KEY, objective_id text NOT NULL, change jsonb NOT NULL)');
    toolServer = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        toolRequests.push({ idempotencyKey: request.headers['idempotency-key'] as string | undefined, body });
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ answer: 42 }));
      });
    });
    await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
    toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/lookup`;
    const model = new ScriptedChatModel();
    const tools = new ToolExecutor({
      secrets: {
        secretValues: async (_workspaceId, names) => {
          throw new FailedPreconditionError(`secret ${names[0]} does not exist`);
        },
      },
      mcp: { callTool: async () => Promise.reject(new Error('no MCP server in this test')) },
      urlPolicy: { allowPrivateNetwork: true },
    });
    objectiveKind = {
      ...objectiveKindDeclaration,
      effects: {
        'model.call': (_input: ModelCallEffectInput, context) =>
          model.complete(context.transientInput as ChatRequest, { signal: context.signal, deadline: context.deadline }),
        'tool.call': (input: ToolCallEffectInput, context) =>
          tools.executeToolCall({ tool: input.tool, toolCallId: input.toolCallId, arguments: input.arguments, context: input.context, signal: context.signal, deadline: context.deadline }),
      },
      projector: async (sql, changes) => {
        await sql.query('INSERT INTO test_objective_changes (objective_id, change) SELECT * FROM unnest($1::text[], $2::jsonb[])', [
          changes.map((change) => change.actorId),
          changes.map((change) => JSON.stringify(change.change)),
        ]);
      },
      // The projected event changes keep the envelopes: the outbox rows need not.
      projectedPayloads: (sql, ids) =>
        sql.query<{ id: string; payload: unknown }>(
          `SELECT change->'record'->>'id' AS id, change->'envelope' AS payload FROM test_objective_changes
           WHERE change->>'type' = 'objective_event' AND change->'record'->>'id' = ANY($1::text[])`,
          [ids],
        ),
    };
    ({ runtime, publisher } = await startEmbeddedTestRuntime(database.url, RUNTIME_OPTIONS, { kinds: [objectiveKind] }));
  });

  after(async () => {
    await runtime.stop();
    await new Promise((resolve) => toolServer.close(resolve));
    await dataSource.destroy();
    await database.drop();
  });

  it('runs an objective with one tool call to COMPLETED, publishing and projecting every event in sequence', async () => {
    const objectiveId = 'obj_01KRUNTIMETEST00000000001';
    const start = startOf({
      objectiveId,
      tools: [lookupTool({ executable: { ...lookupTool().executable, httpUrl: toolUrl } })],
      initialMessage: 'CALL lookup {"q":"meaning"}\nSAY done',
    });
    await runtime.ask('objective', objectiveId, { type: 'start', start });
    await eventually(async () => (await runtime.ask<ObjectiveReply>('objective', objectiveId, { type: 'get' })).info.status === ObjectiveStatus.COMPLETED, 'objective completed', 10_000);
    assert.equal(toolRequests.length, 1);
    assert.ok(isId('toolCall', toolRequests[0].idempotencyKey ?? ''), `the tool gets the service's id for the call as its Idempotency-Key: ${toolRequests[0].idempotencyKey}`);
    assert.deepEqual(JSON.parse(toolRequests[0].body), { q: 'meaning' });
    await eventually(() => publisher.inner.published().some((event) => event.subject.endsWith('.finalized')), 'events published');
    const published = publisher.inner.published().filter((event) => event.subject.includes(objectiveId));
    const sequences = published.map((event) => (JSON.parse(event.data) as { data: { objectiveEvent: { sequence: number } } }).data.objectiveEvent.sequence);
    assert.deepEqual(sequences, Array.from({ length: sequences.length }, (_, i) => i + 1));
    assert.ok(published.some((event) => event.subject.endsWith('.tool_result')), published.map((event) => event.subject).join(', '));
    const [{ events }] = await dataSource.query("SELECT count(*)::int AS events FROM test_objective_changes WHERE change->>'type' = 'objective_event' AND objective_id = $1", [objectiveId]);
    assert.equal(events, published.length, 'one projected event row per published event');
  });

  it('holds no actor while a tool call awaits approval: the actor stops after that turn and the approval activates it again', async () => {
    const objectiveId = 'obj_01KRUNTIMETEST00000000002';
    const risky = lookupTool({ requiresApproval: true, executable: { ...lookupTool().executable, httpUrl: toolUrl } });
    const start = startOf({ objectiveId, tools: [risky], initialMessage: 'CALL lookup {"q":"risky"}\nSAY approved' });
    const activations = async () => (await runtimeMetrics.activations.get()).values.find((value) => value.labels.kind === 'objective')?.value ?? 0;
    const reply = await runtime.ask<ObjectiveReply>('objective', objectiveId, { type: 'start', start });
    assert.equal(reply.info.status, ObjectiveStatus.RUNNING);
    await eventually(async () => {
      const [row] = await dataSource.query("SELECT count(*)::int AS n FROM test_objective_changes WHERE objective_id = $1 AND change->'info'->>'status' = $2", [objectiveId, ObjectiveStatus.AWAITING_APPROVAL]);
      return row.n > 0;
    }, 'awaiting approval');
    const before = await activations();
    // Stopped: the next command needs a new activation, which replays the journal to the waiting state.
    const waiting = await runtime.ask<ObjectiveReply>('objective', objectiveId, { type: 'get' });
    assert.equal(waiting.info.status, ObjectiveStatus.AWAITING_APPROVAL);
    assert.equal(await activations(), before + 1, 'the waiting actor had been passivated');
    await runtime.ask('objective', objectiveId, { type: 'approve', toolCallId: waiting.info.pendingToolCallIds[0] });
    await eventually(async () => (await runtime.ask<ObjectiveReply>('objective', objectiveId, { type: 'get' })).info.status === ObjectiveStatus.COMPLETED, 'completed after approval');
  });

  it('publishes, from the next node, the events a node left unpublished, with the payloads the read model keeps for their outbox rows', async () => {
    const objectiveId = 'obj_01KRUNTIMETEST00000000003';
    const start = startOf({
      objectiveId,
      tools: [lookupTool({ executable: { ...lookupTool().executable, httpUrl: toolUrl } })],
      initialMessage: 'CALL lookup {"q":"recovery"}\nSAY done',
    });
    // JetStream unreachable for the whole run: every event stays in the outbox.
    publisher.down = true;
    await runtime.ask('objective', objectiveId, { type: 'start', start });
    await eventually(async () => (await runtime.ask<ObjectiveReply>('objective', objectiveId, { type: 'get' })).info.status === ObjectiveStatus.COMPLETED, 'objective completed', 10_000);
    const envelopes: Array<{ id: string; envelope: unknown }> = await dataSource.query(
      `SELECT change->'record'->>'id' AS id, change->'envelope' AS envelope FROM test_objective_changes
       WHERE objective_id = $1 AND change->>'type' = 'objective_event' ORDER BY (change->'record'->>'sequence')::int`,
      [objectiveId],
    );
    const [outbox] = await dataSource.query('SELECT count(*)::int AS unpublished, count(payload)::int AS payloads FROM actor_outbox WHERE persistence_key = $1 AND published_at IS NULL', [
      `objective:${objectiveId}`,
    ]);
    assert.deepEqual(outbox, { unpublished: envelopes.length, payloads: 0 }, 'every event waits, its outbox row without a payload');
    assert.equal(publisher.inner.published().filter((event) => event.subject.includes(objectiveId)).length, 0);

    // The node stops without having published them; the next one owns the shard and publishes what it finds.
    await runtime.stop();
    ({ runtime, publisher } = await startEmbeddedTestRuntime(database.url, RUNTIME_OPTIONS, { kinds: [objectiveKind] }));
    const published = () => publisher.inner.published().filter((event) => event.subject.includes(objectiveId));
    await eventually(() => published().length === envelopes.length, 'the next node published the events');
    assert.deepEqual(
      published().map((event) => ({ id: event.id, envelope: JSON.parse(event.data) })),
      envelopes,
      'each event published once, in order, with the envelope the read model kept',
    );
    assert.match(JSON.stringify(envelopes.find((row) => JSON.stringify(row.envelope).includes('toolResult'))), /answer.*42/);
  });
});
