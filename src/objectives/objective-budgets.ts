// Budgets that end runaway loops (issue 24 item 4; api-decisions.md
// "Extensions"): the variation's `constraints.maxModelTurns` (model answers
// per run, default 50), `maxTokens` (over the objective and its
// sub-objectives; default the node's AGENTRT_OBJECTIVE_MAX_TOKENS, resolved
// when the objective starts) and `maxCostCents` (over the objective and its
// sub-objectives, no limit by default). They are checked before each
// model call, so a model that answered within them still has its answer
// taken; one reached ends the objective FAILED with an ERROR of type
// LIMIT_REACHED whose message names the constraint. Past `maxToolCalls` (and
// `maxSubObjectives`) the next model call is offered none of the tools that
// limit stops, so the model has to answer.
import { withinSubObjectiveLimit, withinToolCallLimit } from './objective-limits';
import { objectiveToolsOf } from './objective-service-tools';
import type { ObjectiveError, ObjectiveState, ObjectiveTool } from './objective-state';

/** Model turns per run when the variation sets no `constraints.maxModelTurns`. */
export const DEFAULT_MAX_MODEL_TURNS = 50;
/**
 * Tokens (prompt + completion, over the objective and its sub-objectives)
 * when neither the variation (`constraints.maxTokens`) nor the node
 * (AGENTRT_OBJECTIVE_MAX_TOKENS) sets a cap: enough for 50 turns at a
 * 200k-token context, so only a runaway reaches it.
 */
export const DEFAULT_OBJECTIVE_MAX_TOKENS = 10_000_000;
/** The ERROR type of an objective ended by one of its budgets. */
export const LIMIT_REACHED_ERROR_TYPE = 'LIMIT_REACHED';

export function maxModelTurnsOf(state: ObjectiveState): number {
  return state.config?.limits.maxModelTurns ?? DEFAULT_MAX_MODEL_TURNS;
}

/** The budget the next model call would exceed, as the objective's error; null when all allow it. */
export function modelBudgetExceeded(state: ObjectiveState): ObjectiveError | null {
  const limits = state.config?.limits;
  if (!limits) return null;
  const maxTurns = maxModelTurnsOf(state);
  const turns = state.runModelTurns ?? 0;
  if (maxTurns > 0 && turns >= maxTurns) {
    return { type: LIMIT_REACHED_ERROR_TYPE, message: `limit reached: maxModelTurns (the model answered ${turns} times in this run; the limit is ${maxTurns})` };
  }
  const tokens = state.usage.promptTokens + state.usage.completionTokens;
  if (limits.maxTokens && tokens >= limits.maxTokens) {
    return { type: LIMIT_REACHED_ERROR_TYPE, message: `limit reached: maxTokens (${tokens} tokens used; the limit is ${limits.maxTokens})` };
  }
  if (limits.maxCostCents && state.usage.costCents >= limits.maxCostCents) {
    return { type: LIMIT_REACHED_ERROR_TYPE, message: `limit reached: maxCostCents (${state.usage.costCents} cents spent; the limit is ${limits.maxCostCents})` };
  }
  return null;
}

/** The tools the next model call offers: none that maxToolCalls (tools) or maxSubObjectives (sub-agents) would refuse. */
export function offeredTools(state: ObjectiveState): ObjectiveTool[] {
  const tools = objectiveToolsOf(state);
  const toolsAllowed = withinToolCallLimit(state, 0);
  const childrenAllowed = withinSubObjectiveLimit(state, 0);
  if (toolsAllowed && childrenAllowed) return tools;
  return tools.filter((tool) => (tool.subAgent ? childrenAllowed : toolsAllowed));
}
