// Approve and deny (interface-spec "Tool approval flow", api-decisions.md
// "Objectives"): a compare-and-set on a tool call awaiting approval. The
// first decision wins; deciding again, or deciding a call that never awaited
// approval, is FAILED_PRECONDITION; an id the model never made is NOT_FOUND.
// A denial's memo goes back to the model as the call's result. Each decision
// is observed for the node's metrics (agentrt_tool_approvals_total).
import { FailedPreconditionError, NotFoundError } from '../errors';
import { advance, runToolCall } from './objective-loop';
import { TOOL_CALL_APPROVED, TOOL_CALL_DENIED } from './objective-observations';
import { isTerminal, type TurnToolCall } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/** The model's result for a denied call. */
export function deniedResult(memo: string): string {
  return memo ? `[denied: ${memo}]` : '[denied]';
}

function callAwaitingDecision(turn: ObjectiveTurn, toolCallId: string): TurnToolCall {
  const { state } = turn;
  if (!state.knownToolCallIds.includes(toolCallId)) throw NotFoundError.resource('tool call', toolCallId);
  const call = state.turnCalls.find((candidate) => candidate.id === toolCallId);
  if (!call || call.state !== 'awaiting_approval' || isTerminal(state.status)) {
    throw new FailedPreconditionError(`tool call ${toolCallId} is not awaiting approval`);
  }
  return call;
}

export function approveToolCall(turn: ObjectiveTurn, toolCallId: string): void {
  const call = callAwaitingDecision(turn, toolCallId);
  turn.record('TOOL_APPROVED', { toolCallId });
  turn.observe(TOOL_CALL_APPROVED);
  runToolCall(turn, call);
  advance(turn);
}

export function denyToolCall(turn: ObjectiveTurn, toolCallId: string, memo: string): void {
  callAwaitingDecision(turn, toolCallId);
  turn.record('TOOL_DENIED', { toolCallId, memo }, { modelResult: deniedResult(memo) });
  turn.observe(TOOL_CALL_DENIED);
  turn.observeToolCall(toolCallId, 'denied');
  advance(turn);
}
