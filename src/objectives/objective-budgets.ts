// Budgets that end runaway loops (issue 24 item 4, issue 27 item 3;
// api-decisions.md "Extensions"): the variation's `constraints.maxModelTurns`
// (model answers per run, default 50), `maxTokens` (prompt + completion
// tokens over the objective and its sub-objectives; default the node's
// AGENTRT_OBJECTIVE_MAX_TOKENS, resolved when the objective starts) and
// `maxCostCents` (cents over the objective and its sub-objectives, no limit
// by default). They are checked before each model call (startModelCall, and
// before the call a compaction's summary made room for), so a model that
// answered within them still has its answer taken; one reached ends the
// objective FAILED with an ERROR of type LIMIT_REACHED whose message names the
// constraint. The cost of the next call is unknown until it answers, so the
// rule is: no model call starts once the usage so far has reached the budget,
// and a budget is passed by at most the call that crossed it.
//
// Sub-objectives spend their parent's budget: a child starts with a share of
// what the parent has free (`limits.parentShare`, its limit being the lower of
// that and its own variation's), and its usage joins the parent's when it
// ends. The free budget (the limit less the usage so far and the shares of
// the turn's children still running) is split evenly among the turn's
// sub-agent calls that may still start a child, so children running side by
// side never hold more than was free; a call that would get nothing is
// refused with the same `limit reached` error. Under a budget the variation
// set (limits.sequentialSubAgents) the turn's sub-agent calls run one at a
// time, so each model call in the tree starts only while the whole tree is
// under the budget, and the tree passes it by less than one call; side by
// side (under the node's default cap alone) each child may cross its own
// share by one call. The shares are drawn from the
// state alone and journaled with the child's start (`child_started`), so a
// replay decides the same. Past `maxToolCalls` (and `maxSubObjectives`) the
// next model call is offered none of the tools that limit stops, so the model
// has to answer.
import { roundCents } from '../models/model-usage';
import { limitReached, withinSubObjectiveLimit, withinToolCallLimit } from './objective-limits';
import { objectiveToolsOf } from './objective-service-tools';
import type { ObjectiveError, ObjectiveState, ObjectiveTool, ObjectiveUsage, TurnToolCall } from './objective-state';

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

/** Spending limits over an objective and its sub-objectives: what a parent hands a child as its share. */
export interface SpendingBudget {
  /** Prompt + completion tokens. */
  maxTokens?: number;
  maxCostCents?: number;
}
type SpendingConstraint = keyof SpendingBudget;
const SPENDING_CONSTRAINTS: readonly SpendingConstraint[] = ['maxTokens', 'maxCostCents'];

/** An objective's limit on one constraint and whether its parent's share set it (rather than its own variation). */
interface SpendingLimit {
  limit: number;
  fromParent: boolean;
}

export function maxModelTurnsOf(state: ObjectiveState): number {
  return state.config?.limits.maxModelTurns ?? DEFAULT_MAX_MODEL_TURNS;
}

/** What the usage counts against a constraint: tokens, or cents rounded as every cost is (so float noise never decides). */
function spentOf(usage: ObjectiveUsage, constraint: SpendingConstraint): number {
  return constraint === 'maxTokens' ? usage.promptTokens + usage.completionTokens : roundCents(usage.costCents);
}

/** The lower of the variation's limit (0 or absent: none) and the parent's share; null when neither limits it. */
function spendingLimitOf(state: ObjectiveState, constraint: SpendingConstraint): SpendingLimit | null {
  const limits = state.config?.limits;
  if (!limits) return null;
  const own = limits[constraint] || undefined;
  const share = limits.parentShare?.[constraint];
  if (share === undefined) return own === undefined ? null : { limit: own, fromParent: false };
  return own !== undefined && own <= share ? { limit: own, fromParent: false } : { limit: share, fromParent: true };
}

/** `limit reached: maxTokens (120 tokens used; the limit is 100)`, with what running children hold and where the limit came from when that matters. */
function spendingLimitReached(constraint: SpendingConstraint, used: number, held: number, limit: SpendingLimit): ObjectiveError {
  const amount = constraint === 'maxTokens' ? `${used} tokens used` : `${used} cents spent`;
  const holding = held > 0 ? ` and ${held} held by running sub-objectives` : '';
  const source = limit.fromParent ? ", this sub-objective's share of its parent's budget" : '';
  return { type: LIMIT_REACHED_ERROR_TYPE, message: limitReached(constraint, `${amount}${holding}; the limit is ${limit.limit}${source}`) };
}

