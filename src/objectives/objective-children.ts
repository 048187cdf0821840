// Sub-agents, the parts that need nothing of the loop (issue 9 item 7,
// api-decisions.md "Tools and tool sets" and "Objectives"): an assigned
// sub-agent is a tool; a call creates a child objective. The parent draws the
// child's id in its own journal, then runs the effect `objective.prepare_child`
// (the composition root resolves the child's ObjectiveStart: agent, variation,
// tools, limits) whose id is the tool call id; on success the parent sends the
// child `start` in the same turn that records SUB_OBJECTIVE_CREATED (a
// transactional send: applied exactly once), and the call waits until the
// child reports `child_finished`. The child reports once, the first time it
// ends: a child run again by a follow-up message does not report again (its
// parent's call was settled long ago). Cancelling, failing or erasing the
// parent messages the children whose calls still wait.
import { newId } from '../ids';
import type { OperationMetadata } from '../schemas/common.schema';
import type { ObjectiveCommand } from './objective.behavior';
import { childShareOf } from './objective-budgets';
import { maxDepthOf } from './objective-limits';
import {
  isTerminal, OBJECTIVE_KIND, ObjectiveStatus, type ObjectiveError, type ObjectiveStart, type ObjectiveState, type ObjectiveTool, type ObjectiveUsage,
  type TurnToolCall,
} from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/** The effect that resolves a child objective's ObjectiveStart; its value is that ObjectiveStart. */
export const PREPARE_CHILD_EFFECT = 'objective.prepare_child';
/** Deadline of one `objective.prepare_child` run (database reads only). */
export const PREPARE_CHILD_TIMEOUT_MS = 30_000;
/** The cancel reason a child gets when its parent is cancelled. */
export const PARENT_CANCELLED_REASON = 'parent cancelled';
/** The cancel reason a child gets when its parent fails (a turn timeout, say) while the child runs. */
export const PARENT_FAILED_REASON = 'parent failed';

/** What `objective.prepare_child` gets: everything the composition root needs to resolve the child like an API create. */
export interface PrepareChildInput {
  workspaceId: string;
  accountId: string;
  parentObjectiveId: string;
  /** The child's id, drawn by the parent (the same on every re-run of the effect). */
  childObjectiveId: string;
  parentToolCallId: string;
  /** The sub-agent's agent. */
  agentId: string;
  /** The call's arguments (a JSON object): the child's `spec.data`. */
  data: unknown;
  /** The `prompt` argument when the sub-agent takes only a prompt, else null (the first message is then `data` as JSON). */
  initialMessage: string | null;
  /** The child's depth: the parent's + 1. */
  depth: number;
  /** The parent's tenant and subject: the child belongs to them too (an erasure reaches it). */
  tenantId: string | null;
  subjectId: string | null;
  /** The parent's creator, the child's `metadata.profileId`. */
  profileId: string;
  /** The parent's widget session (`wsess_…`), absent for none: the child's tools read its secrets too. */
  widgetSessionId?: string;
}

/** What a child sends its parent when it first ends. `content`: JSON of its output when set, else its last message, else ''. */
export interface ChildFinishedCommand {
  type: 'child_finished';
  childObjectiveId: string;
  toolCallId: string;
  status: ObjectiveStatus;
  content: string;
  /** The child's `info.usage` (its own children included). */
  usage: ObjectiveUsage;
  /** The child's error when it FAILED. */
  error: ObjectiveError | null;
}

/** A descendant's usage that reached a child after the child had reported (objective-sub-agents.ts acceptLateUsage). */
export interface ChildUsageCommand {
  type: 'child_usage';
  /** The child forwarding it. */
  childObjectiveId: string;
  /** The descendant whose report it came with: each is counted once. */
  sourceObjectiveId: string;
  usage: ObjectiveUsage;
}

