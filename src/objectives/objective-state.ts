// The objective actor's state, its journal events and the pure fold between
// them (issue 9 item 2). Journal events are of two sorts: `recorded` carries
// one public objective event (the thing webhooks, NATS and the events API
// show, numbered by a gapless per-objective `sequence`), the others are the
// actor's own bookkeeping (a model call started, the calls of a turn, a status
// change). Everything here is JSON, so it survives replay and snapshots.
import type { OperationMetadata, ResourceMetadata } from '../schemas/common.schema';
import { tokensForCharacters } from '../models/model-usage';
import type { ObjectiveDiscovery, ObjectiveMemory } from '../ports/service-tools';
import type { ExecutableTool } from '../tools/tool-call-outcome';
import type { ChatMessage, ChatToolCall, ChatUsage } from './chat-model-types';
import type { SpendingBudget } from './objective-budgets';

/** The actor kind of objectives (one actor per objective, id = the objective id). */
export const OBJECTIVE_KIND = 'objective';

export const ObjectiveStatus = {
  PENDING: 'OBJECTIVE_STATUS_PENDING',
  RUNNING: 'OBJECTIVE_STATUS_RUNNING',
  AWAITING_APPROVAL: 'OBJECTIVE_STATUS_AWAITING_APPROVAL',
  COMPLETED: 'OBJECTIVE_STATUS_COMPLETED',
  FAILED: 'OBJECTIVE_STATUS_FAILED',
  CANCELLED: 'OBJECTIVE_STATUS_CANCELLED',
} as const;
export type ObjectiveStatus = (typeof ObjectiveStatus)[keyof typeof ObjectiveStatus];

/** Statuses after which nothing runs; a follow-up message restarts only a COMPLETED objective. */
export function isTerminal(status: ObjectiveStatus | null): boolean {
  return status === ObjectiveStatus.COMPLETED || status === ObjectiveStatus.FAILED || status === ObjectiveStatus.CANCELLED;
}

/** A tool the objective offers the model, resolved by the API layer at creation. */
export interface ObjectiveTool {
  /** The name the model sees (modelToolName of the tool's metadata.name). */
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  /** The variation assignment's `requiresApproval` when it sets one, else the tool's own. */
  requiresApproval: boolean;
  /** The `tool.call` effect's deadline (effectTimeoutMsFor the tool); unused for a sub-agent. */
  effectTimeoutMs: number;
  /** What the `tool.call` effect executes: present for HTTP and MCP tools, absent for a sub-agent. */
  executable?: ExecutableTool;
  /**
   * Set when the tool is an assigned sub-agent: a call creates a child
   * objective of `agentId`. `promptOnly`: the agent has no inputDataSchema, so
   * the tool takes `{prompt: string}` and the prompt is the child's first message.
   */
  subAgent?: { agentId: string; promptOnly: boolean };
  /** The tool's (or sub-agent's) ResourceMetadata, shown as `toolCalls[].tool.tool` (`.agent`) in assistant-message events. */
  metadata?: ResourceMetadata;
}

/** The objective's `spec` as the API shows it (api-decisions.md "Objectives"); ids of tenant, subject, parent, schedule or null. */
export interface ObjectiveSpec {
  agentId: string;
  variationId: string;
  data: unknown;
  /** As the client sent it (null when the first message was rendered from `data`). */
  initialMessage: string | null;
  episodicKey: string | null;
  memoryLayerIds: string[];
  tenantId: string | null;
  subjectId: string | null;
  parentObjectiveId: string | null;
  scheduleId: string | null;
  /** The nominal fire time of the schedule that created it (with scheduleId, unique). */
  scheduleFireTime?: string | null;
}

