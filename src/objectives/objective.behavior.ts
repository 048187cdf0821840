// The objective actor's decisions (issue 9 item 2): kind `objective`, one
// actor per objective, as a pure ActorBehavior. Commands come from the API
// layer (start, follow-up message, cancel, approve, deny, erase, get) and from
// other objectives (a parent starts and cancels its children, a child reports
// `child_finished`); model calls, tool calls and the preparation of a child
// are effects whose outcomes come back through onEffectResult; the turn
// timeout is a reminder. Every step is a public event with a gapless
// sequence, published to OBJECTIVE_EVENTS and projected with the objective
// row. The effect handlers (`model.call`, compaction's `model.summarize`,
// `tool.call`, `objective.prepare_child`) and the projector are wired where the runtime is
// composed; this module declares only the decisions and the stream.
import { FailedPreconditionError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { ActorBehavior, ActorContext, EffectOutcome, FiredReminder, RunningEffect, StreamDeclaration } from '../ports/actor-behavior';
import type { ChatResponse } from './chat-model-types';
import { approveToolCall, denyToolCall } from './objective-approvals';
import { OBJECTIVE_EVENTS_STREAM, objectiveCreatedRowOf, objectiveInfoOf, type ObjectiveChange, type ObjectiveInfoChange } from './objective-events';
import { PREPARE_CHILD_EFFECT, type ChildFinishedCommand, type ChildUsageCommand } from './objective-children';
import { eraseObjective } from './objective-erasure';
import {
  acceptModelResponse, acceptToolOutcome, advance, cancelObjective, failObjective, MODEL_CALL_EFFECT, modelCallEffect, setStatus, startModelCall, TOOL_CALL_EFFECT,
  TURN_DEADLINE_REMINDER, TURN_TIMED_OUT_ERROR_TYPE, turnDeadlineOf,
} from './objective-loop';
import { acceptModelCallFailure, MODEL_RETRY_REMINDER, retryModelCall } from './objective-retries';
import { ajvOutputValidator, type OutputValidator } from './objective-output';
import { OBJECTIVE_STARTED } from './objective-observations';
import {
  evolveObjective, initialObjectiveState, isTerminal, OBJECTIVE_KIND, ObjectiveStatus, type ObjectiveEvent, type ObjectiveStart, type ObjectiveState,
} from './objective-state';
import { SERVICE_TOOL_EFFECT } from '../ports/service-tools';
import { acceptServiceToolOutcome } from './objective-service-tools';
import { acceptSummary, MODEL_SUMMARIZE_EFFECT, summarizeEffect } from './objective-compaction';
import { acceptChildFinished, acceptChildUsage, acceptPrepareOutcome, expectsPrepareChild } from './objective-sub-agents';
import { ObjectiveTurn } from './objective-turn';

export { OBJECTIVE_KIND } from './objective-state';
export const DEFAULT_CANCEL_REASON = 'cancelled by request';

export type ObjectiveCommand =
  | { type: 'start'; start: ObjectiveStart }
  | { type: 'message'; content: string }
  /**
   * `fromParent`: a parent cascading its own cancel (or failure). An objective
   * that already ended ignores it; an API cancel of an ended objective is
   * FAILED_PRECONDITION.
   */
  | { type: 'cancel'; reason?: string; fromParent?: boolean }
  | { type: 'approve'; toolCallId: string }
  | { type: 'deny'; toolCallId: string; memo?: string }
  /** From a child objective, the first time it ends (see ChildFinishedCommand). */
  | ChildFinishedCommand
  /** From a child that had already reported: usage of its own descendants that ended after it. */
  | ChildUsageCommand
  /** Tenant or subject erasure: stop if running, content becomes `[erased]`; idempotent. */
  | { type: 'erase' }
  | { type: 'get' };

/** Every command answers with the objective as the actor knows it. */
export interface ObjectiveReply {
  objectiveId: string;
  info: ObjectiveInfoChange;
}

export interface ObjectiveBehaviorOptions {
  /** @default ajv with formats */
  validateOutput?: OutputValidator;
}

function replyOf(state: ObjectiveState): ObjectiveReply {
  return { objectiveId: state.objectiveId, info: objectiveInfoOf(state) };
}

function requireStarted(state: ObjectiveState): void {
  if (!state.config) throw NotFoundError.resource('objective', state.objectiveId);
}

function start(turn: ObjectiveTurn, config: ObjectiveStart): void {
  if (turn.state.config) throw new FailedPreconditionError(`objective ${turn.state.objectiveId} is already started`);
  // The first context window's id, drawn here and journaled: every event carries it (spec 6.4).
  turn.apply({ type: 'created', config, at: turn.now, contextWindowId: newId('contextWindow') });
  turn.project({
    type: 'objective_created', objectiveId: config.objectiveId, workspaceId: config.workspaceId, accountId: config.accountId, start: objectiveCreatedRowOf(config),
  });
  turn.record('USER_MESSAGE', { content: config.initialMessage });
  setStatus(turn, ObjectiveStatus.RUNNING);
  turn.observe(OBJECTIVE_STARTED);
  startModelCall(turn);
}

/** A follow-up: taken at the next model call while the objective runs; after COMPLETED it runs again. */
function followUp(turn: ObjectiveTurn, content: string): void {
  const { status } = turn.state;
  if (status === ObjectiveStatus.FAILED || status === ObjectiveStatus.CANCELLED) {
    throw new FailedPreconditionError(`objective ${turn.state.objectiveId} is ${status}: it takes no more messages`);
  }
  if (turn.state.erased) throw new FailedPreconditionError(`objective ${turn.state.objectiveId} is erased: it takes no more messages`);
  turn.record('USER_MESSAGE', { content });
  if (status === ObjectiveStatus.COMPLETED) {
    setStatus(turn, ObjectiveStatus.RUNNING);
    advance(turn);
  }
}

function cancel(turn: ObjectiveTurn, reason: string, fromParent: boolean): void {
  if (isTerminal(turn.state.status)) {
    // A parent's cascade crossing the child's own end is expected, not an error.
    if (fromParent) return;
    throw new FailedPreconditionError(`objective ${turn.state.objectiveId} is already ${turn.state.status}`);
  }
  cancelObjective(turn, reason);
}

/** Whether the state still waits for this effect's outcome (an interrupted one it no longer expects is dropped). */
function expectsEffect(state: ObjectiveState, effect: RunningEffect): boolean {
  switch (effect.name) {
    case MODEL_CALL_EFFECT:
      return effect.id === state.modelCallEffectId && !state.summarizing;
    case MODEL_SUMMARIZE_EFFECT:
      return effect.id === state.summarizing?.effectId;
    case PREPARE_CHILD_EFFECT:
      return expectsPrepareChild(state, effect.id);
    case TOOL_CALL_EFFECT:
    case SERVICE_TOOL_EFFECT:
      return state.turnCalls.some((call) => call.id === effect.id && call.state === 'running' && !call.child);
    default:
      return false;
  }
}

function asChatResponse(value: unknown): ChatResponse | null {
  if (typeof value !== 'object' || value === null) return null;
  const response = value as ChatResponse;
  if (response.toolCalls !== undefined && !Array.isArray(response.toolCalls)) return null;
  return response;
}

export function createObjectiveBehavior(
  options: ObjectiveBehaviorOptions = {},
): ActorBehavior<ObjectiveState, ObjectiveCommand, ObjectiveEvent, ObjectiveReply, ObjectiveChange> {
  const validateOutput = options.validateOutput ?? ajvOutputValidator;
  return {
    kind: OBJECTIVE_KIND,
    initialState: initialObjectiveState,
    evolve: evolveObjective,

    decide(state: ObjectiveState, command: ObjectiveCommand, context: ActorContext) {
      const turn = new ObjectiveTurn(state, context);
      if (command.type === 'start') {
        start(turn, command.start);
        return turn.decision(replyOf(turn.state));
      }
      requireStarted(state);
      switch (command.type) {
        case 'message':
          followUp(turn, command.content);
          break;
        case 'cancel':
          cancel(turn, command.reason ?? DEFAULT_CANCEL_REASON, command.fromParent === true);
          break;
        case 'approve':
          approveToolCall(turn, command.toolCallId);
          break;
        case 'deny':
          denyToolCall(turn, command.toolCallId, command.memo ?? '');
          break;
        case 'child_finished':
          acceptChildFinished(turn, command);
          break;
        case 'child_usage':
          acceptChildUsage(turn, command);
          break;
        case 'erase':
          eraseObjective(turn);
          break;
        case 'get':
          break;
      }
      return turn.decision(replyOf(turn.state));
    },

    onEffectResult(state: ObjectiveState, outcome: EffectOutcome, context: ActorContext) {
      const turn = new ObjectiveTurn(state, context);
      // A result after the objective ended (an abort that lost the race) changes nothing.
      if (!state.config || isTerminal(state.status)) return turn.decision();
      if (outcome.name === MODEL_CALL_EFFECT) {
        if (outcome.id !== state.modelCallEffectId) return turn.decision();
        const response = outcome.ok ? asChatResponse(outcome.value) : null;
        if (!outcome.ok) acceptModelCallFailure(turn, outcome.id, outcome.error);
        else if (!response) failObjective(turn, { message: 'the model call returned no chat response', type: 'INTERNAL' });
        else acceptModelResponse(turn, outcome.id, response, validateOutput);
      } else if (outcome.name === TOOL_CALL_EFFECT) {
        acceptToolOutcome(turn, outcome);
      } else if (outcome.name === SERVICE_TOOL_EFFECT) {
        if (acceptServiceToolOutcome(turn, outcome)) advance(turn);
      } else if (outcome.name === PREPARE_CHILD_EFFECT) {
        acceptPrepareOutcome(turn, outcome);
      } else if (outcome.name === MODEL_SUMMARIZE_EFFECT) {
        acceptSummary(turn, outcome);
      }
      return turn.decision();
    },

    /**
     * A model call's retry (objective-retries.ts), or the turn clock
     * (`turnTimeoutMs`): FAILED with TIMED_OUT when it fires for the stretch
     * of RUNNING that set it, a wait for a retry included.
     */
    onReminder(state: ObjectiveState, reminder: FiredReminder, context: ActorContext) {
      const turn = new ObjectiveTurn(state, context);
      if (reminder.name === MODEL_RETRY_REMINDER) {
        retryModelCall(turn, reminder);
        return turn.decision();
      }
      if (reminder.name !== TURN_DEADLINE_REMINDER) return turn.decision();
      const deadline = turnDeadlineOf(state);
      // Set for an earlier stretch (moved or cancelled since) or after the end: stale.
      if (!deadline || deadline.getTime() !== reminder.dueAt.getTime()) return turn.decision();
      const limit = state.config!.turnTimeoutMs!;
      failObjective(turn, { message: `the objective turn ran longer than its limit of ${limit} ms`, type: TURN_TIMED_OUT_ERROR_TYPE });
      return turn.decision();
    },

    /** The trace the objective was created in (its start keeps it); the start turn finds it in its `created` event. */
    traceparentOf(state: ObjectiveState, events: readonly ObjectiveEvent[]) {
      if (state.config) return state.config.traceparent;
      const created = events[0]?.type === 'created' ? events[0] : undefined;
      return created?.config.traceparent;
    },

    /**
     * A lost run is run again with the same id, input and deadline (a model
     * call's request rebuilt from the state). For a
     * model call that only costs tokens. For a tool call the same id is the
     * same Idempotency-Key, so a tool that honours it does not act twice when
     * the first run had already reached it; recording a failure instead would
     * tell the model a call failed that may well have succeeded, and it would
     * likely call again under a new id. A child's preparation runs again with
     * the same input, which holds the child's id, so there is at most one
     * child per call. An effect the state no longer expects (the objective
     * ended) is dropped.
     */
    onEffectInterrupted(state: ObjectiveState, effect: RunningEffect) {
      if (!expectsEffect(state, effect) || isTerminal(state.status)) return {};
      // A model call's request is not journaled: it is rebuilt from the state, which is as it was when the call started.
      if (effect.name === MODEL_CALL_EFFECT) return { effects: { start: [{ ...modelCallEffect(state, effect.id), timeoutMs: effect.timeoutMs }] } };
      // So is a summarization's: the conversation does not change while it runs.
      if (effect.name === MODEL_SUMMARIZE_EFFECT) return { effects: { start: [{ ...summarizeEffect(state, effect.id), timeoutMs: effect.timeoutMs }] } };
      return { effects: { start: [{ id: effect.id, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs, ...(effect.durableResult === false ? { durableResult: false } : {}) }] } };
    },
  };
}

export const objectiveBehavior = createObjectiveBehavior();

/** The streams kind `objective` publishes to; effects and projector are added where the runtime is composed. */
export const OBJECTIVE_STREAMS: StreamDeclaration[] = [OBJECTIVE_EVENTS_STREAM];

/** The ActorKind-shaped declaration without effect handlers or projector. */
export const objectiveKindDeclaration = { behavior: objectiveBehavior, streams: OBJECTIVE_STREAMS };
