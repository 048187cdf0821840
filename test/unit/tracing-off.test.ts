// Tracing off costs one boolean check (docs/operations.md "Tracing"): with no
// tracer registered, the span wrappers of src/tracing/spans.ts and runInTrace
// hand back the very promise or value of the call they wrap, and the
// objective kind's effects (model call, summary, tool call, service tool,
// sub-objective) call straight through with no span recorded. The same
// effects with a tracer registered record their spans, so the check is seen
// to decide.
import assert from 'node:assert/strict';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createObjectiveKind } from '../../actors/kinds/objective.kind';
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import type { ChatRequest, ChatResponse } from '../../src/ports/model-provider';
import type { ServiceToolCallInput, ServiceToolOutcome } from '../../src/ports/service-tools';
import { MODEL_CALL_EFFECT, TOOL_CALL_EFFECT, type ToolCallEffectInput } from '../../src/objectives/objective-loop';
import { MODEL_SUMMARIZE_EFFECT } from '../../src/objectives/objective-compaction';
import { PREPARE_CHILD_EFFECT, type PrepareChildInput } from '../../src/objectives/objective-children';
import type { ObjectiveStart } from '../../src/objectives/objective-state';
import { SERVICE_TOOL_EFFECT } from '../../src/ports/service-tools';
import type { ExecutableTool, ToolCallOutcome } from '../../src/tools/tool-call-outcome';
import {
  traceModelCall, traceScheduleFire, traceServiceToolCall, traceSubObjective, traceToolCall, traceWebhookDelivery,
} from '../../src/tracing/spans';
import { activeTraceparent, runInTrace, traceHeaders, tracingEnabled, useTracer } from '../../src/tracing/tracing';
import type { WebhookAttemptOutcome } from '../../src/webhooks/webhook-sender';

const REQUEST: ChatRequest = { model: 'builtin/scripted', messages: [{ role: 'user', content: 'hi' }], tools: [] };
const ANSWER: ChatResponse = { content: 'hello', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5, costCents: 0, costSource: 'provider' } };
const TOOL: ExecutableTool = {
  id: 'tool_1', name: 'lookup', workspaceId: 'ws_1', kind: 'http', inputSchema: null, httpUrl: 'https://tools.example/lookup', httpMethod: 'POST',
  httpHeaders: null, httpTimeoutMs: null, mcpServerUrl: null, mcpToolName: null,
};
const TOOL_RESULT: ToolCallOutcome = { ok: true, toolCallId: 'toolcall_1', toolId: 'tool_1', kind: 'http', content: 'found', truncated: false, status: 200, durationMs: 1 };
const SERVICE_RESULT: ServiceToolOutcome = { ok: true, content: 'remembered' };
const CHILD_START = { objectiveId: 'objective_child' } as ObjectiveStart;

function effectContext(transientInput?: unknown): EffectContext {
  return {
    signal: new AbortController().signal, deadline: new Date(Date.now() + 60_000), effectId: 'model_call_1', attempt: 1, actorId: 'objective_1',
    ...(transientInput === undefined ? {} : { transientInput }),
  };
}

/** The objective kind over stubs that answer fixed values; `calls` counts what reached each dependency. */
function objectiveKind(): { kind: ActorKind; calls: Record<'model' | 'tool' | 'service' | 'child', number> } {
  const calls = { model: 0, tool: 0, service: 0, child: 0 };
  const kind = createObjectiveKind({
    models: { complete: async () => (calls.model++, ANSWER) },
    tools: { executeToolCall: async () => (calls.tool++, TOOL_RESULT) },
    serviceTools: { run: async () => (calls.service++, SERVICE_RESULT) },
    store: {} as Parameters<typeof createObjectiveKind>[0]['store'],
    prepareChild: async () => (calls.child++, CHILD_START),
  });
  return { kind, calls };
}

