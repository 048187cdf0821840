// The `objective` actor kind as the runtime registers it: the pure behaviour
// of src/objectives with its side effects bound to the real libraries
// (`model.call` and compaction's `model.summarize` to the model router, the
// answer's text streamed to the live feed as it comes, `tool.call` to the tool executor,
// `service_tool.call` to the memory and discovery tools, `objective.prepare_child` to the objective service's resolution) and its
// projector writing the objectives read model in the actor's own turn (which
// keeps the events' envelopes, so their outbox rows need not). Each call runs
// inside its span (src/tracing/spans.ts) only while tracing is on: the check
// comes first, so a node not tracing builds no span argument and no closure.
import type { ActorKind, EffectContext } from '../../src/ports/actor-behavior';
import { InternalError } from '../../src/errors';
import type { ChatCallOptions, ChatRequest, ModelProvider } from '../../src/ports/model-provider';
import type { ObjectiveLiveFeed } from '../../src/ports/objective-live';
import type { ObjectivesStore } from '../../src/ports/objectives-store';
import type { ObjectiveChange } from '../../src/objectives/objective-events';
import { MODEL_CALL_EFFECT, modelTurnOfEffectId, TOOL_CALL_EFFECT, type ModelCallEffectInput, type ToolCallEffectInput } from '../../src/objectives/objective-loop';
import { objectiveKindDeclaration } from '../../src/objectives/objective.behavior';
import { MODEL_SUMMARIZE_EFFECT, type SummarizeEffectInput } from '../../src/objectives/objective-compaction';
import { PREPARE_CHILD_EFFECT, type PrepareChildInput } from '../../src/objectives/objective-children';
import type { ObjectiveStart } from '../../src/objectives/objective-state';
import type { ToolCallOutcome } from '../../src/tools/tool-call-outcome';
import type { ToolCallRequest } from '../../src/tools/tool-executor';
import { SERVICE_TOOL_EFFECT, type ServiceToolCallInput, type ServiceToolOutcome } from '../../src/ports/service-tools';
import { traceModelCall, traceServiceToolCall, traceSubObjective, traceToolCall } from '../../src/tracing/spans';
import { tracingEnabled } from '../../src/tracing/tracing';
import { meteredModels, meteredTools, observeObjective } from '../domain-metrics';

export interface ObjectiveKindDependencies {
  models: Pick<ModelProvider, 'complete'>;
  tools: { executeToolCall(call: ToolCallRequest): Promise<ToolCallOutcome> };
  /** Runs `load_skill`, `memory_read`, `memory_write` and `search_tools` (ServiceToolRunner). */
  serviceTools: { run(input: ServiceToolCallInput): Promise<ServiceToolOutcome> };
  store: Pick<ObjectivesStore, 'project' | 'projection' | 'projectedEnvelopes'>;
  /** Resolves a sub-agent's child objective (ObjectiveService.prepareChild). */
  prepareChild(input: PrepareChildInput): Promise<ObjectiveStart>;
  /** How long OBJECTIVE_EVENTS keeps an event (its max_age). @default for ever */
  eventRetentionMs?: number;
  /** A widget session's secrets, opened (WidgetSessionVerifier.sessionSecrets); read per call, never journaled. @default none */
  sessionSecrets?: (sessionId: string) => Promise<Record<string, string> | null>;
  /** Where a model call's answer text goes as the provider streams it (the objective's open event streams). @default nowhere */
  live?: Pick<ObjectiveLiveFeed, 'publish' | 'answerEnded'>;
}

/** The onDelta of a model call: each piece of the answer published as a delta of the objective's model turn. */
function answerDeltas(live: Pick<ObjectiveLiveFeed, 'publish'> | undefined, context: EffectContext): ChatCallOptions['onDelta'] {
  // The turn is in the effect id (model_call_<turn>), in journals of every age.
  const modelTurn = modelTurnOfEffectId(context.effectId);
  if (!live || modelTurn === undefined) return undefined;
  const objectiveId = context.actorId;
  return ({ offset, text }) => live.publish({ type: 'delta', objectiveId, modelTurn, offset, text });
}

