// The objective loop (issue 9 item 2): call the model, record its answer, run
// or hold its tool calls, and once every call of the turn has a result call
// the model again, until it answers without tools (COMPLETED), emits a valid
// output (COMPLETED with the output), fails (FAILED) or is cancelled. Model
// and tool calls are effects, so they run outside the actor's turn and their
// results come back as inputs; nothing here does I/O.
import type { EffectError, EffectOutcome, EffectRequest } from '../ports/actor-behavior';
import type { ExecutableTool, ToolCallOutcome } from '../tools/tool-call-outcome';
import type { ChatRequest, ChatResponse, ChatToolCall } from './chat-model-types';
import { TOOL_CALL_LIMIT_RESULT, withinToolCallLimit } from './objective-limits';
import { EMIT_OUTPUT_TOOL_NAME, emitOutputToolDefinition, outputFromArguments, type OutputValidator } from './objective-output';
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

/** What the `tool.call` effect gets: a ToolCallRequest without its signal and deadline (those come from the effect context). */
export interface ToolCallEffectInput {
  toolCallId: string;
  tool: ExecutableTool;
  arguments: string;
  context: { workspaceId: string };
}

/** What the `model.call` effect gets: the request and the workspace whose provider key pays for it. */
export interface ModelCallEffectInput {
  workspaceId: string;
  request: ChatRequest;
}

/**
 * Deterministic per model turn, so a model call run again after a crash keeps
 * its id (a provider that de-duplicates by it sees the same key) and replay
 * derives the same id from the journal.
 */
export function modelCallEffectId(modelTurn: number): string {
  return `model_call_${modelTurn}`;
}

/** What the model is told for a call of the turn that never produced a result. */
function placeholderResult(call: TurnToolCall): string {
  return call.state === 'not_run' ? '[cancelled]' : '[no result]';
}

export function chatRequestOf(state: ObjectiveState): ChatRequest {
  const config = state.config!;
  const tools = config.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema }));
  if (config.outputDefinition) tools.push(emitOutputToolDefinition(config.outputDefinition));
  return {
    model: config.modelId,
    messages: [...(config.systemPrompt ? [{ role: 'system' as const, content: config.systemPrompt }] : []), ...state.conversation],
    tools,
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
  };
}

/** Starts the next model call: the open turn's results (placeholders for calls left without one) and the waiting user messages go first. */
export function startModelCall(turn: ObjectiveTurn): void {
  const { state } = turn;
  const effectId = modelCallEffectId(state.modelTurn + 1);
  turn.apply({
    type: 'model_call_started',
    effectId,
    toolResults: state.turnCalls.map((call) => ({ toolCallId: call.id, content: call.result ?? placeholderResult(call) })),
    userMessages: state.pendingUserMessages.length,
  });
  turn.startEffect({
    id: effectId,
    name: MODEL_CALL_EFFECT,
    input: { workspaceId: turn.config.workspaceId, request: chatRequestOf(turn.state) } satisfies ModelCallEffectInput,
    timeoutMs: turn.config.modelCallTimeoutMs ?? DEFAULT_MODEL_CALL_TIMEOUT_MS,
  });
}

export function setStatus(turn: ObjectiveTurn, status: ObjectiveStatus): void {
  if (turn.state.status !== status) turn.apply({ type: 'status_changed', status, at: turn.now });
}

/** Ends the run: the terminal status, then FINALIZED, always the last event. */
function finish(turn: ObjectiveTurn, status: ObjectiveStatus): void {
  setStatus(turn, status);
  const { state } = turn;
  turn.record('FINALIZED', { status, output: state.output, usage: state.usage });
}

/** Aborts whatever runs: the model call and the running tool calls (an aborted effect never reports). */
function abortRunning(turn: ObjectiveTurn): void {
  const { modelCallEffectId } = turn.state;
  if (modelCallEffectId) {
    turn.abortEffect(modelCallEffectId);
    turn.apply({ type: 'model_call_ended', effectId: modelCallEffectId });
  }
  for (const call of turn.state.turnCalls) if (call.state === 'running') turn.abortEffect(call.id);
}

export function failObjective(turn: ObjectiveTurn, error: ObjectiveError): void {
  abortRunning(turn);
  turn.apply({ type: 'error_set', error });
  turn.record('ERROR', { message: error.message, type: error.type });
  finish(turn, ObjectiveStatus.FAILED);
}

export function cancelObjective(turn: ObjectiveTurn, reason: string): void {
  abortRunning(turn);
  turn.record('CANCELLED', { reason });
  finish(turn, ObjectiveStatus.CANCELLED);
}

/** Starts one accepted tool call as an effect whose id is the tool call id (the Idempotency-Key the tool sees). */
export function runToolCall(turn: ObjectiveTurn, call: TurnToolCall): void {
  const tool = turn.config.tools.find((candidate) => candidate.name === call.name)!;
  turn.record('TOOL_CALLED', { toolCallId: call.id });
  const input: ToolCallEffectInput = {
    toolCallId: call.id,
    tool: tool.executable,
    arguments: call.arguments,
    context: { workspaceId: turn.config.workspaceId },
  };
  const effect: EffectRequest = { id: call.id, name: TOOL_CALL_EFFECT, input, timeoutMs: tool.effectTimeoutMs };
  turn.startEffect(effect);
}

