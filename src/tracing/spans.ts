// The spans of the service's work outside the HTTP request and the actor
// turns (docs/operations.md "Tracing" lists them with their attributes): a
// model call and a tool call after the OpenTelemetry GenAI semantic
// conventions, a sub-objective's creation, a webhook delivery attempt and a
// schedule's fire. Each wraps one call where the effect runs it. The effects
// check tracingEnabled() before building a wrapper's arguments and closure,
// and make the call directly while tracing is off; called while off anyway,
// a wrapper runs the call straight through.
import { modelFamily } from '../models/catalog';
import type { ChatRequest, ChatResponse } from '../ports/model-provider';
import type { ServiceToolOutcome } from '../ports/service-tools';
import type { ToolCallOutcome } from '../tools/tool-call-outcome';
import type { WebhookAttemptOutcome } from '../webhooks/webhook-sender';
import { ERROR_TYPE, inSpan, SpanKind, tracingEnabled, type Attributes } from './tracing';

/** GenAI semantic conventions (incubating, so named here rather than imported: they may still move). */
export const GenAiAttribute = {
  OPERATION_NAME: 'gen_ai.operation.name',
  PROVIDER_NAME: 'gen_ai.provider.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_TEMPERATURE: 'gen_ai.request.temperature',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  RESPONSE_ID: 'gen_ai.response.id',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_FINISH_REASONS: 'gen_ai.response.finish_reasons',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_TYPE: 'gen_ai.tool.type',
  AGENT_ID: 'gen_ai.agent.id',
  CONVERSATION_ID: 'gen_ai.conversation.id',
} as const;

/** The service's own attributes. */
export const AgentrtAttribute = {
  WORKSPACE_ID: 'agentrt.workspace.id',
  OBJECTIVE_ID: 'agentrt.objective.id',
  USAGE_COST_CENTS: 'agentrt.usage.cost_cents',
  USAGE_COST_SOURCE: 'agentrt.usage.cost_source',
  MODEL_CALL_PURPOSE: 'agentrt.model_call.purpose',
  TOOL_ID: 'agentrt.tool.id',
  TOOL_KIND: 'agentrt.tool.kind',
  TOOL_OUTCOME: 'agentrt.tool.outcome',
  SUB_OBJECTIVE_ID: 'agentrt.sub_objective.id',
  OBJECTIVE_DEPTH: 'agentrt.objective.depth',
  WEBHOOK_DELIVERY_ID: 'agentrt.webhook.delivery_id',
  WEBHOOK_ATTEMPT: 'agentrt.webhook.attempt',
  WEBHOOK_OUTCOME: 'agentrt.webhook.outcome',
  SCHEDULE_ID: 'agentrt.schedule.id',
  SCHEDULE_FIRE_TIME: 'agentrt.schedule.fire_time',
  AGENT_ID: 'agentrt.agent.id',
} as const;

/** The GenAI provider of a model id: the service's own builtin models, else OpenRouter. */
function providerOf(model: string): string {
  return modelFamily(model) === 'builtin' ? 'agentrt' : 'openrouter';
}

/** One model call (`chat <model>`): request model and settings, then the response's id, model, finish reason, tokens and cost. */
export function traceModelCall<T extends Partial<ChatResponse>>(call: { request: ChatRequest; workspaceId: string; objectiveId: string }, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  const { request } = call;
  const attributes: Attributes = {
    [GenAiAttribute.OPERATION_NAME]: 'chat',
    [GenAiAttribute.PROVIDER_NAME]: providerOf(request.model),
    [GenAiAttribute.REQUEST_MODEL]: request.model,
    [GenAiAttribute.CONVERSATION_ID]: call.objectiveId,
    [AgentrtAttribute.OBJECTIVE_ID]: call.objectiveId,
    [AgentrtAttribute.WORKSPACE_ID]: call.workspaceId,
  };
  if (request.temperature !== undefined) attributes[GenAiAttribute.REQUEST_TEMPERATURE] = request.temperature;
  if (request.maxTokens !== undefined) attributes[GenAiAttribute.REQUEST_MAX_TOKENS] = request.maxTokens;
  if (request.purpose) attributes[AgentrtAttribute.MODEL_CALL_PURPOSE] = request.purpose;
  return inSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT, attributes }, run, (response) => {
    const described: Attributes = {};
    if (response.responseId) described[GenAiAttribute.RESPONSE_ID] = response.responseId;
    if (response.model) described[GenAiAttribute.RESPONSE_MODEL] = response.model;
    if (response.finishReason) described[GenAiAttribute.RESPONSE_FINISH_REASONS] = [response.finishReason];
    if (response.usage) {
      described[GenAiAttribute.USAGE_INPUT_TOKENS] = response.usage.promptTokens;
      described[GenAiAttribute.USAGE_OUTPUT_TOKENS] = response.usage.completionTokens;
      described[AgentrtAttribute.USAGE_COST_CENTS] = response.usage.costCents;
      if (response.usage.costSource) described[AgentrtAttribute.USAGE_COST_SOURCE] = response.usage.costSource;
    }
    return described;
  });
}

/** What a tool call span names: the tool as the model called it and how it runs. */
export interface TracedToolCall {
  name: string;
  toolCallId: string;
  /** `http`, `mcp`, or `service` for the service's own tools (memory, skills, search). */
  kind: string;
  toolId?: string;
  objectiveId: string;
}