/** Everything the actor needs, resolved by the API layer when the objective is created. */
export interface ObjectiveStart {
  accountId: string;
  workspaceId: string;
  agentId: string;
  objectiveId: string;
  variationId: string;
  /** The metadata every webhook envelope carries (`data.agent`, `data.agentVariation`, `data.objective`). */
  metadata: { objective: OperationMetadata; agent: ResourceMetadata; agentVariation: ResourceMetadata };
  /** The selected variation's system prompt. */
  systemPrompt: string | null;
  /** `family/model`. */
  modelId: string;
  temperature?: number;
  tools: ObjectiveTool[];
  /**
   * maxToolCalls, maxSubObjectives: 0 means no limit. maxDepth: the deepest a
   * sub-objective may sit (a top-level objective is depth 0; 0 allows no
   * sub-agent calls). @default maxDepth DEFAULT_MAX_OBJECTIVE_DEPTH
   */
  limits: {
    maxToolCalls: number;
    maxSubObjectives: number;
    maxDepth?: number;
    /** Model turns per run (objective-budgets.ts); 0: no limit. @default DEFAULT_MAX_MODEL_TURNS */
    maxModelTurns?: number;
    /**
     * Prompt + completion tokens over the objective and its sub-objectives; 0: no limit. Set on every start
     * (the variation's, else the node's default); absent only in objectives started before the default existed,
     * which keep running without one.
     */
    maxTokens?: number;
    /** Cents over the objective and its sub-objectives; 0 or absent: no limit. */
    maxCostCents?: number;
    /**
     * A sub-objective's share of its parent's free budget, given when the parent started it
     * (objective-budgets.ts childShareOf): its limit is the lower of this and its own.
     */
    parentShare?: SpendingBudget;
    /**
     * A budget the variation set (maxTokens, maxCostCents), or a share of one from the parent: the
     * objective runs its sub-agent calls one at a time (objective-budgets.ts waitsForSubAgent), so it
     * and its sub-objectives pass the budget by less than one model call. Absent under the node's
     * default token cap alone: sub-agent calls then run side by side.
     */
    sequentialSubAgents?: true;
    /** How long consecutive retryable model call failures are retried (objective-retries.ts). @default DEFAULT_MODEL_RETRY_BUDGET_MS */
    modelRetryBudgetMs?: number;
    /**
     * Test nodes (AGENTRT_MODEL_RETRY_TIME_SCALE): the retries' waits and budget run at this fraction of real
     * time, so a test sees a 45 s Retry-After honoured in 0.45 s. @default 1
     */
    modelRetryTimeScale?: number;
  };
  /** The first user message: `initialMessage`, else `data` rendered as JSON. */
  initialMessage: string;
  /** The agent's outputDefinition: when set, `emit_output` is offered and its valid arguments are the output. */
  outputDefinition: Record<string, unknown> | null;
  /** Deadline of one model call. @default DEFAULT_MODEL_CALL_TIMEOUT_MS */
  modelCallTimeoutMs?: number;
  /**
   * Wall-clock limit of one objective turn: a stretch of status RUNNING (from
   * the message or approval that set it running to the next wait for approval
   * or the end), past which the objective fails with an ERROR of type
   * TIMED_OUT. Absent or 0: no limit.
   */
  turnTimeoutMs?: number;
  /** The objective's spec, projected into the objectives row at creation. */
  spec: ObjectiveSpec;
  /**
   * The creating request's `Idempotency-Key` (scoped by the API layer), kept on
   * the row so a retry after a crash finds the objective instead of starting a second.
   */
  startKey?: string | null;
  /**
   * The widget session (`wsess_…`) that created it (the widget host): its tool calls resolve
   * `{{secrets.NAME}}` from the session's secrets first. Only the id: the values are read by the effect.
   */
  widgetSessionId?: string | null;
  /** 0 for an objective started by the API or a schedule; a child is its parent's depth + 1. */
  depth?: number;
  /** A child objective's tool call in its parent (with `spec.parentObjectiveId`): where it reports when it ends. */
  parentToolCallId?: string | null;
  /** Tell the schedule of `spec.scheduleId` when it ends (its SKIP overlap policy counts what runs). */
  reportsToSchedule?: boolean;
  /** The memory stack, skills manifest and episodic settings; absent: no memory (objectives started before it existed too). */
  memory?: ObjectiveMemory;
  /** Set when the variation allows tool discovery: `search_tools` is offered. */
  discovery?: ObjectiveDiscovery;
  /** How the context is kept under the model's window (objective-compaction.ts); absent: never compacted (objectives started before it existed). */
  compaction?: ObjectiveCompaction;
  /**
   * The W3C traceparent of the span that created the objective (the HTTP
   * request, the schedule's fire, the parent's sub-objective span), when
   * tracing was on: its turns, model and tool calls, sub-objectives and event
   * deliveries continue that trace, and its events show its trace id. An input
   * like the rest of the start (journaled with it), so a replay finds the same.
   */
  traceparent?: string;
}

/** The variation's compactionConfig with the model's context window, resolved at creation. */
export interface ObjectiveCompaction {
  /** The model row's `maxInputTokens`. */
  maxInputTokens: number;
  /** Fraction of maxInputTokens above which the prompt is compacted before a model call. */
  triggerThreshold: number;
  /** Tool results kept intact by tool result clearing (the newest ones). */
  preserveRecentResults: number;
  /** Replaces the default summarization prompt. */
  summarizationInstructions?: string;
}