/** Runs every effect of the objective kind once, each checked against what its stub answered. */
async function runEveryEffect(kind: ActorKind): Promise<void> {
  const effects = kind.effects!;
  assert.deepEqual(await effects[MODEL_CALL_EFFECT]({ workspaceId: 'ws_1' }, effectContext(REQUEST)), ANSWER);
  assert.deepEqual(await effects[MODEL_SUMMARIZE_EFFECT]({ workspaceId: 'ws_1' }, effectContext({ ...REQUEST, purpose: 'summarization' })), ANSWER);
  const toolInput: ToolCallEffectInput = { toolCallId: 'toolcall_1', tool: TOOL, arguments: '{}', context: { workspaceId: 'ws_1' } };
  assert.equal(await effects[TOOL_CALL_EFFECT](toolInput, effectContext()), TOOL_RESULT);
  const serviceInput = { toolCallId: 'toolcall_2', name: 'memory_read', arguments: '{}', context: { workspaceId: 'ws_1' } } as unknown as ServiceToolCallInput;
  assert.equal(await effects[SERVICE_TOOL_EFFECT](serviceInput, effectContext()), SERVICE_RESULT);
  const child = {
    workspaceId: 'ws_1', accountId: 'account_1', parentObjectiveId: 'objective_1', childObjectiveId: 'objective_child', parentToolCallId: 'toolcall_3',
    agentId: 'agent_2', data: {}, initialMessage: 'go', depth: 1,
  } as unknown as PrepareChildInput;
  assert.equal(await effects[PREPARE_CHILD_EFFECT](child, effectContext()), CHILD_START);
}

describe('tracing off: the traced places call straight through', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

  beforeEach(() => {
    assert.equal(tracingEnabled(), false, 'no tracer is registered in this process');
    exporter.reset();
  });

  afterEach(() => useTracer(undefined));

  after(() => provider.shutdown());

  it('each span wrapper and runInTrace give back the very promise or value of their call, run once', async () => {
    let runs = 0;
    const passthrough = <T>(wrap: (run: () => Promise<T>) => Promise<T>, value: T) => {
      const promise = Promise.resolve(value);
      const returned = wrap(() => (runs++, promise));
      assert.equal(returned, promise, 'the call itself, not a promise around it');
    };
    passthrough((run) => traceModelCall({ request: REQUEST, workspaceId: 'ws_1', objectiveId: 'objective_1' }, run), ANSWER);
    passthrough<ToolCallOutcome>((run) => traceToolCall({ name: 'lookup', toolCallId: 'toolcall_1', kind: 'http', objectiveId: 'objective_1' }, run), TOOL_RESULT);
    passthrough((run) => traceServiceToolCall({ name: 'memory_read', toolCallId: 'toolcall_2', objectiveId: 'objective_1' }, run), SERVICE_RESULT);
    passthrough((run) => traceSubObjective({ parentObjectiveId: 'objective_1', childObjectiveId: 'objective_child', agentId: 'agent_2', toolCallId: 'toolcall_3', depth: 1 }, run), CHILD_START);
    passthrough((run) => traceScheduleFire({ scheduleId: 'schedule_1', fireTime: '2030-01-01T00:00:00Z', objectiveId: 'objective_1', agentId: 'agent_1', workspaceId: 'ws_1' }, run), CHILD_START);
    passthrough((run) => traceWebhookDelivery({ url: 'https://hooks.example/in', deliveryId: 'delivery_1', attempt: 1 }, run), { ok: true } as WebhookAttemptOutcome);
    assert.equal(runs, 6);
    const value = { answer: 42 };
    assert.equal(runInTrace('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', () => value), value);
    assert.equal(activeTraceparent(), undefined);
    assert.deepEqual(traceHeaders(), {});
    await provider.forceFlush();
    assert.deepEqual(exporter.getFinishedSpans(), [], 'no span recorded');
  });

  it("the objective kind's effects call their dependency directly and record no span", async () => {
    const { kind, calls } = objectiveKind();
    await runEveryEffect(kind);
    assert.deepEqual(calls, { model: 2, tool: 1, service: 1, child: 1 });
    await provider.forceFlush();
    assert.deepEqual(exporter.getFinishedSpans(), []);
  });

  it('with a tracer registered, the same effects record their spans', async () => {
    useTracer(provider.getTracer('test'));
    const { kind, calls } = objectiveKind();
    await runEveryEffect(kind);
    assert.deepEqual(calls, { model: 2, tool: 1, service: 1, child: 1 });
    await provider.forceFlush();
    assert.deepEqual(exporter.getFinishedSpans().map((span) => span.name), [
      'chat builtin/scripted', 'chat builtin/scripted', 'execute_tool lookup', 'execute_tool memory_read', 'sub_objective.create',
    ]);
  });
});
