// The objective loop (issue 9 item 2): call the model, record its answer, run
// or hold its tool calls, and once every call of the turn has a result call
// the model again, until it answers without tools (COMPLETED), emits a valid
// output (COMPLETED with the output), fails (FAILED) or is cancelled. Model
// and tool calls are effects, so they run outside the actor's turn and their
// results come back as inputs; a sub-agent call runs a child objective
// (objective-children.ts) whose report comes back as a command. Nothing here
// does I/O.
import { newId } from '../ids';
import { SCHEDULE_KIND } from '../schedules/schedule-record';
import type { EffectError, EffectOutcome, EffectRequest } from '../ports/actor-behavior';
import type { ExecutableTool, ToolCallOutcome } from '../tools/tool-call-outcome';
import type { ChatRequest, ChatResponse, ChatToolCall, ChatToolDefinition } from './chat-model-types';
import { compactBeforeModelCall } from './objective-compaction';
import {
  isOfferedServiceTool, objectiveToolsOf, runServiceToolCall, serviceToolDefinitions, systemPromptOf,
} from './objective-service-tools';
import {
  invalidSubAgentArgumentsResult, PARENT_CANCELLED_REASON, PARENT_FAILED_REASON, reportToParent, startChild, stopRunningCalls, subAgentArguments,
} from './objective-children';
import {
  depthLimitResult, maxDepthOf, SUB_OBJECTIVE_LIMIT_RESULT, TOOL_CALL_LIMIT_RESULT, withinDepthLimit, withinSubObjectiveLimit, withinToolCallLimit,
} from './objective-limits';
import { modelBudgetExceeded, nextQueuedSubAgentCall, offeredTools, waitsForSubAgent } from './objective-budgets';
import { awaitsModelRetry, stopModelRetryWait } from './objective-retries';
import { EMIT_OUTPUT_TOOL_NAME, emitOutputToolDefinition, outputFromArguments, type OutputValidator } from './objective-output';
import { effectFailureOutcome, toolErrorOutcome } from './objective-observations';
import {
  isTerminal, ObjectiveStatus, type ObjectiveError, type ObjectiveState, type TurnToolCall,
} from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

export const MODEL_CALL_EFFECT = 'model.call';
export const TOOL_CALL_EFFECT = 'tool.call';
export const DEFAULT_MODEL_CALL_TIMEOUT_MS = 120_000;
/** The `type` of a TOOL_RESULT event's fields (the spec names the field, not its values). */
export const TOOL_RESULT_TYPE_TEXT = 'text';
/** The result a valid `emit_output` call gives the model. */
export const OUTPUT_ACCEPTED_RESULT = 'output accepted';
/** The reminder that bounds one objective turn (`turnTimeoutMs`). */
export const TURN_DEADLINE_REMINDER = 'turn_deadline';
/** The ERROR type of an objective whose turn ran past `turnTimeoutMs` (as a model call past its deadline). */
export const TURN_TIMED_OUT_ERROR_TYPE = 'TIMED_OUT';
const NO_USAGE = { promptTokens: 0, completionTokens: 0, costCents: 0 };

/** What the `tool.call` effect gets: a ToolCallRequest without its signal and deadline (those come from the effect context). */
export interface ToolCallEffectInput {
  toolCallId: string;
  tool: ExecutableTool;
  arguments: string;
  /** `widgetSessionId`: the session whose secrets the effect reads (never the values: this input is journaled). */
  context: { workspaceId: string; widgetSessionId?: string };
}

/**
 * What the `model.call` effect gets in the journal: the workspace whose
 * provider key pays for it. The request itself, which holds the whole
 * conversation, is the run's transient input (rebuilt from the state by
 * chatRequestOf when a run is started again), so the journal does not keep
 * the conversation once per model call. `request`: in inputs journaled
 * before that.
 */
export interface ModelCallEffectInput {
  workspaceId: string;
  request?: ChatRequest;
}

/** The `model.call` effect of the state's running model call, its request rebuilt from the state. */
export function modelCallEffect(state: ObjectiveState, effectId: string): EffectRequest {
  const config = state.config!;
  return {
    id: effectId,
    name: MODEL_CALL_EFFECT,
    input: { workspaceId: config.workspaceId } satisfies ModelCallEffectInput,
    transientInput: chatRequestOf(state),
    timeoutMs: config.modelCallTimeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS,
    // The answer is recorded by the turn that applies it (ASSISTANT_MESSAGE); a node lost
    // before that turn asks the model again, the price of two statements fewer per call.
    durableResult: false,
  };
}