export const ObjectiveEventType = {
  USER_MESSAGE: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE',
  ASSISTANT_MESSAGE: 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE',
  TOOL_CALLED: 'OBJECTIVE_EVENT_TYPE_TOOL_CALLED',
  TOOL_RESULT: 'OBJECTIVE_EVENT_TYPE_TOOL_RESULT',
  TOOL_ERROR: 'OBJECTIVE_EVENT_TYPE_TOOL_ERROR',
  TOOL_APPROVAL_REQUESTED: 'OBJECTIVE_EVENT_TYPE_TOOL_APPROVAL_REQUESTED',
  TOOL_APPROVED: 'OBJECTIVE_EVENT_TYPE_TOOL_APPROVED',
  TOOL_DENIED: 'OBJECTIVE_EVENT_TYPE_TOOL_DENIED',
  ERROR: 'OBJECTIVE_EVENT_TYPE_ERROR',
  CANCELLED: 'OBJECTIVE_EVENT_TYPE_CANCELLED',
  SUB_OBJECTIVE_CREATED: 'OBJECTIVE_EVENT_TYPE_SUB_OBJECTIVE_CREATED',
  SUB_AGENT_SPAWNED: 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_SPAWNED',
  SUB_AGENT_UPDATED: 'OBJECTIVE_EVENT_TYPE_SUB_AGENT_UPDATED',
  FINALIZED: 'OBJECTIVE_EVENT_TYPE_FINALIZED',
  MEMORY_READ: 'OBJECTIVE_EVENT_TYPE_MEMORY_READ',
  CONTEXT_WINDOW_COMPACTED: 'OBJECTIVE_EVENT_TYPE_CONTEXT_WINDOW_COMPACTED',
} as const;
export type ObjectiveEventType = keyof typeof ObjectiveEventType;

/** One public objective event: a row of objective_events and the `objectiveEvent` of a webhook. */
export interface ObjectiveEventRecord {
  /** `objevt_…`: the webhook's event id and the NATS message id. */
  id: string;
  objectiveId: string;
  /** 1, 2, 3 … per objective, no gaps. */
  sequence: number;
  type: ObjectiveEventType;
  createdAt: string;
  /** The kind's fields, under the kind's camelCase key in `objectiveEvent.data`. */
  data: Record<string, unknown>;
  /** The context window the event was recorded in (`ctxwin_…`); absent in objectives started before windows existed. */
  contextWindowId?: string;
  /**
   * The objective's trace id, as a read of the stored event gives it back (its envelope keeps it). The
   * journal's records leave it out: it is the objective's (ObjectiveStart.traceparent), not each event's.
   */
  traceId?: string;
}

export interface ObjectiveUsage {
  promptTokens: number;
  completionTokens: number;
  costCents: number;
}

export interface ObjectiveError {
  message: string;
  type: string;
}

/** The model call failures since the last answer, while they are retried (objective-retries.ts). */
export interface ModelCallRetries {
  /** Consecutive failures of the current model turn. */
  failures: number;
  /** When the first of them was seen: the retry budget counts from here. */
  firstFailedAt: string;
  /** When the next attempt starts; null while an attempt runs. */
  dueAt: string | null;
}

/**
 * Where one tool call of the current model turn stands. `queued`: a sub-agent call accepted while
 * another sub-agent call of the turn runs, under a budget that runs them one at a time
 * (ObjectiveStart.limits.sequentialSubAgents); it runs once those before it have ended.
 */
export type ToolCallState = 'awaiting_approval' | 'approved' | 'queued' | 'running' | 'done' | 'not_run';

/** The child objective of a sub-agent call: its id from the moment the call runs, its metadata once it was started. */
export interface ChildObjectiveRef {
  objectiveId: string;
  /** False while the `objective.prepare_child` effect resolves it; true once its `start` was sent. */
  started: boolean;
  metadata: OperationMetadata | null;
  /** The share of this objective's budget the child started with: held until it reports. */
  share?: SpendingBudget;
}

export interface TurnToolCall {
  /**
   * The service's id for the call (`toolcall_…`, unique across the service; the Idempotency-Key the tool
   * gets). Journals written before hold the model's id here when it was new to the objective.
   */
  id: string;
  /** The model's id for the call, when it differs from `id`: the conversation sent back to the model uses it. */
  providerId?: string;
  name: string;
  arguments: string;
  state: ToolCallState;
  /** What goes back to the model as this call's tool message, once known. */
  result: string | null;
  /** A sub-agent call's child objective (a `running` call with a child waits for it to report). */
  child?: ChildObjectiveRef;
}