export function createObjectiveKind(dependencies: ObjectiveKindDependencies): ActorKind {
  const { serviceTools, store, prepareChild, eventRetentionMs, sessionSecrets, live } = dependencies;
  // Every model call and tool run counted in the node's metrics (actors/domain-metrics.ts).
  const models = meteredModels(dependencies.models);
  const tools = meteredTools(dependencies.tools);
  return {
    ...objectiveKindDeclaration,
    ...(eventRetentionMs === undefined ? {} : { streams: objectiveKindDeclaration.streams.map((stream) => ({ ...stream, maxAgeMs: eventRetentionMs })) }),
    effects: {
      [MODEL_CALL_EFFECT]: async (input: ModelCallEffectInput, context: EffectContext) => {
        // The request is the run's transient input (journals written before it carry it in the input).
        const request = (context.transientInput as ChatRequest | undefined) ?? input.request;
        if (!request) throw new InternalError(`model call ${context.effectId} of ${context.actorId} was started without its request`);
        const onDelta = answerDeltas(live, context);
        const options: ChatCallOptions = { signal: context.signal, deadline: context.deadline, ...(onDelta ? { onDelta } : {}) };
        try {
          return await (tracingEnabled()
            ? traceModelCall({ request, workspaceId: input.workspaceId, objectiveId: context.actorId }, () => models.complete(input.workspaceId, request, options))
            : models.complete(input.workspaceId, request, options));
        } finally {
          if (onDelta) live?.answerEnded?.(context.actorId);
        }
      },
      // Compaction's summary, through the same provider (objective-compaction.ts); the request is transient too.
      [MODEL_SUMMARIZE_EFFECT]: async (input: SummarizeEffectInput, context: EffectContext) => {
        const request = context.transientInput as ChatRequest | undefined;
        if (!request) throw new InternalError(`summarization ${context.effectId} of ${context.actorId} was started without its request`);
        const options: ChatCallOptions = { signal: context.signal, deadline: context.deadline };
        return tracingEnabled()
          ? traceModelCall({ request, workspaceId: input.workspaceId, objectiveId: context.actorId }, () => models.complete(input.workspaceId, request, options))
          : models.complete(input.workspaceId, request, options);
      },
      // A widget session's objective: the input names the session, the values are read here (the input is journaled).
      [TOOL_CALL_EFFECT]: async (input: ToolCallEffectInput, context: EffectContext) => {
        const { workspaceId, widgetSessionId } = input.context;
        const secrets = widgetSessionId && sessionSecrets ? await sessionSecrets(widgetSessionId) : undefined;
        // null: the session has ended; a tool reading secrets then fails instead of reading the workspace's.
        const session = secrets === null ? { sessionEnded: true } : secrets ? { sessionSecrets: secrets } : {};
        const call: ToolCallRequest = {
          tool: input.tool, toolCallId: input.toolCallId, arguments: input.arguments, context: { workspaceId, ...session },
          signal: context.signal, deadline: context.deadline,
        };
        return tracingEnabled()
          ? traceToolCall({ name: input.tool.name, toolCallId: input.toolCallId, kind: input.tool.kind, toolId: input.tool.id, objectiveId: context.actorId }, () =>
            tools.executeToolCall(call))
          : tools.executeToolCall(call);
      },
      [SERVICE_TOOL_EFFECT]: (input: ServiceToolCallInput, context: EffectContext) => (tracingEnabled()
        ? traceServiceToolCall({ name: input.name, toolCallId: input.toolCallId, objectiveId: context.actorId }, () => serviceTools.run(input))
        : serviceTools.run(input)),
      // The child is resolved inside its span: the child's own spans continue it.
      [PREPARE_CHILD_EFFECT]: (input: PrepareChildInput) => (tracingEnabled()
        ? traceSubObjective({
          parentObjectiveId: input.parentObjectiveId, childObjectiveId: input.childObjectiveId, agentId: input.agentId, toolCallId: input.parentToolCallId, depth: input.depth,
        }, () => prepareChild(input))
        : prepareChild(input)),
    },
    projector: (sql, changes) => store.project(sql, changes as Array<{ actorId: string; change: ObjectiveChange }>),
    projection: (changes) => store.projection(changes as Array<{ actorId: string; change: ObjectiveChange }>),
    projectedPayloads: (sql, ids) => store.projectedEnvelopes(sql, ids),
    observe: observeObjective,
  };
}
