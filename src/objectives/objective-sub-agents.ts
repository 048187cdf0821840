// Sub-agents, the parts that move the loop on (issue 9 item 7): the prepare
// effect's outcome (the child is started through a transactional send, or the
// call gets a TOOL_ERROR with the reason) and the child's report (a
// SUB_AGENT_UPDATED, then the call's TOOL_RESULT or TOOL_ERROR, the child's
// usage added to the parent's, and the loop goes on as for any tool result).
// Anything stale (an outcome or a report for a call that no longer waits, a
// report after the parent ended) changes nothing, so a report delivered twice
// is harmless.
import type { EffectOutcome } from '../ports/actor-behavior';
import { childStartOf, spawnChild, type ChildFinishedCommand } from './objective-children';
import { advance, TOOL_RESULT_TYPE_TEXT } from './objective-loop';
import { isTerminal, ObjectiveStatus, type ObjectiveError, type ObjectiveState, type TurnToolCall } from './objective-state';
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

/** A child's report: SUB_AGENT_UPDATED, the call's result, the child's usage summed in. */
export function acceptChildFinished(turn: ObjectiveTurn, report: ChildFinishedCommand): void {
  if (isTerminal(turn.state.status)) return;
  const call = turn.state.turnCalls.find((candidate) => candidate.id === report.toolCallId);
  if (!call || call.state !== 'running' || !call.child?.started || call.child.objectiveId !== report.childObjectiveId) return;
  turn.apply({ type: 'child_finished', toolCallId: call.id, usage: report.usage });
  turn.record('SUB_AGENT_UPDATED', { metadata: call.child.metadata, status: report.status, toolCallId: call.id });
  if (report.status === ObjectiveStatus.COMPLETED) {
    turn.record('TOOL_RESULT', { content: report.content, toolCallId: call.id, type: TOOL_RESULT_TYPE_TEXT }, { modelResult: report.content });
  } else {
    const result = childFailureResult(report.status, report.error);
    const message = `sub-objective ${report.childObjectiveId} ended ${report.status}${report.error ? `: ${report.error.message}` : ''}`;
    turn.record('TOOL_ERROR', { message, toolCallId: call.id }, { modelResult: result });
  }
  advance(turn);
}