export interface ObjectiveState {
  objectiveId: string;
  /** Null until `start`. */
  config: ObjectiveStart | null;
  status: ObjectiveStatus | null;
  /** The last public event's sequence. */
  sequence: number;
  /** The conversation sent to the model after the system prompt. */
  conversation: ChatMessage[];
  /** User messages received but not yet sent to the model (taken at the next model call). */
  pendingUserMessages: string[];
  /** Model calls started so far; the next call's effect id is derived from it. */
  modelTurn: number;
  /** The running `model.call` effect, if any. */
  modelCallEffectId: string | null;
  /** The tool calls of the latest model turn, in the model's order. */
  turnCalls: TurnToolCall[];
  /** Set from a retryable model call failure until the model answers again; with `dueAt` the objective waits for the retry. */
  modelRetries?: ModelCallRetries | null;
  /** Model answers in the current run (since it last started RUNNING from a start or a final state): maxModelTurns counts them. */
  runModelTurns?: number;
  /** Descendants whose report (and usage) was taken, so a report after the call stopped waiting is counted once. */
  reportedChildIds?: string[];
  /** Tools found by `search_tools`, offered after the configured ones from the next model call. */
  discoveredTools?: ObjectiveTool[];
  /** Every tool call id the objective gave out, so an unknown id is NOT_FOUND and an old one FAILED_PRECONDITION. */
  knownToolCallIds: string[];
  toolCallCount: number;
  subObjectiveCount: number;
  usage: ObjectiveUsage;
  output: unknown;
  /** Set when a valid `emit_output` arrived in the current model turn; the run completes once the turn settles and no message waits. */
  outputEmitted: boolean;
  lastMessage: string | null;
  error: ObjectiveError | null;
  createdAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the current stretch of RUNNING began (the turn clock of `turnTimeoutMs`); null when not RUNNING. */
  runStartedAt: string | null;
  /** Every child objective started, in order (an erasure reaches them all). */
  childObjectiveIds: string[];
  /** A child objective reports to its parent only the first time it ends. */
  reportedToParent: boolean;
  /** Its content was replaced by `[erased]`: it takes no more messages. */
  erased: boolean;
  /** The current context window: its id (on every event) and its number (1, 2 …); absent in older journals. */
  contextWindow?: { id: string; sequence: number };
  /**
   * The prompt tokens the provider reported for the last model call and how many conversation messages
   * that call sent: the next estimate adds what came since. Null when unknown (no usage reported, or the
   * conversation changed under it by a compaction): the next estimate counts the whole request.
   */
  promptBase?: { tokens: number; messages: number } | null;
  /** A summarization running before the model call `modelCallEffectId` (which starts when it ends). */
  summarizing?: PendingSummarization | null;
  /** The model refused the context as too long and it was compacted for one retry; an answer clears it. */
  contextRetried?: boolean;
}

/** A `model.summarize` effect running, and what the compaction did before it (for its event). */
export interface PendingSummarization {
  effectId: string;
  /** Tool results cleared before it (step 1). */
  cleared: number;
  /** Forced by the provider's context-length error. */
  forced: boolean;
  /** The tool messages in [clearedFrom, clearedBefore) are those step 1 cleared (absent: none). */
  clearedFrom?: number;
  clearedBefore?: number;
}

/**
 * What an ASSISTANT_MESSAGE's journal event adds to its record for the
 * conversation: the model's call ids (`toolCallIds`, the record's toolCalls
 * give name and arguments) and `content: null` when the model sent none (the
 * record shows ''). Journals written before hold the message whole
 * (`content`, `toolCalls`).
 */
export interface RecordedAssistant {
  content?: string | null;
  toolCalls?: ChatToolCall[];
  toolCallIds?: string[];
}

/** What the model is told for a call of the turn that never produced a result. */
export function placeholderResult(call: TurnToolCall): string {
  return call.state === 'not_run' ? '[cancelled]' : '[no result]';
}