/**
 * Deterministic per model turn, so a model call run again after a crash keeps
 * its id (a provider that de-duplicates by it sees the same key) and replay
 * derives the same id from the journal.
 */
export function modelCallEffectId(modelTurn: number): string {
  return `model_call_${modelTurn}`;
}

/** The model turn a `model.call` effect id names (modelCallEffectId's inverse), or undefined for another id. */
export function modelTurnOfEffectId(effectId: string): number | undefined {
  const match = /^model_call_(\d+)$/.exec(effectId);
  return match ? Number(match[1]) : undefined;
}

/** What every request of the objective sends besides the conversation. */
export function systemPromptAndTools(state: ObjectiveState): { systemPrompt: string | null; tools: ChatToolDefinition[] } {
  const config = state.config!;
  const tools = offeredTools(state).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema }));
  tools.push(...serviceToolDefinitions(state));
  if (config.outputDefinition) tools.push(emitOutputToolDefinition(config.outputDefinition));
  return { systemPrompt: systemPromptOf(state), tools };
}

export function chatRequestOf(state: ObjectiveState): ChatRequest {
  const config = state.config!;
  const { systemPrompt, tools } = systemPromptAndTools(state);
  return {
    model: config.modelId,
    messages: [...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []), ...state.conversation],
    tools,
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
  };
}

/**
 * Starts the next model call, unless a budget is used up (then the objective
 * fails): the open turn's results (placeholders for calls
 * left without one) and the waiting user messages go first, then the context
 * is compacted when it grew too large (always with `forceCompaction`: the
 * provider refused it); a summarization runs before the call.
 */
export function startModelCall(turn: ObjectiveTurn, options: { forceCompaction?: boolean } = {}): void {
  const { state } = turn;
  // No model call (nor a compaction's summary before it) starts once a budget is used up (objective-budgets.ts).
  const exceeded = modelBudgetExceeded(state);
  if (exceeded) return failObjective(turn, exceeded);
  const effectId = modelCallEffectId(state.modelTurn + 1);
  // The results join the conversation from the turn's calls (evolve): the journal holds each once, in its TOOL_RESULT.
  turn.apply({ type: 'model_call_started', effectId, userMessages: state.pendingUserMessages.length });
  if (compactBeforeModelCall(turn, options.forceCompaction === true)) return;
  turn.startEffect(modelCallEffect(turn.state, effectId));
}

/** When the current turn's clock runs out, or null without a `turnTimeoutMs`. */
export function turnDeadlineOf(state: ObjectiveState): Date | null {
  const limit = state.config?.turnTimeoutMs ?? 0;
  if (limit <= 0 || state.status !== ObjectiveStatus.RUNNING || !state.runStartedAt) return null;
  return new Date(Date.parse(state.runStartedAt) + limit);
}

/**
 * Moves to a status. Entering RUNNING starts the turn clock (a reminder at
 * `turnTimeoutMs`), leaving it (approval, the end) stops the clock.
 */
export function setStatus(turn: ObjectiveTurn, status: ObjectiveStatus): void {
  const before = turn.state.status;
  if (before === status) return;
  turn.apply({ type: 'status_changed', status, at: turn.now });
  if ((turn.config.turnTimeoutMs ?? 0) <= 0) return;
  const deadline = turnDeadlineOf(turn.state);
  if (deadline) turn.setReminder({ name: TURN_DEADLINE_REMINDER, dueAt: deadline });
  else if (before === ObjectiveStatus.RUNNING) turn.cancelReminder(TURN_DEADLINE_REMINDER);
}

/** Ends the run: the terminal status, then FINALIZED, always the last event; a child then reports to its parent (once). */
function finish(turn: ObjectiveTurn, status: ObjectiveStatus): void {
  setStatus(turn, status);
  const { state } = turn;
  turn.record('FINALIZED', { status, output: state.output, usage: state.usage });
  turn.observe({ type: 'objective_finished', status, errorType: status === ObjectiveStatus.FAILED ? state.error?.type ?? null : null });
  reportToParent(turn);
  // A scheduled objective tells its schedule, which decides its SKIP overlap policy on what runs.
  const scheduleId = turn.config.spec.scheduleId;
  if (scheduleId && turn.config.reportsToSchedule) turn.send(SCHEDULE_KIND, scheduleId, { type: 'objective_finished', objectiveId: turn.config.objectiveId });
}

