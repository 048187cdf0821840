// How one public objective event leaves the actor (api-decisions.md
// "Webhooks" and "Objectives", interface-spec section 6): the webhook envelope
// `{timestamp, type, data: {agent, agentVariation, objective, objectiveEvent}}`,
// which is also the NATS payload on subject
// `objective_events.<accountId>.<workspaceId>.<agentId>.<objectiveId>.<kind>`
// of stream OBJECTIVE_EVENTS, and the read-model changes a projector writes to
// the objectives and objective_events tables.
import type { OutgoingEvent, StreamDeclaration } from '../ports/actor-behavior';
import type { OperationMetadata } from '../schemas/common.schema';
import { traceIdOf } from '../tracing/trace-context';
import type { UsageDelta } from '../usage/usage-rollup';
import {
  type ObjectiveError, type ObjectiveEventRecord, type ObjectiveEventType, type ObjectiveSpec, type ObjectiveStart, type ObjectiveState,
  type ObjectiveStatus, type ObjectiveUsage,
} from './objective-state';

export const OBJECTIVE_EVENTS_STREAM: StreamDeclaration = { name: 'OBJECTIVE_EVENTS', subjects: ['objective_events.>'] };

/** The kind's name in subjects and webhook types: TOOL_RESULT → tool_result. */
export function kindNameOf(type: ObjectiveEventType): string {
  return type.toLowerCase();
}

/** The webhook `type` (objective_event.tool_result); cancelled and finalized as api-decisions.md names them. */
export function webhookTypeOf(type: ObjectiveEventType): string {
  return `objective_event.${kindNameOf(type)}`;
}

export function objectiveEventSubject(config: ObjectiveStart, type: ObjectiveEventType): string {
  return `objective_events.${config.accountId}.${config.workspaceId}.${config.agentId}.${config.objectiveId}.${kindNameOf(type)}`;
}

/** Where an objective's events are published: the tokens of its subjects. */
export interface ObjectiveEventsAddress {
  accountId: string;
  workspaceId: string;
  agentId: string;
  objectiveId: string;
}

/** The subject filter that takes every event of one objective (a purge by subject). */
export function objectiveEventsFilter(address: ObjectiveEventsAddress): string {
  return `objective_events.${address.accountId}.${address.workspaceId}.${address.agentId}.${address.objectiveId}.>`;
}

/** The subject pattern taking every event of one objective whatever its account, workspace and agent (the live feed's commit nudges). */
export function objectiveEventsOfIdPattern(objectiveId: string): string {
  return `objective_events.*.*.*.${objectiveId}.*`;
}

/**
 * The `objectiveEvent` of an envelope: OperationMetadata, data `{type, <key>}`, `contextWindowId` (6.4),
 * `traceId` (the objective's trace, when it was created with tracing on), info, and the top-level `sequence`.
 */
export function objectiveEventBody(objective: OperationMetadata, record: ObjectiveEventRecord, traceId = record.traceId): Record<string, unknown> {
  return {
    metadata: {
      id: record.id,
      accountId: objective.accountId,
      workspaceId: objective.workspaceId,
      profileId: objective.profileId,
      createdAt: record.createdAt,
    },
    sequence: record.sequence,
    data: { type: `OBJECTIVE_EVENT_TYPE_${record.type}`, ...record.data },
    ...(record.contextWindowId ? { contextWindowId: record.contextWindowId } : {}),
    ...(traceId ? { traceId } : {}),
    info: { objective },
  };
}

export function webhookEnvelope(config: ObjectiveStart, record: ObjectiveEventRecord): Record<string, unknown> {
  return {
    timestamp: record.createdAt,
    type: webhookTypeOf(record.type),
    data: {
      agent: config.metadata.agent,
      agentVariation: config.metadata.agentVariation,
      objective: config.metadata.objective,
      objectiveEvent: objectiveEventBody(config.metadata.objective, record, traceIdOf(config.traceparent)),
    },
  };
}