/** The journal events of kind `objective`. */
export type ObjectiveEvent =
  /** `contextWindowId`: the first context window's id (absent in journals written before windows existed). */
  | { type: 'created'; config: ObjectiveStart; at: string; contextWindowId?: string }
  | { type: 'status_changed'; status: ObjectiveStatus; at: string }
  /**
   * A public event. `modelResult`: the tool message content a TOOL_RESULT/TOOL_ERROR/TOOL_DENIED gives the model
   * (absent for a TOOL_RESULT: its content); `assistant`: what the conversation needs of an ASSISTANT_MESSAGE
   * beyond the record (RecordedAssistant).
   */
  | { type: 'recorded'; record: ObjectiveEventRecord; modelResult?: string; assistant?: RecordedAssistant }
  /**
   * A model call started: the open turn's results (placeholders included) and the waiting user messages join
   * the conversation first. `toolResults`: in journals written before the results were taken from the turn's calls.
   */
  | { type: 'model_call_started'; effectId: string; toolResults?: Array<{ toolCallId: string; content: string }>; userMessages: number }
  | { type: 'model_call_ended'; effectId: string }
  /** The running model call failed with a retryable error: the attempt ends and the objective waits until `retries.dueAt`. */
  | { type: 'model_retry_scheduled'; effectId: string; retries: ModelCallRetries }
  /** A model call's failure reported usage (the provider charged for it): it joins the objective's. */
  | { type: 'usage_added'; usage: ObjectiveUsage }
  /**
   * Usage of a descendant that reported after the call stopped waiting for
   * it (this objective ended, say): `sourceObjectiveId` is the descendant that
   * reported, counted once.
   */
  | { type: 'late_usage_added'; sourceObjectiveId: string; usage: ObjectiveUsage }
  /**
   * The assistant's tool calls of this turn (not run yet); `counted` ones count against maxToolCalls.
   * `id` is the service's id for the call (in journals written before, the model's id when new to the
   * objective, else with a suffix and the model's id as `providerId`); the model's id, name and arguments
   * are the last assistant message's (name and arguments present in journals written before).
   */
  | { type: 'tool_calls_received'; calls: Array<{ id: string; providerId?: string; name?: string; arguments?: string; counted: boolean }> }
  | { type: 'output_emitted'; output: unknown }
  /**
   * `search_tools` found tools the objective did not offer yet: they join its tool list (names made unique when
   * found); `dropOldest` earliest found ones leave it to keep a request within MAX_OFFERED_TOOLS.
   */
  | { type: 'tools_discovered'; tools: ObjectiveTool[]; dropOldest?: number }
  | { type: 'error_set'; error: ObjectiveError }
  /** A sub-agent call runs: its child's id, drawn once here so a replay or a re-run of the prepare effect keeps it. */
  | { type: 'child_assigned'; toolCallId: string; childObjectiveId: string }
  /** A sub-agent call waits for the one running before it (limits.sequentialSubAgents). */
  | { type: 'sub_agent_call_queued'; toolCallId: string }
  /**
   * The child's `start` was sent (in the same turn): it counts against maxSubObjectives. `share`: the part of
   * this objective's budget it was given (absent when none, and in journals written before shares existed).
   */
  | { type: 'child_started'; toolCallId: string; metadata: OperationMetadata; share?: SpendingBudget }
  /**
   * The child reported its end: its usage joins this objective's (the TOOL_RESULT/TOOL_ERROR that follows settles the call).
   * `childObjectiveId` marks the child reported, so a late second report adds nothing (absent in older journals).
   */
  | { type: 'child_finished'; toolCallId: string; usage: ObjectiveUsage; childObjectiveId?: string }
  /** This objective, a child, reported its end to its parent (it never reports again). */
  | { type: 'reported_to_parent' }
  /** Tenant or subject erasure: every piece of content in the state becomes `[erased]`. */
  | { type: 'erased'; at: string }
  /** Compaction step 1: tool messages before conversation index `before` get `[result cleared]` as their content. */
  | { type: 'tool_results_cleared'; before: number }
  /** Compaction step 2 started: the `model.summarize` effect `effectId` runs before the model call. */
  | { type: 'summarization_started'; effectId: string; cleared: number; forced: boolean; clearedFrom?: number; clearedBefore?: number }
  /**
   * A new context window: its conversation is `firstMessage` as a user message (the summary), else the old
   * window's first message when `keepFirst`, then the old conversation from index `keepFrom` on (the tail).
   */
  | { type: 'context_window_opened'; contextWindowId: string; sequence: number; firstMessage?: string; keepFirst?: boolean; keepFrom: number }
  /** The summarization ended without a new window (it failed and there was nothing to drop). */
  | { type: 'summarization_ended' }
  /** The provider refused the context as too long: the model call is retried once after a forced compaction. */
  | { type: 'context_retry_started' };

export function initialObjectiveState(objectiveId: string): ObjectiveState {
  return {
    objectiveId,
    config: null,
    status: null,
    sequence: 0,
    conversation: [],
    pendingUserMessages: [],
    modelTurn: 0,
    modelCallEffectId: null,
    modelRetries: null,
    runModelTurns: 0,
    reportedChildIds: [],
    turnCalls: [],
    knownToolCallIds: [],
    toolCallCount: 0,
    subObjectiveCount: 0,
    usage: { promptTokens: 0, completionTokens: 0, costCents: 0 },
    output: null,
    outputEmitted: false,
    lastMessage: null,
    error: null,
    createdAt: null,
    startedAt: null,
    finishedAt: null,
    runStartedAt: null,
    childObjectiveIds: [],
    reportedToParent: false,
    erased: false,
  };
}

/** The state with one call changed (and the sequence of the record that changed it, if any). */
function updateCall(state: ObjectiveState, toolCallId: string, change: Partial<TurnToolCall>, sequence = state.sequence): ObjectiveState {
  return { ...state, sequence, turnCalls: state.turnCalls.map((call) => (call.id === toolCallId ? { ...call, ...change } : call)) };
}

export function addUsage(total: ObjectiveUsage, usage: ChatUsage | ObjectiveUsage | undefined): ObjectiveUsage {
  if (!usage) return total;
  return {
    promptTokens: total.promptTokens + usage.promptTokens,
    completionTokens: total.completionTokens + usage.completionTokens,
    costCents: total.costCents + usage.costCents,
  };
}