/**
 * Stops whatever runs: the model call and the running tool calls (an aborted
 * effect never reports), and the children still working for a call (sent
 * `cancel` with `childReason`, unless it is null).
 */
function abortRunning(turn: ObjectiveTurn, childReason: string | null): void {
  const { modelCallEffectId, summarizing } = turn.state;
  if (modelCallEffectId) {
    // While its summarization runs, the model call has not started: the summarization is what stops.
    turn.abortEffect(summarizing ? summarizing.effectId : modelCallEffectId);
    turn.apply({ type: 'model_call_ended', effectId: modelCallEffectId });
  }
  stopModelRetryWait(turn);
  stopRunningCalls(turn, childReason);
}

/** FAILED with `error`; `extra`: more ERROR event fields (the usage a failed model call reported). */
export function failObjective(turn: ObjectiveTurn, error: ObjectiveError, extra: Record<string, unknown> = {}): void {
  abortRunning(turn, PARENT_FAILED_REASON);
  turn.apply({ type: 'error_set', error });
  turn.record('ERROR', { message: error.message, type: error.type, ...extra });
  finish(turn, ObjectiveStatus.FAILED);
}

/** CANCELLED, FINALIZED last; running children are cancelled too (`childReason` null: the caller messages them). */
export function cancelObjective(turn: ObjectiveTurn, reason: string, childReason: string | null = PARENT_CANCELLED_REASON): void {
  abortRunning(turn, childReason);
  turn.record('CANCELLED', { reason });
  finish(turn, ObjectiveStatus.CANCELLED);
}

/**
 * Runs one accepted call: a tool as a `tool.call` effect whose id is the
 * objective's tool call id (the Idempotency-Key the tool sees), a sub-agent as
 * a child objective.
 */
export function runToolCall(turn: ObjectiveTurn, call: TurnToolCall): void {
  if (isOfferedServiceTool(turn.state, call.name)) return runServiceToolCall(turn, call);
  const tool = objectiveToolsOf(turn.state).find((candidate) => candidate.name === call.name)!;
  if (tool.subAgent) {
    // Under a budget that runs sub-agents one at a time, a call waits for those before it (advance runs it then).
    if (call.state !== 'queued' && waitsForSubAgent(turn.state, call)) return turn.apply({ type: 'sub_agent_call_queued', toolCallId: call.id });
    return startChild(turn, call, tool);
  }
  turn.record('TOOL_CALLED', { toolCallId: call.id });
  const input: ToolCallEffectInput = {
    toolCallId: call.id,
    tool: tool.executable!,
    arguments: call.arguments,
    context: { workspaceId: turn.config.workspaceId, ...(turn.config.widgetSessionId ? { widgetSessionId: turn.config.widgetSessionId } : {}) },
  };
  // Finished is recorded by the turn that applies the result (TOOL_RESULT); a call not
  // recorded finished is sent again with the same Idempotency-Key (the tool call id).
  const effect: EffectRequest = { id: call.id, name: TOOL_CALL_EFFECT, input, timeoutMs: tool.effectTimeoutMs, durableResult: false };
  turn.startEffect(effect);
}

/**
 * What comes next once something changed in the turn: wait while a call runs
 * or awaits a decision; once all have results, complete (a final answer with
 * no user message waiting) or call the model again. A valid output completes
 * as soon as nothing runs: a call still awaiting approval is dropped (it gets
 * a placeholder if a follow-up ever runs the objective again), because
 * holding a finished objective for a decision whose result nobody reads
 * would only delay the output. A user message waiting then gets another model
 * call first, whose answer ends the run as any answer does.
 */
