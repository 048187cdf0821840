// Prometheus metrics of what the node does for its users (docs/operations.md,
// "Metrics"): objectives started and finished, model calls (latency, tokens,
// cost, errors by model), tool calls by kind and outcome, webhook attempts,
// deliveries and their lag, schedule fire lateness, approval decisions. On prom-client's default
// registry, created once per process (several nodes in one test process share
// them).
//
// Labels are bounded sets, never ids: a model is named only when it is in the
// catalog (a workspace's own model names are its users' choice, so they count
// as `other`), error types are enums of this code (anything else is `OTHER`),
// kinds and outcomes are the domain's closed unions. Children are bound once
// per label combination and kept, so counting takes map lookups, not a label
// object hashed per call.
//
// The counts come from two places: the kinds' effects (a model call's
// latency and tokens, a tool's run time, measured where they happen) and the
// observations of committed turns (ActorDecision.observations: an objective's
// end, a tool call's outcome, an approval or denial, a delivery's result), counted once per turn
// that committed, never on replay.
import { Counter, Histogram, register, type Metric } from 'prom-client';
import { StatusCode } from '../src/errors';
import { MODEL_CATALOG } from '../src/models/catalog';
import { ModelCallError, ModelCallErrorType } from '../src/models/model-call-error';
import type { ChatCallOptions, ChatRequest, ChatResponse, ModelProvider } from '../src/ports/model-provider';
import type { ObjectiveObservation } from '../src/objectives/objective-observations';
import { LIMIT_REACHED_ERROR_TYPE } from '../src/objectives/objective-budgets';
import { ObjectiveStatus } from '../src/objectives/objective-state';
import type { ScheduleObservation } from '../src/schedules/schedule.behavior';
import type { ToolCallOutcome } from '../src/tools/tool-call-outcome';
import type { ToolCallRequest } from '../src/tools/tool-executor';
import type { WebhookObservation } from '../src/webhooks/webhook-endpoint.behavior';

function once<T extends Metric>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create();
}

/** The model label of a model id: the catalog's ids as they are, anything else `other`. */
const CATALOG_MODELS = new Set(MODEL_CATALOG.map((model) => model.id));
export const OTHER_MODEL = 'other';
export function modelLabel(modelId: string): string {
  return CATALOG_MODELS.has(modelId) ? modelId : OTHER_MODEL;
}

/** The error_type of anything this code does not name. */
export const OTHER_ERROR_TYPE = 'OTHER';
const MODEL_ERROR_TYPES = new Set<string>(Object.values(ModelCallErrorType));
/** An objective's error types: a model call's, a status code's (an effect failure without one), a budget's, a turn's time-out. */
const OBJECTIVE_ERROR_TYPES = new Set<string>([...MODEL_ERROR_TYPES, ...Object.keys(StatusCode), LIMIT_REACHED_ERROR_TYPE]);

const STATUS_LABELS: Record<string, string> = {
  [ObjectiveStatus.COMPLETED]: 'completed',
  [ObjectiveStatus.FAILED]: 'failed',
  [ObjectiveStatus.CANCELLED]: 'cancelled',
};

/** A metric's children bound once per label value (one label), kept for the process. */
function boundBy<Child>(bind: (value: string) => Child): (value: string) => Child {
  const children = new Map<string, Child>();
  return (value) => {
    let child = children.get(value);
    if (child === undefined) children.set(value, (child = bind(value)));
    return child;
  };
}

/** A metric's children bound once per pair of label values (two labels, in labelNames order). */
function boundByPair<Child>(bind: (first: string, second: string) => Child): (first: string, second: string) => Child {
  const byFirst = new Map<string, (second: string) => Child>();
  return (first, second) => {
    let bySecond = byFirst.get(first);
    if (bySecond === undefined) byFirst.set(first, (bySecond = boundBy((value) => bind(first, value))));
    return bySecond(second);
  };
}

const MODEL_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 120];
const TOOL_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Deliveries retry for days: the upper buckets tell a receiver that was down from one that is slow. */
const WEBHOOK_LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];
const SCHEDULE_LATENESS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];

