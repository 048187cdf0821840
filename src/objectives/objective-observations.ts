// What an objective's turn tells the node's metrics (ActorDecision.observations):
// an objective started or reached a final status, a tool call ended and how, a
// person approved or denied a tool call.
// Plain data with bounded values (a kind, an outcome, never an id), decided
// here where the facts are known; actors/domain-metrics.ts counts them once
// the turn has committed.
import type { EffectError } from '../ports/actor-behavior';
import { ToolErrorType } from '../tools/tool-call-outcome';
import type { ObjectiveStatus } from './objective-state';

/**
 * What kind of tool a call went to: an HTTP or MCP tool, a sub-agent, a
 * service tool (`load_skill`, `memory_read`, `memory_write`,
 * `search_tools`), `emit_output`, or a name the objective does not offer.
 */
export type ToolCallKind = 'http' | 'mcp' | 'sub_agent' | 'service' | 'output' | 'unknown';

/**
 * How a tool call ended: its result, a denial, a refusal before it ran (a
 * limit, an unknown tool), or its error: the tool's own ToolErrorType in
 * lower case (`http_error`, `timed_out` …), `cancelled`/`timed_out` for a
 * run the runtime stopped, `error` for any other failure.
 */
export type ToolCallOutcomeLabel = 'result' | 'denied' | 'refused' | 'error' | Lowercase<ToolErrorType>;

/** A person's decision on a tool call awaiting approval. */
export type ApprovalDecision = 'approved' | 'denied';

export type ObjectiveObservation =
  | { type: 'objective_started' }
  /** `errorType`: the objective's error type when FAILED (as its ERROR event shows it), else null. */
  | { type: 'objective_finished'; status: ObjectiveStatus; errorType: string | null }
  | { type: 'tool_call_finished'; kind: ToolCallKind; outcome: ToolCallOutcomeLabel }
  | { type: 'approval_decided'; decision: ApprovalDecision };

/** The start of an objective: the same fact every time, made once. */
export const OBJECTIVE_STARTED: ObjectiveObservation = Object.freeze({ type: 'objective_started' });

/** An approval and a denial: the same facts every time, made once (a denied call also ends, as `tool_call_finished`/`denied`). */
export const TOOL_CALL_APPROVED: ObjectiveObservation = Object.freeze({ type: 'approval_decided', decision: 'approved' });
export const TOOL_CALL_DENIED: ObjectiveObservation = Object.freeze({ type: 'approval_decided', decision: 'denied' });

const TOOL_ERROR_OUTCOMES = new Map<string, ToolCallOutcomeLabel>(
  Object.values(ToolErrorType).map((type) => [type, type.toLowerCase() as Lowercase<ToolErrorType>]),
);

/** The outcome of a call that failed with a tool error type (`HTTP_ERROR` → `http_error`); `error` for one unknown here. */
export function toolErrorOutcome(errorType: string | undefined): ToolCallOutcomeLabel {
  return (errorType && TOOL_ERROR_OUTCOMES.get(errorType)) || 'error';
}

/** The outcome of a call whose effect failed: the runtime's deadline, an abort, or another failure. */
export function effectFailureOutcome(error: EffectError): ToolCallOutcomeLabel {
  if (error.code === 'DEADLINE_EXCEEDED') return 'timed_out';
  if (error.code === 'CANCELLED') return 'cancelled';
  return 'error';
}