export function advance(turn: ObjectiveTurn): void {
  const { state } = turn;
  // A model call failed and waits for its retry: the reminder starts it again.
  if (isTerminal(state.status) || state.modelCallEffectId || awaitsModelRetry(state)) return;
  // The sub-agent call waiting its turn runs once the one before it has ended (limits.sequentialSubAgents).
  const queued = nextQueuedSubAgentCall(state);
  if (queued) {
    runToolCall(turn, queued);
    return advance(turn);
  }
  const awaiting = !state.outputEmitted && state.turnCalls.some((call) => call.state === 'awaiting_approval');
  const running = state.turnCalls.some((call) => call.state === 'running' || call.state === 'approved' || call.state === 'queued');
  if (awaiting || running) {
    setStatus(turn, awaiting ? ObjectiveStatus.AWAITING_APPROVAL : ObjectiveStatus.RUNNING);
    return;
  }
  // A message that came while the model produced its output is answered first (the output stands unless replaced).
  if (state.outputEmitted && state.pendingUserMessages.length === 0) return finish(turn, ObjectiveStatus.COMPLETED);
  if (state.turnCalls.length > 0 || state.pendingUserMessages.length > 0) {
    setStatus(turn, ObjectiveStatus.RUNNING);
    return startModelCall(turn);
  }
  finish(turn, ObjectiveStatus.COMPLETED);
}

function toolReferenceOf(turn: ObjectiveTurn, name: string): Record<string, unknown> {
  const config = turn.config;
  if ((name === EMIT_OUTPUT_TOOL_NAME && config.outputDefinition) || isOfferedServiceTool(turn.state, name)) return { serviceProvidedTool: { name } };
  const tool = objectiveToolsOf(turn.state).find((candidate) => candidate.name === name);
  if (!tool?.metadata) return {};
  return tool.subAgent ? { agent: tool.metadata } : { tool: tool.metadata };
}

/** Handles the emit_output call: a valid output is kept (the run completes when the turn settles), an invalid one goes back to the model. */
function emitOutput(turn: ObjectiveTurn, call: ChatToolCall, validateOutput: OutputValidator): void {
  const definition = turn.config.outputDefinition!;
  turn.record('TOOL_CALLED', { toolCallId: call.id });
  const parsed = outputFromArguments(definition, call.arguments);
  const problem = 'problem' in parsed ? parsed.problem : validateOutput(definition, parsed.output);
  if (problem !== null || !('output' in parsed)) {
    const message = `invalid output: ${problem}`;
    turn.record('TOOL_ERROR', { message, toolCallId: call.id }, { modelResult: message });
    turn.observeToolCall(call.id, 'invalid_arguments');
    return;
  }
  turn.apply({ type: 'output_emitted', output: parsed.output });
  turn.record('TOOL_RESULT', { content: OUTPUT_ACCEPTED_RESULT, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: OUTPUT_ACCEPTED_RESULT });
  turn.observeToolCall(call.id, 'result');
}

/**
 * What happens to one call of a model turn: `refused` calls get a TOOL_ERROR
 * with `result` and run nothing; `counted` ones count against maxToolCalls
 * (tools run or held for approval; sub-agent calls count against
 * maxSubObjectives instead, when their child is created). Service tools
 * (`load_skill` …) run at once and count against nothing.
 */
type CallDisposition =
  | { kind: 'emit_output' | 'approval' | 'run' | 'service'; counted: boolean }
  | { kind: 'refused'; result: string };

function dispositionsOf(turn: ObjectiveTurn, calls: ChatToolCall[]): CallDisposition[] {
  const config = turn.config;
  let acceptedTools = 0;
  let acceptedChildren = 0;
  const refused = (result: string): CallDisposition => ({ kind: 'refused', result });
  return calls.map((call): CallDisposition => {
    if (call.name === EMIT_OUTPUT_TOOL_NAME && config.outputDefinition) return { kind: 'emit_output', counted: false };
    if (isOfferedServiceTool(turn.state, call.name)) return { kind: 'service', counted: false };
    const tool = objectiveToolsOf(turn.state).find((candidate) => candidate.name === call.name);
    if (!tool || (!tool.subAgent && !tool.executable)) return refused(`unknown tool: ${call.name}`);
    const kind = tool.requiresApproval ? 'approval' : 'run';
    if (tool.subAgent) {
      if (!withinDepthLimit(turn.state)) return refused(depthLimitResult(maxDepthOf(turn.state)));
      if (!withinSubObjectiveLimit(turn.state, acceptedChildren)) return refused(SUB_OBJECTIVE_LIMIT_RESULT);
      const parsed = subAgentArguments(tool, call.arguments);
      if ('problem' in parsed) return refused(invalidSubAgentArgumentsResult(parsed.problem));
      acceptedChildren += 1;
      return { kind, counted: false };
    }
    if (!withinToolCallLimit(turn.state, acceptedTools)) return refused(TOOL_CALL_LIMIT_RESULT);
    acceptedTools += 1;
    return { kind, counted: true };
  });
}