const series = {
  objectivesStarted: once('agentrt_objectives_started_total', () => new Counter({ name: 'agentrt_objectives_started_total', help: 'Objectives started (sub-objectives and scheduled ones included)' })),
  objectivesFinished: once(
    'agentrt_objectives_finished_total',
    () => new Counter({
      name: 'agentrt_objectives_finished_total',
      help: 'Objectives reaching a final status (again after a follow-up message), by status and, for failed ones, error type',
      labelNames: ['status', 'error_type'],
    }),
  ),
  modelCallDuration: once(
    'agentrt_model_call_duration_seconds',
    () => new Histogram({
      name: 'agentrt_model_call_duration_seconds',
      help: "Model call latency (the provider's retries within one call included), by model and outcome",
      labelNames: ['model', 'outcome'],
      buckets: MODEL_LATENCY_BUCKETS,
    }),
  ),
  modelTokens: once(
    'agentrt_model_tokens_total',
    () => new Counter({ name: 'agentrt_model_tokens_total', help: 'Tokens the provider reported, by model and type (input: prompt, output: completion)', labelNames: ['model', 'type'] }),
  ),
  modelCost: once('agentrt_model_cost_cents_total', () => new Counter({ name: 'agentrt_model_cost_cents_total', help: 'Cost of model calls in US cents, by model', labelNames: ['model'] })),
  modelCallErrors: once(
    'agentrt_model_call_errors_total',
    () => new Counter({ name: 'agentrt_model_call_errors_total', help: 'Failed model calls, by model and error type', labelNames: ['model', 'error_type'] }),
  ),
  toolCalls: once(
    'agentrt_tool_calls_total',
    () => new Counter({ name: 'agentrt_tool_calls_total', help: 'Tool calls ended, by kind of tool and outcome', labelNames: ['kind', 'outcome'] }),
  ),
  toolApprovals: once(
    'agentrt_tool_approvals_total',
    () => new Counter({ name: 'agentrt_tool_approvals_total', help: 'Tool calls approved or denied by a person, by decision', labelNames: ['decision'] }),
  ),
  toolCallDuration: once(
    'agentrt_tool_call_duration_seconds',
    () => new Histogram({ name: 'agentrt_tool_call_duration_seconds', help: 'Run time of HTTP and MCP tool calls, by kind', labelNames: ['kind'], buckets: TOOL_LATENCY_BUCKETS }),
  ),
  webhookAttempts: once(
    'agentrt_webhook_attempts_total',
    () => new Counter({ name: 'agentrt_webhook_attempts_total', help: 'Webhook delivery attempts, by result', labelNames: ['result'] }),
  ),
  webhookDeliveries: once(
    'agentrt_webhook_deliveries_total',
    () => new Counter({ name: 'agentrt_webhook_deliveries_total', help: 'Webhook deliveries reaching a final status, by result', labelNames: ['result'] }),
  ),
  webhookLag: once(
    'agentrt_webhook_delivery_lag_seconds',
    () => new Histogram({ name: 'agentrt_webhook_delivery_lag_seconds', help: "From an objective event's creation to its webhook's 2xx", buckets: WEBHOOK_LAG_BUCKETS }),
  ),
  scheduleLateness: once(
    'agentrt_schedule_fire_lateness_seconds',
    () => new Histogram({ name: 'agentrt_schedule_fire_lateness_seconds', help: "From a schedule's fire time to the fire", buckets: SCHEDULE_LATENESS_BUCKETS }),
  ),
};

const objectivesFinished = boundByPair((status, errorType) => series.objectivesFinished.labels(status, errorType));
const modelDuration = boundByPair((model, outcome) => series.modelCallDuration.labels(model, outcome));
const modelTokens = boundByPair((model, type) => series.modelTokens.labels(model, type));
const modelCost = boundBy((model) => series.modelCost.labels(model));
const modelErrors = boundByPair((model, errorType) => series.modelCallErrors.labels(model, errorType));
const toolCalls = boundByPair((kind, outcome) => series.toolCalls.labels(kind, outcome));
const toolDuration = boundBy((kind) => series.toolCallDuration.labels(kind));
const toolApprovals = boundBy((decision) => series.toolApprovals.labels(decision));
const webhookAttempts = boundBy((result) => series.webhookAttempts.labels(result));
const webhookDeliveries = boundBy((result) => series.webhookDeliveries.labels(result));

