// The variation's constraints (api-decisions.md "Objectives"): a tool call
// beyond maxToolCalls, or a sub-agent call beyond maxSubObjectives, is not
// executed; it gets a TOOL_ERROR event and the error result `limit reached:
// maxToolCalls` (or `maxSubObjectives`), and the model goes on, so it can
// still answer. 0 means no limit. Sub-agent calls count against
// maxSubObjectives only, never against maxToolCalls. A depth limit (issue 9
// item 7, default 5) stops runaway recursion: a call that would create a
// child deeper than `limits.maxDepth` gets the same treatment.
import type { ObjectiveState } from './objective-state';

/**
 * How every limit reports what it stopped (a refused call's result, a budget's error):
 * `limit reached: <constraint>`, then what was counted in parentheses when there is more to say.
 */
export function limitReached(constraint: string, detail?: string): string {
  return `limit reached: ${constraint}${detail ? ` (${detail})` : ''}`;
}

export const TOOL_CALL_LIMIT_RESULT = limitReached('maxToolCalls');
export const SUB_OBJECTIVE_LIMIT_RESULT = limitReached('maxSubObjectives');
/** How deep sub-objectives may nest when the start sets no `limits.maxDepth` (a top-level objective is depth 0). */
export const DEFAULT_MAX_OBJECTIVE_DEPTH = 5;

/** Whether one more tool call may run, given `alreadyCounted` calls accepted earlier in the same turn. */
export function withinToolCallLimit(state: ObjectiveState, alreadyCounted: number): boolean {
  const limit = state.config?.limits.maxToolCalls ?? 0;
  return limit <= 0 || state.toolCallCount + alreadyCounted < limit;
}

/** Whether one more child may be created, given `alreadyAccepted` sub-agent calls accepted earlier in the same turn. */
export function withinSubObjectiveLimit(state: ObjectiveState, alreadyAccepted: number): boolean {
  const limit = state.config?.limits.maxSubObjectives ?? 0;
  return limit <= 0 || state.subObjectiveCount + alreadyAccepted < limit;
}

export function maxDepthOf(state: ObjectiveState): number {
  return state.config?.limits.maxDepth ?? DEFAULT_MAX_OBJECTIVE_DEPTH;
}

/** Whether a child of this objective (at its depth + 1) stays within maxDepth. */
export function withinDepthLimit(state: ObjectiveState): boolean {
  return (state.config?.depth ?? 0) + 1 <= maxDepthOf(state);
}

export function depthLimitResult(maxDepth: number): string {
  return limitReached(`sub-objective depth ${maxDepth}`);
}