export function outgoingObjectiveEvent(config: ObjectiveStart, record: ObjectiveEventRecord, envelope = webhookEnvelope(config, record)): OutgoingEvent {
  return {
    id: record.id,
    type: webhookTypeOf(record.type),
    subject: objectiveEventSubject(config, record.type),
    data: record.data,
    payload: envelope,
    // The objective_events row of the same turn (its `objective_event` change) keeps the envelope: the outbox row need not.
    payloadProjected: true,
  };
}

/** The objective row's `info` as the actor knows it. */
export interface ObjectiveInfoChange {
  status: ObjectiveStatus;
  createdAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  output: unknown;
  lastMessage: string | null;
  error: ObjectiveError | null;
  usage: ObjectiveUsage;
  toolCallCount: number;
  subObjectiveCount: number;
  pendingToolCallIds: string[];
  /** The last event's sequence, so a projector can skip a stale row write. */
  sequence: number;
}

/** What the objectives row holds besides `info`: the start without the resolved tools and prompt. */
export interface ObjectiveCreatedRow {
  metadata: OperationMetadata;
  spec: ObjectiveSpec;
  startKey: string | null;
  /** The widget session that created it (absent for every other objective). */
  widgetSessionId?: string;
}

export function objectiveCreatedRowOf(config: ObjectiveStart): ObjectiveCreatedRow {
  return {
    metadata: config.metadata.objective, spec: config.spec, startKey: config.startKey ?? null,
    // A session's sub-objective carries the session (its tools read its secrets) but is not the session's own:
    // the visitor sees only the objectives the session created.
    ...(config.widgetSessionId && !config.spec.parentObjectiveId ? { widgetSessionId: config.widgetSessionId } : {}),
  };
}

/** Read-model changes of kind `objective`: the objective row, and one objective_events row per public event. */
export type ObjectiveChange =
  /** The row's first write (in the `start` turn): metadata and spec, which never change after. */
  | { type: 'objective_created'; objectiveId: string; workspaceId: string; accountId: string; start: ObjectiveCreatedRow }
  | { type: 'objective'; objectiveId: string; workspaceId: string; info: ObjectiveInfoChange }
  /**
   * Tenant or subject erasure: the row's content (`spec.data`,
   * `spec.initialMessage`, `info.output`, `info.lastMessage`) and every event
   * row's content become `[erased]` (ERASED), metadata stays. Written after the
   * turn's own event rows, so they are erased too; the `objective` change that
   * follows carries the erased info.
   */
  | { type: 'objective_erased'; objectiveId: string; workspaceId: string }
  /**
   * What the turn adds to the workspace's usage roll-ups (src/usage): the
   * usage of the objective's own model calls in this turn, and the objective
   * itself in the turn that created it. Written by the same statement as the
   * row, before the turn's `objective` change.
   */
  | { type: 'objective_usage'; objectiveId: string; workspaceId: string; delta: UsageDelta }
  | {
    type: 'objective_event';
    objectiveId: string;
    workspaceId: string;
    record: ObjectiveEventRecord;
    /** The webhook type and envelope, so webhook deliveries can be queued from the row. */
    webhookType: string;
    envelope: Record<string, unknown>;
  };

export function objectiveInfoOf(state: ObjectiveState): ObjectiveInfoChange {
  return {
    status: state.status ?? 'OBJECTIVE_STATUS_PENDING',
    createdAt: state.createdAt,
    startedAt: state.startedAt,
    finishedAt: state.finishedAt,
    output: state.output,
    lastMessage: state.lastMessage,
    error: state.error,
    usage: state.usage,
    toolCallCount: state.toolCallCount,
    subObjectiveCount: state.subObjectiveCount,
    pendingToolCallIds: state.turnCalls.filter((call) => call.state === 'awaiting_approval').map((call) => call.id),
    sequence: state.sequence,
  };
}