function toolCallAttributes(call: TracedToolCall): Attributes {
  return {
    [GenAiAttribute.OPERATION_NAME]: 'execute_tool',
    [GenAiAttribute.TOOL_NAME]: call.name,
    [GenAiAttribute.TOOL_CALL_ID]: call.toolCallId,
    [GenAiAttribute.TOOL_TYPE]: call.kind === 'service' ? 'extension' : 'function',
    [AgentrtAttribute.TOOL_KIND]: call.kind,
    [AgentrtAttribute.OBJECTIVE_ID]: call.objectiveId,
    ...(call.toolId ? { [AgentrtAttribute.TOOL_ID]: call.toolId } : {}),
  };
}

/** The outcome attributes of a tool call: `ok`, or its error type (the span then fails). */
function toolOutcomeAttributes(outcome: { ok: boolean; errorType?: string; status?: number }): Attributes {
  const type = outcome.ok ? undefined : outcome.errorType ?? 'ERROR';
  return {
    [AgentrtAttribute.TOOL_OUTCOME]: type ?? 'ok',
    ...(outcome.status !== undefined ? { 'http.response.status_code': outcome.status } : {}),
    ...(type ? { [ERROR_TYPE]: type } : {}),
  };
}

/** One call of an HTTP or MCP tool (`execute_tool <name>`), around the request its `traceparent` header continues from. */
export function traceToolCall(call: TracedToolCall, run: () => Promise<ToolCallOutcome>): Promise<ToolCallOutcome> {
  if (!tracingEnabled()) return run();
  return inSpan(`execute_tool ${call.name}`, { kind: SpanKind.CLIENT, attributes: toolCallAttributes(call) }, run, toolOutcomeAttributes);
}

/** One call of a service tool (`load_skill`, `memory_read`, `memory_write`, `search_tools`). */
export function traceServiceToolCall(call: Omit<TracedToolCall, 'kind'>, run: () => Promise<ServiceToolOutcome>): Promise<ServiceToolOutcome> {
  if (!tracingEnabled()) return run();
  return inSpan(`execute_tool ${call.name}`, { attributes: toolCallAttributes({ ...call, kind: 'service' }) }, run, toolOutcomeAttributes);
}

/**
 * A sub-agent's child objective being created (`sub_objective.create`): the
 * child is resolved inside this span, so its start keeps this span as the
 * parent of all its own spans.
 */
export function traceSubObjective<T>(child: { parentObjectiveId: string; childObjectiveId: string; agentId: string; toolCallId: string; depth: number }, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  return inSpan('sub_objective.create', {
    attributes: {
      [AgentrtAttribute.OBJECTIVE_ID]: child.parentObjectiveId,
      [AgentrtAttribute.SUB_OBJECTIVE_ID]: child.childObjectiveId,
      [GenAiAttribute.AGENT_ID]: child.agentId,
      [GenAiAttribute.TOOL_CALL_ID]: child.toolCallId,
      [AgentrtAttribute.OBJECTIVE_DEPTH]: child.depth,
    },
  }, run);
}

/**
 * A schedule's fire (`schedule.fire`): its objective is resolved inside this
 * span (ahead of the fire time, or at it), so the objective's spans are its
 * children. A new trace, unless the fire was asked for (a trigger request's turn).
 */
export function traceScheduleFire<T>(fire: { scheduleId: string; fireTime: string; objectiveId: string; agentId: string; workspaceId: string }, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  return inSpan('schedule.fire', {
    attributes: {
      [AgentrtAttribute.SCHEDULE_ID]: fire.scheduleId,
      [AgentrtAttribute.SCHEDULE_FIRE_TIME]: fire.fireTime,
      [AgentrtAttribute.OBJECTIVE_ID]: fire.objectiveId,
      [AgentrtAttribute.AGENT_ID]: fire.agentId,
      [AgentrtAttribute.WORKSPACE_ID]: fire.workspaceId,
    },
  }, run);
}

/** The host (and port, when not the scheme's) of a webhook URL: never its path or query, which may carry a token. */
function endpointOf(url: string): Attributes {
  try {
    const parsed = new URL(url);
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
    return { 'server.address': parsed.hostname, 'server.port': port, 'url.scheme': parsed.protocol.slice(0, -1) };
  } catch {
    return {};
  }
}

/**
 * One webhook delivery attempt (`webhook.deliver`), continuing the trace of
 * the objective event it delivers (`traceparent`, kept with the delivery):
 * the receiver's host, the attempt's number, the status answered and the outcome.
 */
export function traceWebhookDelivery(
  attempt: { url: string; deliveryId: string; attempt: number; traceparent?: string },
  run: () => Promise<WebhookAttemptOutcome>,
): Promise<WebhookAttemptOutcome> {
  if (!tracingEnabled()) return run();
  return inSpan('webhook.deliver', {
    kind: SpanKind.CLIENT,
    // A delivery queued without a trace (its event came from a node not tracing) starts its own.
    parent: attempt.traceparent ?? null,
    attributes: {
      'http.request.method': 'POST',
      ...endpointOf(attempt.url),
      [AgentrtAttribute.WEBHOOK_DELIVERY_ID]: attempt.deliveryId,
      [AgentrtAttribute.WEBHOOK_ATTEMPT]: attempt.attempt,
    },
  }, run, (outcome) => ({
    ...(outcome.httpStatusCode ? { 'http.response.status_code': outcome.httpStatusCode } : {}),
    [AgentrtAttribute.WEBHOOK_OUTCOME]: outcome.ok ? 'delivered' : outcome.gone ? 'gone' : 'failed',
    ...(outcome.ok ? {} : { [ERROR_TYPE]: outcome.httpStatusCode ? String(outcome.httpStatusCode) : 'NETWORK_ERROR' }),
  }));
}