/**
 * The usage of the objective's own model calls an event adds: a model answer
 * (ASSISTANT_MESSAGE), a failed call or a summarization the provider reported
 * usage for (`usage_added`). Never a descendant's (`child_finished`,
 * `late_usage_added`): each objective's own calls are counted once, under it
 * (the usage roll-ups, src/usage).
 */
export function ownUsageOf(event: ObjectiveEvent): ObjectiveUsage | undefined {
  if (event.type === 'usage_added') return event.usage;
  if (event.type === 'recorded' && event.record.type === 'ASSISTANT_MESSAGE') {
    return (event.record.data.assistantMessage as { usage?: ChatUsage } | undefined)?.usage;
  }
  return undefined;
}

/**
 * The state after a recorded event: one copy of the state per event (the
 * fold runs for every event of every turn, and the state has many fields).
 */
function evolveRecord(state: ObjectiveState, event: Extract<ObjectiveEvent, { type: 'recorded' }>): ObjectiveState {
  const { record, modelResult } = event;
  const sequence = record.sequence;
  const toolCallId = () => (record.data[dataKeyOf(record.type)] as { toolCallId?: string } | undefined)?.toolCallId ?? '';
  switch (record.type) {
    case 'USER_MESSAGE': {
      const { content } = record.data.userMessage as { content: string };
      return { ...state, sequence, pendingUserMessages: [...state.pendingUserMessages, content] };
    }
    case 'ASSISTANT_MESSAGE': {
      const shown = record.data.assistantMessage as { content?: string; toolCalls?: Array<{ functionName: string; arguments: string }>; usage?: ChatUsage };
      const { usage } = shown;
      const assistant = event.assistant ?? {};
      const content = assistant.content !== undefined ? assistant.content : shown.content ?? null;
      const calls = assistant.toolCalls
        ?? (shown.toolCalls ?? []).map((call, index): ChatToolCall => ({ id: assistant.toolCallIds?.[index] ?? '', name: call.functionName, arguments: call.arguments }));
      return {
        ...state,
        sequence,
        conversation: [...state.conversation, { role: 'assistant', content, ...(calls.length ? { toolCalls: calls } : {}) }],
        usage: addUsage(state.usage, usage),
        lastMessage: content || state.lastMessage,
        // An answer ends a run of failures: the next failure starts a new retry budget.
        modelRetries: null,
        // The reported prompt of this call, which sent the whole conversation so far: the next estimate adds to it.
        promptBase: usage && usage.promptTokens > 0 ? { tokens: usage.promptTokens, messages: state.conversation.length } : null,
        contextRetried: false,
        runModelTurns: (state.runModelTurns ?? 0) + 1,
      };
    }
    case 'TOOL_APPROVAL_REQUESTED':
      return updateCall(state, toolCallId(), { state: 'awaiting_approval' }, sequence);
    case 'TOOL_APPROVED':
      return updateCall(state, toolCallId(), { state: 'approved' }, sequence);
    case 'TOOL_CALLED':
      return updateCall(state, toolCallId(), { state: 'running' }, sequence);
    case 'TOOL_RESULT': {
      const { content } = record.data.toolResult as { content?: string };
      return updateCall(state, toolCallId(), { state: 'done', result: modelResult ?? content ?? '' }, sequence);
    }
    case 'TOOL_ERROR':
    case 'TOOL_DENIED':
      return updateCall(state, toolCallId(), { state: 'done', result: modelResult ?? '' }, sequence);
    default:
      return { ...state, sequence };
  }
}

/** The tool calls of the conversation's last assistant message (the turn whose calls are being received). */
function lastAssistantCalls(state: ObjectiveState): ChatToolCall[] {
  const last = state.conversation[state.conversation.length - 1];
  return last?.role === 'assistant' ? last.toolCalls ?? [] : [];
}

/** The camelCase key a kind's fields sit under in `objectiveEvent.data` (USER_MESSAGE → userMessage). */
export function dataKeyOf(type: ObjectiveEventType): string {
  let key = DATA_KEYS.get(type);
  if (key === undefined) {
    key = type.toLowerCase().replace(/_([a-z])/gu, (_, letter: string) => letter.toUpperCase());
    DATA_KEYS.set(type, key);
  }
  return key;
}

/** dataKeyOf's answers, one per event type (it runs for every event). */
const DATA_KEYS = new Map<ObjectiveEventType, string>();

