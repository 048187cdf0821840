// Sub-agents, the parts that move the loop on (issue 9 item 7): the prepare
// effect's outcome (the child is started through a transactional send, or the
// call gets a TOOL_ERROR with the reason) and the child's report (a
// SUB_AGENT_UPDATED, then the call's TOOL_RESULT or TOOL_ERROR, the child's
// usage added to the parent's, and the loop goes on as for any tool result).
// Anything stale (an outcome for a call that no longer waits) changes
// nothing; a report nothing waits for any more (it came after the parent
// ended) only adds the child's usage, once, so a report delivered twice is
// harmless.
import type { EffectOutcome } from '../ports/actor-behavior';
import { childStartOf, spawnChild, type ChildFinishedCommand, type ChildUsageCommand } from './objective-children';
import { advance, TOOL_RESULT_TYPE_TEXT } from './objective-loop';
import { isTerminal, OBJECTIVE_KIND, ObjectiveStatus, type ObjectiveError, type ObjectiveState, type ObjectiveUsage, type TurnToolCall } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/** The call whose child is being prepared under this effect id, if the objective still waits for it. */
function callBeingPrepared(state: ObjectiveState, effectId: string): TurnToolCall | undefined {
  return state.turnCalls.find((call) => call.id === effectId && call.state === 'running' && call.child && !call.child.started);
}

/** Whether an interrupted `objective.prepare_child` run is still expected (then it runs again with the same input and so the same child id). */
export function expectsPrepareChild(state: ObjectiveState, effectId: string): boolean {
  return !isTerminal(state.status) && callBeingPrepared(state, effectId) !== undefined;
}

/** The outcome of `objective.prepare_child`: the child is started, or the call fails with the reason. */
export function acceptPrepareOutcome(turn: ObjectiveTurn, outcome: EffectOutcome): void {
  const call = callBeingPrepared(turn.state, outcome.id);
  if (!call) return;
  const start = outcome.ok ? childStartOf(turn.state, call, outcome.value) : { problem: `the sub-agent could not be started: ${outcome.error.message}` };
  if ('problem' in start) {
    turn.record('TOOL_ERROR', { message: start.problem, toolCallId: call.id }, { modelResult: start.problem });
    turn.observeToolCall(call.id, 'error');
  } else {
    spawnChild(turn, call, start);
  }
  advance(turn);
}

/** What the model is told when the child did not complete. */
export function childFailureResult(status: string, error: ObjectiveError | null): string {
  if (status === ObjectiveStatus.CANCELLED) return '[sub-agent cancelled]';
  return `[sub-agent failed: ${error?.message ?? 'no reason given'}]`;
}

/**
 * Usage of a descendant that reported when nothing waited for it any more (this
 * objective ended first, say, and cancelled it): it still joins this
 * objective's usage, once per descendant, and goes on up when this objective
 * has already reported to its own parent (whose usage would otherwise miss it).
 */
function acceptLateUsage(turn: ObjectiveTurn, childObjectiveId: string, sourceObjectiveId: string, usage: ObjectiveUsage): void {
  const { state } = turn;
  if (!state.childObjectiveIds.includes(childObjectiveId) || (state.reportedChildIds ?? []).includes(sourceObjectiveId)) return;
  turn.apply({ type: 'late_usage_added', sourceObjectiveId, usage });
  const parentId = turn.config.spec.parentObjectiveId;
  if (parentId && state.reportedToParent) {
    const forward: ChildUsageCommand = { type: 'child_usage', childObjectiveId: turn.config.objectiveId, sourceObjectiveId, usage };
    turn.send(OBJECTIVE_KIND, parentId, forward);
  }
}

/** A descendant's usage forwarded by a child that had already reported (acceptLateUsage one level down). */
export function acceptChildUsage(turn: ObjectiveTurn, command: ChildUsageCommand): void {
  acceptLateUsage(turn, command.childObjectiveId, command.sourceObjectiveId, command.usage);
}

/** A child's report: SUB_AGENT_UPDATED, the call's result, the child's usage summed in. */
export function acceptChildFinished(turn: ObjectiveTurn, report: ChildFinishedCommand): void {
  const call = turn.state.turnCalls.find((candidate) => candidate.id === report.toolCallId);
  const waiting = !isTerminal(turn.state.status) && call?.state === 'running' && call.child?.started && call.child.objectiveId === report.childObjectiveId;
  if (!call?.child || !waiting) {
    // A report that names another call of a child still awaited is stray: the right one will come.
    const awaited = !isTerminal(turn.state.status)
      && turn.state.turnCalls.some((candidate) => candidate.state === 'running' && candidate.child?.objectiveId === report.childObjectiveId);
    if (!awaited) acceptLateUsage(turn, report.childObjectiveId, report.childObjectiveId, report.usage);
    return;
  }
  turn.apply({ type: 'child_finished', toolCallId: call.id, usage: report.usage, childObjectiveId: report.childObjectiveId });
  turn.record('SUB_AGENT_UPDATED', { metadata: call.child.metadata, status: report.status, toolCallId: call.id });
  if (report.status === ObjectiveStatus.COMPLETED) {
    turn.record('TOOL_RESULT', { content: report.content, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: report.content });
    turn.observeToolCall(call.id, 'result');
  } else {
    const result = childFailureResult(report.status, report.error);
    const message = `sub-objective ${report.childObjectiveId} ended ${report.status}${report.error ? `: ${report.error.message}` : ''}`;
    turn.record('TOOL_ERROR', { message, toolCallId: call.id }, { modelResult: result });
    turn.observeToolCall(call.id, report.status === ObjectiveStatus.CANCELLED ? 'cancelled' : 'error');
  }
  advance(turn);
}