/** The budget the next model call would exceed, as the objective's error; null when all allow it. */
export function modelBudgetExceeded(state: ObjectiveState): ObjectiveError | null {
  if (!state.config) return null;
  const maxTurns = maxModelTurnsOf(state);
  const turns = state.runModelTurns ?? 0;
  if (maxTurns > 0 && turns >= maxTurns) {
    return { type: LIMIT_REACHED_ERROR_TYPE, message: limitReached('maxModelTurns', `the model answered ${turns === 1 ? 'once' : `${turns} times`} in this run; the limit is ${maxTurns}`) };
  }
  for (const constraint of SPENDING_CONSTRAINTS) {
    const limit = spendingLimitOf(state, constraint);
    const used = spentOf(state.usage, constraint);
    if (limit && used >= limit.limit) return spendingLimitReached(constraint, used, 0, limit);
  }
  return null;
}

function isSubAgentCall(state: ObjectiveState, call: TurnToolCall): boolean {
  return call.child !== undefined || objectiveToolsOf(state).some((tool) => tool.name === call.name && tool.subAgent !== undefined);
}

/**
 * The share of this objective's spending budget the child of `call` (being
 * prepared) starts with, or the error refusing the call when its share would
 * be empty. Free: the limit less the usage so far (reported children
 * included) and the shares of the turn's children still running; split
 * evenly among the turn's sub-agent calls that may still start a child (this
 * one, those being prepared, those awaiting or given approval), so the
 * shares never add up to more than was free: tokens rounded down, cents
 * rounded to a billionth as every cost is (to the nearest, so that a single
 * child's share is exactly what was free and its usage reaching its share
 * takes the parent to its limit). Constraints without a limit give no share.
 */
export function childShareOf(state: ObjectiveState, call: TurnToolCall): { share: SpendingBudget } | { refused: ObjectiveError } {
  const running = state.turnCalls.filter((candidate) => candidate.state === 'running' && candidate.child?.started);
  const mayStart = state.turnCalls.filter((candidate) => candidate.id === call.id
    || (candidate.state === 'running' && candidate.child && !candidate.child.started)
    || candidate.state === 'queued'
    || ((candidate.state === 'awaiting_approval' || candidate.state === 'approved') && isSubAgentCall(state, candidate))).length;
  const share: SpendingBudget = {};
  for (const constraint of SPENDING_CONSTRAINTS) {
    const limit = spendingLimitOf(state, constraint);
    if (!limit) continue;
    const used = spentOf(state.usage, constraint);
    const held = roundCents(running.reduce((sum, candidate) => sum + (candidate.child?.share?.[constraint] ?? 0), 0));
    const free = roundCents(limit.limit - used - held);
    const each = constraint === 'maxTokens' ? Math.floor(free / mayStart) : roundCents(free / mayStart);
    if (each <= 0) return { refused: spendingLimitReached(constraint, used, held, limit) };
    share[constraint] = each;
  }
  return { share };
}

/**
 * Whether a sub-agent call about to run must wait: the objective runs its
 * sub-agent calls one at a time (limits.sequentialSubAgents) and another of
 * the turn's is being prepared, works, or waits its turn already. Side by
 * side, each child may cross its own share by one model call; one at a time,
 * each call starts only while the whole tree is under the budget, so the tree
 * passes it by less than one model call.
 */
export function waitsForSubAgent(state: ObjectiveState, call: TurnToolCall): boolean {
  if (!state.config?.limits.sequentialSubAgents) return false;
  return state.turnCalls.some((other) => other.id !== call.id && (other.state === 'queued' || (other.state === 'running' && other.child !== undefined)));
}

/** The sub-agent call whose turn it is to run, once none runs (limits.sequentialSubAgents); undefined when none waits or one still runs. */
export function nextQueuedSubAgentCall(state: ObjectiveState): TurnToolCall | undefined {
  if (state.turnCalls.some((call) => call.state === 'running' && call.child !== undefined)) return undefined;
  return state.turnCalls.find((call) => call.state === 'queued');
}

/** The tools the next model call offers: none that maxToolCalls (tools) or maxSubObjectives (sub-agents) would refuse. */
export function offeredTools(state: ObjectiveState): ObjectiveTool[] {
  const tools = objectiveToolsOf(state);
  const toolsAllowed = withinToolCallLimit(state, 0);
  const childrenAllowed = withinSubObjectiveLimit(state, 0);
  if (toolsAllowed && childrenAllowed) return tools;
  return tools.filter((tool) => (tool.subAgent ? childrenAllowed : toolsAllowed));
}