/** A sub-agent call's arguments as the child's data and first message, or why they cannot be. */
export function subAgentArguments(tool: ObjectiveTool, raw: string): { data: Record<string, unknown>; initialMessage: string | null } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (error) {
    return { problem: `arguments are not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'arguments must be a JSON object' };
  const data = parsed as Record<string, unknown>;
  if (!tool.subAgent?.promptOnly) return { data, initialMessage: null };
  if (typeof data.prompt !== 'string') return { problem: 'arguments must have a "prompt" string' };
  return { data, initialMessage: data.prompt };
}

/** The result text an invalid sub-agent call gives the model. */
export function invalidSubAgentArgumentsResult(problem: string): string {
  return `invalid arguments: ${problem}`;
}

/** Runs one accepted sub-agent call: TOOL_CALLED, the child's id drawn and journaled, the prepare effect under the call's id. */
export function startChild(turn: ObjectiveTurn, call: TurnToolCall, tool: ObjectiveTool): void {
  const config = turn.config;
  const parsed = subAgentArguments(tool, call.arguments);
  // Checked when the call was accepted; arguments never change after.
  if ('problem' in parsed) throw new Error(`sub-agent call ${call.id} has invalid arguments: ${parsed.problem}`);
  turn.record('TOOL_CALLED', { toolCallId: call.id });
  const childObjectiveId = newId('objective');
  turn.apply({ type: 'child_assigned', toolCallId: call.id, childObjectiveId });
  const input: PrepareChildInput = {
    workspaceId: config.workspaceId,
    accountId: config.accountId,
    parentObjectiveId: config.objectiveId,
    childObjectiveId,
    parentToolCallId: call.id,
    agentId: tool.subAgent!.agentId,
    data: parsed.data,
    initialMessage: parsed.initialMessage,
    depth: (config.depth ?? 0) + 1,
    tenantId: config.spec.tenantId,
    subjectId: config.spec.subjectId,
    profileId: config.metadata.objective.profileId,
    ...(config.widgetSessionId ? { widgetSessionId: config.widgetSessionId } : {}),
  };
  turn.startEffect({ id: call.id, name: PREPARE_CHILD_EFFECT, input, timeoutMs: PREPARE_CHILD_TIMEOUT_MS });
}

/**
 * The child's start from the prepare effect's value, with its lineage made
 * certain (depth, parent, tool call, the parent's widget session, the parent's
 * depth limit when it sets none) and its share of this objective's budget
 * (childShareOf); a problem text when the value is not the start of the
 * expected child, or when the budget leaves it nothing (`limit reached: …`).
 */
export function childStartOf(state: ObjectiveState, call: TurnToolCall, value: unknown): ObjectiveStart | { problem: string } {
  const start = value as ObjectiveStart | null;
  if (typeof start !== 'object' || start === null || typeof start.objectiveId !== 'string' || !start.metadata?.objective || !start.spec || !start.limits) {
    return { problem: 'the sub-agent could not be prepared: no objective start came back' };
  }
  if (start.objectiveId !== call.child?.objectiveId) {
    return { problem: `the sub-agent could not be prepared: objective ${start.objectiveId} is not the child ${call.child?.objectiveId}` };
  }
  const budget = childShareOf(state, call);
  if ('refused' in budget) return { problem: budget.refused.message };
  const config = state.config!;
  const { parentShare: _notItsOwn, ...ownLimits } = start.limits;
  return {
    ...start,
    depth: (config.depth ?? 0) + 1,
    parentToolCallId: call.id,
    // A sub-agent of a session's objective reads the session's secrets, never the workspace's in their place.
    ...(config.widgetSessionId ? { widgetSessionId: config.widgetSessionId } : {}),
    spec: { ...start.spec, parentObjectiveId: config.objectiveId },
    limits: {
      ...ownLimits,
      maxDepth: start.limits.maxDepth ?? maxDepthOf(state),
      ...(Object.keys(budget.share).length ? { parentShare: budget.share } : {}),
      // A share of a budget the parent runs one sub-agent at a time is spent the same way down the tree.
      ...(config.limits.sequentialSubAgents ? { sequentialSubAgents: true as const } : {}),
    },
  };
}

/** Sends the child its start and records its creation (SUB_OBJECTIVE_CREATED, SUB_AGENT_SPAWNED) on the parent. */
export function spawnChild(turn: ObjectiveTurn, call: TurnToolCall, start: ObjectiveStart): void {
  const metadata: OperationMetadata = start.metadata.objective;
  const share = start.limits.parentShare;
  turn.apply({ type: 'child_started', toolCallId: call.id, metadata, ...(share ? { share } : {}) });
  // The child's id was made up by its prepare: this is the first command it ever gets.
  turn.send(OBJECTIVE_KIND, start.objectiveId, { type: 'start', start } satisfies ObjectiveCommand, { first: true });
  turn.record('SUB_OBJECTIVE_CREATED', { metadata });
  turn.record('SUB_AGENT_SPAWNED', { metadata, status: ObjectiveStatus.PENDING, toolCallId: call.id });
}

/** What a child's end gives its parent's call: JSON of the output when set, else the last message, else ''. */
export function childContentOf(state: ObjectiveState): string {
  if (state.output !== null && state.output !== undefined) return JSON.stringify(state.output);
  return state.lastMessage ?? '';
}

/** A child that has just ended tells its parent, the first time only. */
export function reportToParent(turn: ObjectiveTurn): void {
  const { state } = turn;
  const config = turn.config;
  const parentId = config.spec.parentObjectiveId;
  if (!parentId || !config.parentToolCallId || state.reportedToParent || !isTerminal(state.status)) return;
  turn.apply({ type: 'reported_to_parent' });
  const report: ChildFinishedCommand = {
    type: 'child_finished',
    childObjectiveId: config.objectiveId,
    toolCallId: config.parentToolCallId,
    status: state.status!,
    content: childContentOf(state),
    usage: state.usage,
    error: state.error,
  };
  turn.send(OBJECTIVE_KIND, parentId, report satisfies ObjectiveCommand);
}

/**
 * Stops what the calls of the turn still run, as the objective ends: a
 * running tool call or prepare effect is aborted (an aborted effect never
 * reports); a started child is sent `cancel` with `childReason`, unless
 * `childReason` is null (the caller messages the children itself).
 */
export function stopRunningCalls(turn: ObjectiveTurn, childReason: string | null): void {
  for (const call of turn.state.turnCalls) {
    if (call.state !== 'running') continue;
    if (call.child?.started) {
      if (childReason !== null) turn.send(OBJECTIVE_KIND, call.child.objectiveId, { type: 'cancel', reason: childReason, fromParent: true } satisfies ObjectiveCommand);
    } else {
      turn.abortEffect(call.id);
    }
  }
}