/** The error_type of a failed objective: one of this code's types, else OTHER; `none` for one that did not fail. */
function objectiveErrorLabel(errorType: string | null): string {
  if (errorType === null) return 'none';
  return OBJECTIVE_ERROR_TYPES.has(errorType) ? errorType : OTHER_ERROR_TYPE;
}

/** Counts the observations of a committed objective turn. */
export function observeObjective(observations: readonly unknown[]): void {
  for (const observation of observations as readonly ObjectiveObservation[]) {
    switch (observation.type) {
      case 'objective_started':
        series.objectivesStarted.inc();
        break;
      case 'objective_finished':
        objectivesFinished(STATUS_LABELS[observation.status] ?? 'other', objectiveErrorLabel(observation.errorType)).inc();
        break;
      case 'tool_call_finished':
        toolCalls(observation.kind, observation.outcome).inc();
        break;
      case 'approval_decided':
        toolApprovals(observation.decision).inc();
        break;
    }
  }
}

/** Counts the observations of a committed webhook endpoint turn. */
export function observeWebhookEndpoint(observations: readonly unknown[]): void {
  for (const observation of observations as readonly WebhookObservation[]) {
    if (observation.type === 'attempt') {
      webhookAttempts(observation.result).inc();
    } else {
      webhookDeliveries(observation.result).inc();
      if (observation.lagMs !== undefined) series.webhookLag.observe(observation.lagMs / 1000);
    }
  }
}

/** Counts the observations of a committed schedule turn. */
export function observeSchedule(observations: readonly unknown[]): void {
  for (const observation of observations as readonly ScheduleObservation[]) {
    if (observation.type === 'fired') series.scheduleLateness.observe(observation.latenessMs / 1000);
  }
}

/** The error_type of a failed model call: its ModelCallError type; an abort without one is the deadline's or a cancel. */
function modelErrorLabel(error: unknown, options: ChatCallOptions): string {
  if (error instanceof ModelCallError) return MODEL_ERROR_TYPES.has(error.type) ? error.type : OTHER_ERROR_TYPE;
  if (options.signal?.aborted) {
    return options.deadline && options.deadline.getTime() <= Date.now() ? ModelCallErrorType.TIMED_OUT : ModelCallErrorType.CANCELLED;
  }
  return OTHER_ERROR_TYPE;
}

function countUsage(model: string, usage: { promptTokens: number; completionTokens: number; costCents: number } | undefined): void {
  if (!usage) return;
  if (usage.promptTokens > 0) modelTokens(model, 'input').inc(usage.promptTokens);
  if (usage.completionTokens > 0) modelTokens(model, 'output').inc(usage.completionTokens);
  if (usage.costCents > 0) modelCost(model).inc(usage.costCents);
}

/**
 * The model provider with every call counted: its latency, the tokens and
 * cost the provider reported (a failed call's too: it is paid for), and a
 * failure's type.
 */
export function meteredModels(models: Pick<ModelProvider, 'complete'>): Pick<ModelProvider, 'complete'> {
  return {
    async complete(workspaceId: string, request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
      const model = modelLabel(request.model);
      const started = performance.now();
      try {
        const response = await models.complete(workspaceId, request, options);
        modelDuration(model, 'ok').observe((performance.now() - started) / 1000);
        countUsage(model, response.usage);
        return response;
      } catch (error) {
        modelDuration(model, 'error').observe((performance.now() - started) / 1000);
        modelErrors(model, modelErrorLabel(error, options)).inc();
        if (error instanceof ModelCallError) countUsage(model, error.usage);
        throw error;
      }
    },
  };
}

/** The tool executor with the run time of every HTTP and MCP call counted by kind (their outcomes are counted by the objective). */
export function meteredTools(tools: { executeToolCall(call: ToolCallRequest): Promise<ToolCallOutcome> }): { executeToolCall(call: ToolCallRequest): Promise<ToolCallOutcome> } {
  return {
    async executeToolCall(call: ToolCallRequest): Promise<ToolCallOutcome> {
      const started = performance.now();
      try {
        return await tools.executeToolCall(call);
      } finally {
        toolDuration(call.tool.kind).observe((performance.now() - started) / 1000);
      }
    },
  };
}
