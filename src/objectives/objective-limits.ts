// The variation's constraints (api-decisions.md "Objectives"): a tool call
// beyond maxToolCalls is not executed; it gets a TOOL_ERROR event and the
// error result `limit reached: maxToolCalls`, and the model goes on, so it can
// still answer. 0 means no limit.
import type { ObjectiveState } from './objective-state';

export const TOOL_CALL_LIMIT_RESULT = 'limit reached: maxToolCalls';
export const SUB_OBJECTIVE_LIMIT_RESULT = 'limit reached: maxSubObjectives';

/** Whether one more tool call may run, given `alreadyCounted` calls accepted earlier in the same turn. */
export function withinToolCallLimit(state: ObjectiveState, alreadyCounted: number): boolean {
  const limit = state.config?.limits.maxToolCalls ?? 0;
  return limit <= 0 || state.toolCallCount + alreadyCounted < limit;
}
