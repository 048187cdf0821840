// OpenTelemetry tracing (issue 27 item 4), end to end against a small OTLP/HTTP
// receiver: the real app with an embedded runtime over Postgres, a fake
// OpenRouter, the real tool server and a real webhook receiver. One trace runs
// from the request that created an objective through its turns, model calls,
// tool calls (an HTTP tool and an MCP server get `traceparent`) and webhook deliveries (the receiver
// gets `traceparent`, every event carries `traceId`); a sub-objective and a
// schedule's fire continue or start it. Spans also go out as OTLP/protobuf
// with its content type. With OTEL unset nothing carries a trace.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID } from '../support/agents-world';
import { eventuallyValue } from '../support/eventually';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startTestMcpServer, type TestMcpServer } from '../support/mcp-server';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';
import { activeTraceparent, tracingEnabled, traceHeaders } from '../../src/tracing/tracing';

/* eslint-disable @typescript-eslint/no-explicit-any */

const PROVIDER_MODEL = 'openai/gpt-4o-mini';
const SERVER = 2;
const CLIENT = 3;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The trace id and parent span id a traceparent header names. */
function parsed(traceparent: string | undefined): { traceId: string; spanId: string } {
  const match = TRACEPARENT.exec(traceparent ?? '');
  assert.ok(match, `a sampled W3C traceparent, got ${traceparent}`);
  return { traceId: match[1], spanId: match[2] };
}

interface World {
  api: TestApi;
  ws: WorkspaceFixture;
  tools: TestToolServer;
  hooks: WebhookReceiver;
}

/** An agent posting its events to `<hooks>/<name>`, one variation on `modelId`, with these assignments. */
async function agentWith(world: World, name: string, modelId: string, assignments: Array<Record<string, unknown>> = []): Promise<string> {
  const { api, ws, hooks } = world;
  const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name }, spec: { webhookEventsUrl: `${hooks.url}/${name}` } })).metadata.id as string;
  const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId } } });
  for (const assignment of assignments) {
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, assignment);
  }
  return agentId;
}

async function finished(world: World, objectiveId: string): Promise<{ objective: any; events: any[] }> {
  const { api, ws } = world;
  const base = `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}`;
  const objective = await eventuallyValue(async () => {
    const read = await api.request('GET', base, { token: ws.token });
    return read.status === 200 && TERMINAL_OBJECTIVE_STATUSES.includes(read.body.info.status) ? read.body : undefined;
  }, `objective ${objectiveId} finished`, 20_000);
  const events = (await api.request('GET', `${base}/events?limit=1000`, { token: ws.token })).body.items as any[];
  return { objective, events };
}

/** The webhooks `<hooks>/<path>` received for the objective, once one per event arrived. */
function delivered(world: World, path: string, objectiveId: string, count: number) {
  return eventuallyValue(async () => {
    const mine = world.hooks.at(`/${path}`).filter((webhook) => JSON.parse(webhook.body).data.objective.id === objectiveId);
    return mine.length >= count ? mine : undefined;
  }, `${count} deliveries of ${objectiveId}`, 20_000);
}

const ofTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter((span) => span.traceId === traceId);
const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