/** The pure fold of one journal event. */
export function evolveObjective(state: ObjectiveState, event: ObjectiveEvent): ObjectiveState {
  switch (event.type) {
    case 'created':
      return {
        ...state, config: event.config, status: ObjectiveStatus.PENDING, createdAt: event.at,
        ...(event.contextWindowId ? { contextWindow: { id: event.contextWindowId, sequence: 1 } } : {}),
      };
    case 'status_changed': {
      const finished = isTerminal(event.status);
      const running = event.status === ObjectiveStatus.RUNNING;
      return {
        ...state,
        status: event.status,
        runStartedAt: running ? (state.status === ObjectiveStatus.RUNNING ? state.runStartedAt : event.at) : null,
        startedAt: state.startedAt ?? (event.status === ObjectiveStatus.RUNNING ? event.at : null),
        finishedAt: finished ? event.at : null,
        // A run after COMPLETED (follow-up message) starts without the previous run's output flag.
        outputEmitted: event.status === ObjectiveStatus.RUNNING && isTerminal(state.status) ? false : state.outputEmitted,
        // A run started from a final state (a follow-up) counts its model turns afresh.
        runModelTurns: running && (state.status === null || isTerminal(state.status)) ? 0 : state.runModelTurns ?? 0,
        // A wait for a retry ends with the objective (its reminder is cancelled or found stale).
        modelRetries: finished ? null : state.modelRetries ?? null,
        // Calls waiting or running when the objective ends will never run or report (running ones are aborted).
        turnCalls: finished
          ? state.turnCalls.map((call) => (call.state === 'done' ? call : { ...call, state: 'not_run' }))
          : state.turnCalls,
      };
    }
    case 'recorded':
      return evolveRecord(state, event);
    case 'model_call_started': {
      const results = event.toolResults ?? state.turnCalls.map((call) => ({ toolCallId: call.providerId ?? call.id, content: call.result ?? placeholderResult(call) }));
      const toolMessages: ChatMessage[] = results.map((result) => ({ role: 'tool', toolCallId: result.toolCallId, content: result.content }));
      const userMessages: ChatMessage[] = state.pendingUserMessages.slice(0, event.userMessages).map((content) => ({ role: 'user', content }));
      return {
        ...state,
        conversation: [...state.conversation, ...toolMessages, ...userMessages],
        pendingUserMessages: state.pendingUserMessages.slice(event.userMessages),
        turnCalls: [],
        modelTurn: state.modelTurn + 1,
        modelCallEffectId: event.effectId,
        modelRetries: state.modelRetries ? { ...state.modelRetries, dueAt: null } : null,
        // A model call after a valid output (to answer a message that came meanwhile) starts the run's turn afresh.
        outputEmitted: false,
      };
    }
    case 'model_call_ended':
      if (state.modelCallEffectId !== event.effectId) return state;
      // A call stopped while its summarization ran (cancel, failure) ends that too.
      return state.summarizing ? { ...state, modelCallEffectId: null, summarizing: null } : { ...state, modelCallEffectId: null };
    case 'model_retry_scheduled':
      return { ...state, modelCallEffectId: state.modelCallEffectId === event.effectId ? null : state.modelCallEffectId, modelRetries: event.retries };
    case 'usage_added':
      return { ...state, usage: addUsage(state.usage, event.usage) };
    case 'late_usage_added':
      return { ...state, usage: addUsage(state.usage, event.usage), reportedChildIds: [...(state.reportedChildIds ?? []), event.sourceObjectiveId] };
    case 'tool_calls_received':
      return {
        ...state,
        turnCalls: event.calls.map((call, index): TurnToolCall => {
          const asked = lastAssistantCalls(state)[index];
          const providerId = call.providerId ?? asked?.id;
          return {
            id: call.id, ...(providerId === undefined || providerId === call.id ? {} : { providerId }),
            name: call.name ?? asked?.name ?? '', arguments: call.arguments ?? asked?.arguments ?? '', state: 'not_run', result: null,
          };
        }),
        knownToolCallIds: [...state.knownToolCallIds, ...event.calls.map((call) => call.id)],
        toolCallCount: state.toolCallCount + event.calls.filter((call) => call.counted).length,
      };
    case 'output_emitted':
      return { ...state, output: event.output, outputEmitted: true };
    case 'tools_discovered': {
      const before = state.discoveredTools ?? [];
      const dropped = before.slice(0, event.dropOldest ?? 0);
      return { ...state, discoveredTools: [...before.slice(event.dropOldest ?? 0), ...event.tools], promptBase: promptBaseWithTools(state.promptBase, event.tools, dropped) };
    }
    case 'error_set':
      return { ...state, error: event.error };
    case 'child_assigned':
      return updateCall(state, event.toolCallId, { child: { objectiveId: event.childObjectiveId, started: false, metadata: null } });
    case 'sub_agent_call_queued':
      return updateCall(state, event.toolCallId, { state: 'queued' });
    case 'child_started': {
      const call = state.turnCalls.find((candidate) => candidate.id === event.toolCallId);
      if (!call?.child) return state;
      return {
        ...updateCall(state, event.toolCallId, { child: { ...call.child, started: true, metadata: event.metadata, ...(event.share ? { share: event.share } : {}) } }),
        subObjectiveCount: state.subObjectiveCount + 1,
        childObjectiveIds: [...state.childObjectiveIds, call.child.objectiveId],
      };
    }
    case 'child_finished':
      return {
        ...state,
        usage: addUsage(state.usage, event.usage),
        ...(event.childObjectiveId ? { reportedChildIds: [...(state.reportedChildIds ?? []), event.childObjectiveId] } : {}),
      };
    case 'reported_to_parent':
      return { ...state, reportedToParent: true };
    case 'erased':
      return eraseContent(state);
    case 'tool_results_cleared':
      return { ...state, conversation: clearToolResults(state.conversation, event.before), promptBase: promptBaseAfterClearing(state, event.before) };
    case 'summarization_started':
      return {
        ...state,
        summarizing: {
          effectId: event.effectId, cleared: event.cleared, forced: event.forced,
          ...(event.clearedBefore === undefined ? {} : { clearedFrom: event.clearedFrom, clearedBefore: event.clearedBefore }),
        },
      };
    case 'context_window_opened': {
      const { conversation } = state;
      const first: ChatMessage[] = event.firstMessage !== undefined
        ? [{ role: 'user', content: event.firstMessage }]
        : event.keepFirst && conversation.length ? [conversation[0]] : [];
      return {
        ...state,
        conversation: [...first, ...conversation.slice(event.keepFrom)],
        contextWindow: { id: event.contextWindowId, sequence: event.sequence },
        promptBase: null,
        summarizing: null,
      };
    }
    case 'summarization_ended':
      return { ...state, summarizing: null };
    case 'context_retry_started':
      return { ...state, contextRetried: true };
  }
}