/** A model call's answer: the assistant message, then each tool call settled, held for approval or started (all of the turn together). */
export function acceptModelResponse(turn: ObjectiveTurn, effectId: string, response: ChatResponse, validateOutput: OutputValidator): void {
  turn.apply({ type: 'model_call_ended', effectId });
  const calls = response.toolCalls ?? [];
  // The service's own id for each call (issue 24 item 5): a provider's ids repeat within an answer, or
  // across turns and objectives (`call_0` every turn), and this id is the tool's Idempotency-Key, so it must
  // name one call across the service. Drawn here, recorded with the call (a reader pairs the call's name
  // with its TOOL_* events by it) and journaled below, so a replay keeps it.
  const ids = calls.map(() => newId('toolCall'));
  turn.record(
    'ASSISTANT_MESSAGE',
    {
      content: response.content ?? '',
      toolCalls: calls.map((call, index) => ({ arguments: call.arguments, functionName: call.name, id: ids[index], tool: toolReferenceOf(turn, call.name) })),
      // Every model call records its usage, zeros when the provider reported none.
      usage: response.usage ?? NO_USAGE,
    },
    // The conversation's form of the message, less what the record holds already: the model's call ids (and a null content).
    { assistant: { toolCallIds: calls.map((call) => call.id), ...(response.content === null || response.content === undefined ? { content: null } : {}) } },
  );
  const dispositions = dispositionsOf(turn, calls);
  turn.apply({
    type: 'tool_calls_received',
    calls: calls.map((call, index) => {
      const disposition = dispositions[index];
      const counted = disposition.kind !== 'refused' && disposition.counted;
      // The model's id, name and arguments are the ASSISTANT_MESSAGE's, just recorded: not journaled again.
      return { id: ids[index], counted };
    }),
  });
  calls.forEach((call, index) => {
    const disposition = dispositions[index];
    const toolCallId = ids[index];
    switch (disposition.kind) {
      case 'refused':
        turn.record('TOOL_ERROR', { message: disposition.result, toolCallId }, { modelResult: disposition.result });
        return turn.observeToolCall(toolCallId, 'refused');
      case 'emit_output':
        return emitOutput(turn, { ...call, id: toolCallId }, validateOutput);
      case 'approval':
        return turn.record('TOOL_APPROVAL_REQUESTED', { toolCallId });
      case 'run':
      case 'service':
        return runToolCall(turn, turn.state.turnCalls[index]);
    }
  });
  advance(turn);
}

/** The text the model gets for a tool call whose effect failed (the handler turns tool failures into outcomes; this is the rest). */
function effectFailureResult(error: EffectError): string {
  if (error.code === 'DEADLINE_EXCEEDED') return '[timed out]';
  if (error.code === 'CANCELLED') return '[cancelled]';
  return `[error: ${error.message}]`;
}

/** A `tool.call` effect's outcome for a running call of the turn (anything else is stale and ignored). */
export function acceptToolOutcome(turn: ObjectiveTurn, outcome: EffectOutcome): void {
  const call = turn.state.turnCalls.find((candidate) => candidate.id === outcome.id && candidate.state === 'running');
  if (!call) return;
  if (!outcome.ok) {
    const content = effectFailureResult(outcome.error);
    turn.record('TOOL_ERROR', { message: `${outcome.error.code}: ${outcome.error.message}`, toolCallId: call.id }, { modelResult: content });
    turn.observeToolCall(call.id, effectFailureOutcome(outcome.error));
  } else {
    const result = outcome.value as ToolCallOutcome;
    if (result.ok) {
      turn.record('TOOL_RESULT', { content: result.content, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: result.content });
    } else {
      turn.record('TOOL_ERROR', { message: result.message, toolCallId: call.id, type: result.errorType }, { modelResult: result.content });
    }
    turn.observeToolCall(call.id, result.ok ? 'result' : toolErrorOutcome(result.errorType));
  }
  advance(turn);
}