describe('tracing on (OTLP/HTTP JSON, embedded runtime)', function () {
  this.timeout(60_000);
  let otlp: OtlpReceiver;
  let openRouter: FakeOpenRouter;
  let mcp: TestMcpServer;
  const world = {} as World;

  before(async () => {
    otlp = await startOtlpReceiver();
    world.api = await startTestApi({
      runtime: { reminderPollMs: 200 },
      env: {
        AGENTRT_ALLOW_PRIVATE_NETWORK: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=t0k%3Den',
        OTEL_SERVICE_NAME: 'agentrt-tracing-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      logLevel: 'info',
    });
    world.ws = await workspaceFixture(world.api);
    world.tools = await startTestToolServer();
    world.hooks = await startWebhookReceiver();
    openRouter = await startFakeOpenRouter();
    mcp = await startTestMcpServer([{ name: 'search', description: 'Searches the docs', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }]);
    await created(world.api, world.ws.token, `/v1/workspaces/${world.ws.workspaceId}/ai_provider_keys`, {
      metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-tracing', openrouter: { baseUrl: openRouter.baseUrl } },
    });
  });

  after(async () => {
    await world.api?.close();
    await world.tools?.close();
    await world.hooks?.close();
    await openRouter?.close();
    await mcp?.close();
    await otlp?.close();
  });

  it('keeps the path of a request only when a route took it, not text a caller put in an unknown path', async () => {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const unknown = await world.api.request('GET', '/v1/no-such-thing/secret-looking-text', { token: world.ws.token, headers: { traceparent } });
    assert.equal(unknown.status, 404);
    const known = await world.api.request('GET', `/v1/workspaces/${world.ws.workspaceId}/agents`, { token: world.ws.token, headers: { traceparent } });
    assert.equal(known.status, 200);
    const [unmatched, matched] = await otlp.waitFor((all) => {
      const trace = ofTrace(all, traceId).filter((span) => span.kind === SERVER);
      return trace.length >= 2 ? [trace.find((span) => span.attributes['http.response.status_code'] === 404), trace.find((span) => span.attributes['http.response.status_code'] === 200)] : undefined;
    }, 'both requests\' spans');
    assert.ok(unmatched && matched);
    assert.equal(unmatched.name, 'GET');
    assert.ok(!JSON.stringify(unmatched.attributes).includes('secret-looking-text'), JSON.stringify(unmatched.attributes));
    assert.equal(matched.attributes['url.path'], `/v1/workspaces/${world.ws.workspaceId}/agents`);
    assert.equal(matched.attributes['http.route'], '/v1/workspaces/{workspaceId}/agents');
  });

  it('carries one trace from the request that created an objective through its turns, model calls, tool calls and webhook deliveries', async () => {
    const { api, ws, tools } = world;
    const lookup = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
      metadata: { name: 'lookup' }, spec: { description: 'Looks things up', http: { url: `${tools.url}/echo`, method: 'POST' } },
    });
    const search = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
      metadata: { name: 'docs-search' }, spec: { description: 'Searches the docs over MCP', mcp: { serverUrl: mcp.url, toolName: 'search' } },
    });
    const agentId = await agentWith(world, 'traced', PROVIDER_MODEL, [{ toolId: lookup.metadata.id }, { toolId: search.metadata.id }]);
    openRouter.reset();
    openRouter.answer(
      fakeAnswers.completion({
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"refunds"}' }, { id: 'call_2', name: 'docs-search', arguments: '{"q":"refunds"}' }], id: 'gen-traced-1',
      }),
      fakeAnswers.completion({ content: 'found it', id: 'gen-traced-2' }),
    );
    // The caller's own trace: the request continues it.
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, {
      token: ws.token, body: { agentId, initialMessage: 'find the refund policy' }, headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const objectiveId = response.body.metadata.id as string;
    const { objective, events } = await finished(world, objectiveId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));

    // Every event carries the objective's trace id: the events API, and the webhooks (the same envelope NATS carries).
    assert.ok(events.length >= 6, `events: ${events.map((event) => event.data.type).join(', ')}`);
    assert.deepEqual([...new Set(events.map((event) => event.traceId))], [traceId]);
    const webhooks = await delivered(world, 'traced', objectiveId, events.length);
    assert.deepEqual([...new Set(webhooks.map((webhook) => JSON.parse(webhook.body).data.objectiveEvent.traceId))], [traceId]);
    assert.deepEqual([...new Set(webhooks.map((webhook) => parsed(webhook.headers.traceparent).traceId))], [traceId], 'each receiver request joins the trace');
    const toolRequest = tools.requestsTo('/echo').at(-1)!;
    assert.equal(parsed(toolRequest.headers.traceparent as string).traceId, traceId, 'the tool gets the trace');
    const mcpCall = mcp.calls.at(-1)!;
    assert.equal(parsed(mcpCall.traceparent).traceId, traceId, 'the MCP server gets the trace');
    assert.equal(openRouter.requests[0].headers.traceparent, undefined, 'the model provider, a third party, is not sent the trace');

    const spans = await otlp.waitFor((all) => {
      const trace = ofTrace(all, traceId);
      return named(trace, 'webhook.deliver').length >= events.length && named(trace, `chat ${PROVIDER_MODEL}`).length === 2 ? trace : undefined;
    }, 'the spans of the objective');

    const [request] = named(spans, 'POST /v1/workspaces/{workspaceId}/objectives');
    assert.ok(request, `spans: ${spans.map((span) => span.name).join(', ')}`);
    assert.equal(request.kind, SERVER);
    assert.equal(request.parentSpanId, callerSpanId, "the request's span continues the caller's");
    assert.equal(request.attributes['http.route'], '/v1/workspaces/{workspaceId}/objectives');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.resource['service.name'], 'agentrt-tracing-test');
    assert.equal(request.resource['deployment.environment.name'], 'test');

    const turns = named(spans, 'objective.turn');
    assert.ok(turns.every((turn) => turn.attributes['agentrt.actor.id'] === objectiveId));
    const startTurn = turns.find((turn) => turn.attributes['agentrt.turn.cause'] === 'command');
    assert.equal(startTurn?.parentSpanId, request.spanId, 'the start turn is a child of the request');
    const turnIds = new Set(turns.map((turn) => turn.spanId));
    assert.ok(turns.filter((turn) => turn.attributes['agentrt.turn.cause'] === 'effect_result').length >= 3, 'a turn per model call and tool result');

    const modelCalls = named(spans, `chat ${PROVIDER_MODEL}`);
    for (const call of modelCalls) {
      assert.equal(call.kind, CLIENT);
      assert.ok(turnIds.has(call.parentSpanId), 'a model call is a child of the turn that started it');
      assert.equal(call.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(call.attributes['gen_ai.provider.name'], 'openrouter');
      assert.equal(call.attributes['gen_ai.request.model'], PROVIDER_MODEL);
      assert.equal(call.attributes['gen_ai.usage.input_tokens'], 10);
      assert.equal(call.attributes['gen_ai.usage.output_tokens'], 5);
      assert.equal(typeof call.attributes['agentrt.usage.cost_cents'], 'number');
      assert.equal(call.attributes['agentrt.objective.id'], objectiveId);
    }
    assert.deepEqual(modelCalls.map((call) => call.attributes['gen_ai.response.id']).sort(), ['gen-traced-1', 'gen-traced-2']);

    const [toolCall] = named(spans, 'execute_tool lookup');
    const [mcpToolCall] = named(spans, 'execute_tool docs-search');
    const calledIds = events.filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_CALLED').map((event) => event.data.toolCalled.toolCallId).sort();
    assert.deepEqual([toolCall.attributes['gen_ai.tool.call.id'], mcpToolCall.attributes['gen_ai.tool.call.id']].sort(), calledIds, 'each tool call span names its call');
    assert.equal(parsed(mcpCall.traceparent).spanId, mcpToolCall.spanId, "the MCP server's traceparent names its tool call span");
    assert.deepEqual([mcpToolCall.attributes['agentrt.tool.kind'], mcpToolCall.attributes['agentrt.tool.outcome']], ['mcp', 'ok']);
    assert.equal(toolCall.kind, CLIENT);
    assert.ok(turnIds.has(toolCall.parentSpanId));
    assert.equal(parsed(toolRequest.headers.traceparent as string).spanId, toolCall.spanId, "the tool's traceparent names the tool call span");
    assert.deepEqual(
      [toolCall.attributes['gen_ai.tool.name'], toolCall.attributes['gen_ai.operation.name'], toolCall.attributes['agentrt.tool.kind'], toolCall.attributes['agentrt.tool.outcome'], toolCall.attributes['http.response.status_code']],
      ['lookup', 'execute_tool', 'http', 'ok', 200],
    );

    const deliveries = named(spans, 'webhook.deliver');
    const deliverySpanIds = new Set(deliveries.map((span) => span.spanId));
    assert.ok(webhooks.every((webhook) => deliverySpanIds.has(parsed(webhook.headers.traceparent).spanId)), "each receiver's traceparent names its delivery span");
    for (const delivery of deliveries) {
      assert.ok(turnIds.has(delivery.parentSpanId), 'a delivery continues the turn that published its event');
      assert.equal(delivery.kind, CLIENT);
      assert.equal(delivery.attributes['server.address'], '127.0.0.1');
      assert.equal(delivery.attributes['http.response.status_code'], 204);
      assert.equal(delivery.attributes['agentrt.webhook.attempt'], 1);
      assert.equal(delivery.attributes['agentrt.webhook.outcome'], 'delivered');
    }
    assert.ok(otlp.exports.every((received) => received.path === '/v1/traces' && received.headers['x-collector-token'] === 't0k=en'), 'OTEL_EXPORTER_OTLP_HEADERS, decoded, on every export');
  });

  it("continues the objective's trace into a sub-objective: its creation, its turns and model call, and its events' traceId", async () => {
    const { api, ws } = world;
    const researcher = await agentWith(world, 'researcher', PROVIDER_MODEL);
    const lead = await agentWith(world, 'lead', PROVIDER_MODEL, [{ agentId: researcher }]);
    openRouter.reset();
    openRouter.answer(
      fakeAnswers.completion({ toolCalls: [{ id: 'call_0', name: 'researcher', arguments: '{"prompt":"find X"}' }] }),
      fakeAnswers.completion({ content: 'X is 42' }),
      fakeAnswers.completion({ content: 'done' }),
    );
    const started = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/objectives`, { agentId: lead, initialMessage: 'research X' });
    const leadId = started.metadata.id as string;
    const { objective, events } = await finished(world, leadId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    const traceId = events[0].traceId as string;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    const childId = events.find((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_SPAWNED').data.subAgentSpawned.metadata.id as string;
    const child = await finished(world, childId);
    assert.deepEqual([...new Set([...events, ...child.events].map((event) => event.traceId))], [traceId], "the child's events carry its parent's trace");

    const spans = await otlp.waitFor((all) => {
      const trace = ofTrace(all, traceId);
      return named(trace, `chat ${PROVIDER_MODEL}`).length === 3 && named(trace, 'sub_objective.create').length === 1 ? trace : undefined;
    }, 'the spans of the lead and its sub-objective');
    const [request] = named(spans, 'POST /v1/workspaces/{workspaceId}/objectives');
    assert.equal(request.parentSpanId, '', 'a request without traceparent starts the trace');
    const turnsOf = (id: string) => named(spans, 'objective.turn').filter((turn) => turn.attributes['agentrt.actor.id'] === id);
    const [creation] = named(spans, 'sub_objective.create');
    assert.ok(turnsOf(leadId).some((turn) => turn.spanId === creation.parentSpanId), "the creation is a child of the lead's turn");
    assert.deepEqual(
      [creation.attributes['agentrt.objective.id'], creation.attributes['agentrt.sub_objective.id'], creation.attributes['gen_ai.agent.id'], creation.attributes['agentrt.objective.depth']],
      [leadId, childId, researcher, 1],
    );
    const childTurns = turnsOf(childId);
    assert.ok(childTurns.length >= 2, 'the child traced its turns');
    assert.ok(childTurns.some((turn) => turn.parentSpanId === creation.spanId), "the child's turns continue its creation span");
    const childTurnIds = new Set(childTurns.map((turn) => turn.spanId));
    assert.equal(named(spans, `chat ${PROVIDER_MODEL}`).filter((call) => childTurnIds.has(call.parentSpanId)).length, 1, "the child's model call");
  });

  it('starts a trace at a schedule fire, which the objective it creates continues', async () => {
    const { api, ws } = world;
    const agentId = await agentWith(world, 'scheduled', MODEL_ID);
    const schedulesPath = `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/schedules`;
    const schedule = await created(api, ws.token, schedulesPath, {
      metadata: { name: 'every second' }, spec: { initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1s' }], timezone: 'UTC' } },
    });
    const scheduleId = schedule.metadata.id as string;
    const first = await eventuallyValue(async () => {
      const list = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives?scheduleId=${scheduleId}&limit=10`, { token: ws.token });
      return list.body.items.at(-1) as any;
    }, 'a fire of the schedule');
    const archived = await api.request('DELETE', `${schedulesPath}/${scheduleId}`, { token: ws.token });
    assert.equal(archived.status, 200, JSON.stringify(archived.body));
    const objectiveId = first.metadata.id as string;
    const { events } = await finished(world, objectiveId);
    const traceId = events[0].traceId as string;
    assert.match(traceId, /^[0-9a-f]{32}$/);

    const spans = await otlp.waitFor((all) => {
      const trace = ofTrace(all, traceId);
      return named(trace, `chat ${MODEL_ID}`).length >= 1 && named(trace, 'schedule.fire').length === 1 ? trace : undefined;
    }, "the fire's spans");
    const [fire] = named(spans, 'schedule.fire');
    assert.equal(fire.parentSpanId, '', 'a fire on its reminder starts a trace');
    assert.deepEqual(
      [fire.attributes['agentrt.schedule.id'], fire.attributes['agentrt.objective.id'], fire.attributes['agentrt.agent.id'], fire.attributes['agentrt.schedule.fire_time']],
      [scheduleId, objectiveId, agentId, first.spec.scheduleFireTime],
    );
    const startTurn = named(spans, 'objective.turn').find((turn) => turn.attributes['agentrt.actor.id'] === objectiveId && turn.attributes['agentrt.turn.cause'] === 'stored_command');
    assert.equal(startTurn?.parentSpanId, fire.spanId, "the objective's start continues the fire");
    assert.equal(named(spans, `chat ${MODEL_ID}`)[0].attributes['gen_ai.provider.name'], 'agentrt');
  });
});