/** What a cleared tool result reads as (spec 2.14 toolResultClearing). */
export const RESULT_CLEARED = '[result cleared]';

/**
 * The provider's last prompt count less what clearing the results before
 * `before` removed from the messages it covered (rounded down: the estimate
 * never drops below what is sent); the messages after it are estimated afresh.
 */
function promptBaseAfterClearing(state: ObjectiveState, before: number): ObjectiveState['promptBase'] {
  const base = state.promptBase;
  if (!base) return null;
  let removed = 0;
  const end = Math.min(before, base.messages);
  for (let index = 0; index < end; index++) {
    const message = state.conversation[index];
    if (message.role === 'tool' && message.content !== RESULT_CLEARED) removed += message.content.length - RESULT_CLEARED.length;
  }
  return { ...base, tokens: Math.max(0, base.tokens - Math.floor(removed / 4)) };
}

/** The provider's last prompt count plus the definitions of tools offered since (less those no longer offered). */
function promptBaseWithTools(base: ObjectiveState['promptBase'], added: readonly ObjectiveTool[], removed: readonly ObjectiveTool[]): ObjectiveState['promptBase'] {
  if (!base) return null;
  const characters = (tools: readonly ObjectiveTool[]) => (tools.length
    ? JSON.stringify(tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.inputSchema }))).length
    : 0);
  return { ...base, tokens: Math.max(0, base.tokens + tokensForCharacters(characters(added)) - Math.floor(characters(removed) / 4)) };
}

/** The conversation with the content of every tool message before index `before` replaced by RESULT_CLEARED. */
export function clearToolResults(conversation: ChatMessage[], before: number): ChatMessage[] {
  return conversation.map((message, index) =>
    (index < before && message.role === 'tool' && message.content !== RESULT_CLEARED ? { ...message, content: RESULT_CLEARED } : message));
}

/** What erased content reads as, in the state, the rows and the events. */
export const ERASED = '[erased]';

const erasedOrNull = <T>(value: T | null): string | null => (value === null || value === undefined ? null : ERASED);

function eraseMessage(message: ChatMessage): ChatMessage {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: erasedOrNull(message.content),
        ...(message.toolCalls ? { toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: ERASED })) } : {}),
      };
    case 'tool':
      return { ...message, content: ERASED };
    default:
      return { ...message, content: ERASED };
  }
}

/**
 * Tenant or subject erasure (api-decisions.md "Tenants, subjects, uploads"):
 * metadata stays, content goes. The conversation, the messages waiting, the
 * tool calls' arguments and results, the output, the last message and the
 * start's data and messages all become `[erased]` (absent content stays absent).
 */
function eraseContent(state: ObjectiveState): ObjectiveState {
  const config = state.config && {
    ...state.config,
    initialMessage: ERASED,
    spec: { ...state.config.spec, data: erasedOrNull(state.config.spec.data), initialMessage: erasedOrNull(state.config.spec.initialMessage) },
  };
  return {
    ...state,
    config,
    conversation: state.conversation.map(eraseMessage),
    pendingUserMessages: state.pendingUserMessages.map(() => ERASED),
    turnCalls: state.turnCalls.map((call) => ({ ...call, arguments: ERASED, result: erasedOrNull(call.result) })),
    output: erasedOrNull(state.output),
    lastMessage: erasedOrNull(state.lastMessage),
    erased: true,
  };
}