/**
 * What comes next once something changed in the turn: wait while a call runs
 * or awaits a decision; once all have results, complete (a final answer with
 * no user message waiting) or call the model again. A valid output completes
 * as soon as nothing runs: a call still awaiting approval is dropped (it gets
 * a placeholder if a follow-up ever runs the objective again), because
 * holding a finished objective for a decision whose result nobody reads
 * would only delay the output.
 */
export function advance(turn: ObjectiveTurn): void {
  const { state } = turn;
  if (isTerminal(state.status) || state.modelCallEffectId) return;
  const awaiting = !state.outputEmitted && state.turnCalls.some((call) => call.state === 'awaiting_approval');
  const running = state.turnCalls.some((call) => call.state === 'running' || call.state === 'approved');
  if (awaiting || running) {
    setStatus(turn, awaiting ? ObjectiveStatus.AWAITING_APPROVAL : ObjectiveStatus.RUNNING);
    return;
  }
  if (state.outputEmitted) return finish(turn, ObjectiveStatus.COMPLETED);
  if (state.turnCalls.length > 0 || state.pendingUserMessages.length > 0) {
    setStatus(turn, ObjectiveStatus.RUNNING);
    return startModelCall(turn);
  }
  finish(turn, ObjectiveStatus.COMPLETED);
}

function toolReferenceOf(turn: ObjectiveTurn, name: string): Record<string, unknown> {
  const config = turn.config;
  if (name === EMIT_OUTPUT_TOOL_NAME && config.outputDefinition) return { serviceProvidedTool: { name } };
  const tool = config.tools.find((candidate) => candidate.name === name);
  return tool?.metadata ? { tool: tool.metadata } : {};
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
    return;
  }
  turn.apply({ type: 'output_emitted', output: parsed.output });
  turn.record('TOOL_RESULT', { content: OUTPUT_ACCEPTED_RESULT, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: OUTPUT_ACCEPTED_RESULT });
}

type CallDisposition = 'duplicate_id' | 'emit_output' | 'unknown_tool' | 'limit_reached' | 'approval' | 'run';

/** The result for a call whose id the model used before: its id is the Idempotency-Key, so running it could return the earlier call's result. */
export const DUPLICATE_CALL_ID_RESULT = 'tool call id already used: call again with a new id';

function dispositionsOf(turn: ObjectiveTurn, calls: ChatToolCall[]): CallDisposition[] {
  const config = turn.config;
  const seen = new Set(turn.state.knownToolCallIds);
  let accepted = 0;
  return calls.map((call) => {
    if (seen.has(call.id)) return 'duplicate_id';
    seen.add(call.id);
    if (call.name === EMIT_OUTPUT_TOOL_NAME && config.outputDefinition) return 'emit_output';
    const tool = config.tools.find((candidate) => candidate.name === call.name);
    if (!tool) return 'unknown_tool';
    if (!withinToolCallLimit(turn.state, accepted)) return 'limit_reached';
    accepted += 1;
    return tool.requiresApproval ? 'approval' : 'run';
  });
}

/** A model call's answer: the assistant message, then each tool call settled, held for approval or started (all of the turn together). */
export function acceptModelResponse(turn: ObjectiveTurn, effectId: string, response: ChatResponse, validateOutput: OutputValidator): void {
  turn.apply({ type: 'model_call_ended', effectId });
  const calls = response.toolCalls ?? [];
  turn.record(
    'ASSISTANT_MESSAGE',
    {
      content: response.content ?? '',
      toolCalls: calls.map((call) => ({ arguments: call.arguments, functionName: call.name, tool: toolReferenceOf(turn, call.name) })),
      ...(response.usage ? { usage: response.usage } : {}),
    },
    { assistant: { content: response.content ?? null, toolCalls: calls } },
  );
  const dispositions = dispositionsOf(turn, calls);
  turn.apply({
    type: 'tool_calls_received',
    calls: calls.map((call, index) => ({ ...call, counted: dispositions[index] === 'approval' || dispositions[index] === 'run' })),
  });
  calls.forEach((call, index) => {
    switch (dispositions[index]) {
      case 'duplicate_id':
        return turn.record('TOOL_ERROR', { message: DUPLICATE_CALL_ID_RESULT, toolCallId: call.id }, { modelResult: DUPLICATE_CALL_ID_RESULT });
      case 'emit_output':
        return emitOutput(turn, call, validateOutput);
      case 'unknown_tool': {
        const message = `unknown tool: ${call.name}`;
        return turn.record('TOOL_ERROR', { message, toolCallId: call.id }, { modelResult: message });
      }
      case 'limit_reached':
        return turn.record('TOOL_ERROR', { message: TOOL_CALL_LIMIT_RESULT, toolCallId: call.id }, { modelResult: TOOL_CALL_LIMIT_RESULT });
      case 'approval':
        return turn.record('TOOL_APPROVAL_REQUESTED', { toolCallId: call.id });
      case 'run':
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
  } else {
    const result = outcome.value as ToolCallOutcome;
    if (result.ok) {
      turn.record('TOOL_RESULT', { content: result.content, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: result.content });
    } else {
      turn.record('TOOL_ERROR', { message: result.message, toolCallId: call.id, type: result.errorType }, { modelResult: result.content });
    }
  }
  advance(turn);
}