describe('tracing over OTLP/HTTP protobuf', function () {
  this.timeout(30_000);
  let otlp: OtlpReceiver;
  let api: TestApi;

  before(async () => {
    otlp = await startOtlpReceiver();
    // No protocol given: http/protobuf, the specification's default; the traces endpoint is used as given.
    api = await startTestApi({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/collector/traces`, OTEL_BSP_SCHEDULE_DELAY: '50' }, logLevel: 'info' });
  });

  after(async () => {
    await api?.close();
    await otlp?.close();
  });

  it("exports a request's span as protobuf, with its content type, to the traces endpoint as given", async () => {
    const account = await api.bootstrap();
    const traceId = randomBytes(16).toString('hex');
    const read = await api.request('GET', '/v1/account', { token: account.globalApiKey.token, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    assert.equal(read.status, 200);
    const exported = await eventuallyValue(async () => otlp.exports.find((received) => received.body.includes(Buffer.from(traceId, 'hex'))), 'the span exported');
    assert.equal(exported.contentType, 'application/x-protobuf');
    assert.equal(exported.path, '/collector/traces');
    assert.ok(exported.body.includes(Buffer.from('GET /v1/account')), 'the span named by its route');
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', function () {
  this.timeout(60_000);
  const world = {} as World;

  before(async () => {
    world.api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }, logLevel: 'info' });
    world.ws = await workspaceFixture(world.api);
    world.tools = await startTestToolServer();
    world.hooks = await startWebhookReceiver();
  });

  after(async () => {
    await world.api?.close();
    await world.tools?.close();
    await world.hooks?.close();
  });

  it('sends no traceparent to tools or webhook receivers, and events have no traceId', async () => {
    const { api, ws, tools } = world;
    assert.equal(api.config.tracing, undefined);
    assert.equal(tracingEnabled(), false);
    assert.equal(activeTraceparent(), undefined);
    assert.deepEqual(traceHeaders(), {});
    const lookup = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
      metadata: { name: 'lookup' }, spec: { description: 'Looks things up', http: { url: `${tools.url}/echo`, method: 'POST' } },
    });
    const agentId = await agentWith(world, 'untraced', MODEL_ID, [{ toolId: lookup.metadata.id }]);
    const before = tools.requestsTo('/echo').length;
    // A caller's traceparent is not continued either: nothing is traced.
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, {
      token: ws.token, body: { agentId, initialMessage: 'CALL lookup {"q":"x"}\nSAY done' }, headers: { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` },
    });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const objectiveId = response.body.metadata.id as string;
    const { objective, events } = await finished(world, objectiveId);
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(tools.requestsTo('/echo').length, before + 1);
    assert.equal(tools.requestsTo('/echo').at(-1)!.headers.traceparent, undefined);
    assert.ok(events.every((event) => !('traceId' in event)), JSON.stringify(events[0]));
    const webhooks = await delivered(world, 'untraced', objectiveId, events.length);
    assert.ok(webhooks.every((webhook) => webhook.headers.traceparent === undefined));
    assert.ok(webhooks.every((webhook) => !('traceId' in JSON.parse(webhook.body).data.objectiveEvent)));
  });
});
