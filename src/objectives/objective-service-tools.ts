// The service-provided tools inside the loop (api-decisions.md "Tools and
// tool sets"): which of `load_skill`, `memory_read`, `memory_write` and
// `search_tools` an objective offers (its memory stack and discovery
// settings decide), how one call runs (a `service_tool.call` effect; never
// held for approval, never counted against maxToolCalls), and what its
// outcome records: a MEMORY_READ event for a key that resolved, then the
// TOOL_RESULT (or TOOL_ERROR); tools `search_tools` found join the
// objective's tool list from the next model call. Nothing here does I/O.
import { ServiceToolName, SERVICE_TOOL_EFFECT, type ServiceToolCallInput, type ServiceToolOutcome } from '../ports/service-tools';
import type { EffectOutcome, EffectRequest } from '../ports/actor-behavior';
import { uniqueModelToolNames, SERVICE_TOOL_NAMES } from '../tools/tool-name';
import type { ChatToolDefinition } from './chat-model-types';
import { effectFailureOutcome, toolErrorOutcome, type ToolCallKind } from './objective-observations';
import { EMIT_OUTPUT_TOOL_NAME } from './objective-output';
import type { ObjectiveState, ObjectiveTool, TurnToolCall } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/**
 * Most tools one model request offers (OpenAI's limit, the strictest common
 * one): tools found by `search_tools` beyond it push out the earliest found.
 */
export const MAX_OFFERED_TOOLS = 128;
/** How long one service tool call may take (a database read or write, a search). */
export const SERVICE_TOOL_TIMEOUT_MS = 30_000;
/** The TOOL_RESULT `type` of every service tool result. */
const TEXT = 'text';

const KEY_PARAMETER = { type: 'string', description: 'The entry key, exactly as listed (case-sensitive)' };

const DEFINITIONS: Record<ServiceToolName, ChatToolDefinition> = {
  [ServiceToolName.LOAD_SKILL]: {
    name: ServiceToolName.LOAD_SKILL,
    description: 'Loads the full instructions of a skill by its key (the skills manifest in the system prompt lists them). Load a skill before doing what it describes.',
    parameters: { type: 'object', properties: { key: KEY_PARAMETER }, required: ['key'], additionalProperties: false },
  },
  [ServiceToolName.MEMORY_READ]: {
    name: ServiceToolName.MEMORY_READ,
    description: 'Reads what is stored under a key: your episodic memory first (shared with earlier conversations of the same episode), then the agent\'s memory layers.',
    parameters: { type: 'object', properties: { key: KEY_PARAMETER }, required: ['key'], additionalProperties: false },
  },
  [ServiceToolName.MEMORY_WRITE]: {
    name: ServiceToolName.MEMORY_WRITE,
    description: 'Saves content under a key in your episodic memory, replacing what the key held; later conversations of the same episode can read it with memory_read.',
    parameters: {
      type: 'object',
      properties: {
        key: { type: 'string', description: "The key: ASCII letters, digits and ! - _ . * ' ( ) /, not starting or ending with /" },
        content: { type: 'string', description: 'What to remember' },
      },
      required: ['key', 'content'],
      additionalProperties: false,
    },
  },
  [ServiceToolName.SEARCH_TOOLS]: {
    name: ServiceToolName.SEARCH_TOOLS,
    description: 'Searches the workspace\'s tools by what they do. The tools found can be called from your next turn.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'What the tool should do, in a few words' } }, required: ['query'], additionalProperties: false },
  },
};

/** The service tools this objective offers, in a fixed order. */
export function serviceToolNamesOf(state: ObjectiveState): ServiceToolName[] {
  const config = state.config;
  if (!config) return [];
  const names: ServiceToolName[] = [];
  const memory = config.memory;
  if (memory?.skillsLayerIds.length) names.push(ServiceToolName.LOAD_SKILL);
  // memory_read reads every layer of the stack: offered with episodic memory or a layer that is not a skills layer.
  if (memory && (memory.episodic || memory.layerIds.length > memory.skillsLayerIds.length)) names.push(ServiceToolName.MEMORY_READ);
  if (memory?.episodic) names.push(ServiceToolName.MEMORY_WRITE);
  if (config.discovery) names.push(ServiceToolName.SEARCH_TOOLS);
  return names;
}

export function serviceToolDefinitions(state: ObjectiveState): ChatToolDefinition[] {
  return serviceToolNamesOf(state).map((name) => DEFINITIONS[name]);
}

/** Whether `name` is a service tool this objective offers. */
export function isOfferedServiceTool(state: ObjectiveState, name: string): name is ServiceToolName {
  return (serviceToolNamesOf(state) as string[]).includes(name);
}

/** The configured tools, then the ones `search_tools` found. */
export function objectiveToolsOf(state: ObjectiveState): ObjectiveTool[] {
  const discovered = state.discoveredTools;
  return discovered?.length ? [...state.config!.tools, ...discovered] : state.config!.tools;
}

/** The kind of tool `name` is in this objective (the node's tool call metrics count by it). */
export function toolCallKindOf(state: ObjectiveState, name: string): ToolCallKind {
  if (!state.config) return 'unknown';
  if (name === EMIT_OUTPUT_TOOL_NAME && state.config.outputDefinition) return 'output';
  if (isOfferedServiceTool(state, name)) return 'service';
  const tool = objectiveToolsOf(state).find((candidate) => candidate.name === name);
  if (!tool) return 'unknown';
  if (tool.subAgent) return 'sub_agent';
  return tool.executable?.kind ?? 'unknown';
}

/** The system prompt the model gets: the variation's prompt, then the skills manifest. */
export function systemPromptOf(state: ObjectiveState): string | null {
  const config = state.config!;
  const manifest = config.memory?.skillsManifest;
  if (!manifest) return config.systemPrompt;
  return config.systemPrompt ? `${config.systemPrompt}\n\n${manifest}` : manifest;
}

/** Runs one accepted service tool call as a `service_tool.call` effect (its id is the tool call id). */
export function runServiceToolCall(turn: ObjectiveTurn, call: TurnToolCall): void {
  const config = turn.config;
  turn.record('TOOL_CALLED', { toolCallId: call.id });
  const input: ServiceToolCallInput = {
    toolCallId: call.id,
    name: call.name as ServiceToolName,
    arguments: call.arguments,
    context: {
      accountId: config.accountId,
      workspaceId: config.workspaceId,
      objectiveId: config.objectiveId,
      memory: config.memory
        ? { layerIds: config.memory.layerIds, skillsLayerIds: config.memory.skillsLayerIds, episodic: config.memory.episodic }
        : null,
      discovery: config.discovery ?? null,
    },
  };
  const effect: EffectRequest = { id: call.id, name: SERVICE_TOOL_EFFECT, input, timeoutMs: SERVICE_TOOL_TIMEOUT_MS, durableResult: false };
  turn.startEffect(effect);
}

/** The stored tool behind an offered tool (sub-agents and tools without metadata have none). */
function toolIdOf(tool: ObjectiveTool): string | undefined {
  return tool.executable?.id ?? (tool.subAgent ? undefined : tool.metadata?.id);
}

/**
 * The tools found that the objective does not offer yet join its list, each
 * once, named so no name is taken twice; answers what the model is told: every
 * tool found, under the name it can call it by (a tool already offered keeps its name).
 */
function acceptDiscoveredTools(turn: ObjectiveTurn, found: readonly ObjectiveTool[]): Array<{ name: string; description: string }> {
  const offered = objectiveToolsOf(turn.state);
  const byId = new Map<string, ObjectiveTool>();
  for (const tool of offered) {
    const id = toolIdOf(tool);
    if (id && !byId.has(id)) byId.set(id, tool);
  }
  const fresh = found.filter((tool) => {
    const id = toolIdOf(tool);
    if (!id || byId.has(id)) return false;
    byId.set(id, tool);
    return true;
  });
  // Room for found tools: what the configured, service and output tools leave; the best found first, the earliest found pushed out.
  const config = turn.config;
  const discovered = turn.state.discoveredTools ?? [];
  const room = Math.max(0, MAX_OFFERED_TOOLS - config.tools.length - serviceToolNamesOf(turn.state).length - (config.outputDefinition ? 1 : 0));
  const kept = fresh.slice(0, room);
  const dropOldest = Math.max(0, discovered.length + kept.length - room);
  for (const tool of discovered.slice(0, dropOldest)) byId.delete(toolIdOf(tool)!);
  const taken = [...SERVICE_TOOL_NAMES, ...config.tools.map((tool) => tool.name), ...discovered.slice(dropOldest).map((tool) => tool.name)];
  const names = uniqueModelToolNames([...taken, ...kept.map((tool) => tool.name)], []).slice(taken.length);
  const added = kept.map((tool, index) => (tool.name === names[index] ? tool : { ...tool, name: names[index] }));
  if (added.length) turn.apply({ type: 'tools_discovered', tools: added, ...(dropOldest ? { dropOldest } : {}) });
  for (const tool of fresh.slice(room)) byId.delete(toolIdOf(tool)!);
  for (const tool of added) byId.set(toolIdOf(tool)!, tool);
  const listed = [...new Set(found.map((tool) => byId.get(toolIdOf(tool) ?? '')).filter((tool): tool is ObjectiveTool => tool !== undefined))];
  return listed.map((tool) => ({ name: tool.name, description: tool.description }));
}

/** The result the model gets for a `search_tools` call. */
export function searchToolsResult(listed: ReadonlyArray<{ name: string; description: string }>): string {
  if (!listed.length) return 'No tools match. Try other words.';
  const lines = listed.map((tool) => `- ${tool.name}: ${tool.description}`);
  return `Found ${listed.length} tool${listed.length === 1 ? '' : 's'}; you can call ${listed.length === 1 ? 'it' : 'them'} from your next turn:\n${lines.join('\n')}`;
}

/** A `service_tool.call` outcome for a running call of the turn; false when the call is not one (stale). */
export function acceptServiceToolOutcome(turn: ObjectiveTurn, outcome: EffectOutcome): boolean {
  const call = turn.state.turnCalls.find((candidate) => candidate.id === outcome.id && candidate.state === 'running');
  if (!call) return false;
  if (!outcome.ok) {
    const content = outcome.error.code === 'DEADLINE_EXCEEDED' ? '[timed out]' : `[error: ${outcome.error.message}]`;
    turn.record('TOOL_ERROR', { message: `${outcome.error.code}: ${outcome.error.message}`, toolCallId: call.id }, { modelResult: content });
    turn.observeToolCall(call.id, effectFailureOutcome(outcome.error));
    return true;
  }
  const result = outcome.value as ServiceToolOutcome;
  if (result.memoryRead) turn.record('MEMORY_READ', { ...result.memoryRead });
  if (!result.ok) {
    turn.record('TOOL_ERROR', { message: result.content, toolCallId: call.id, ...(result.errorType ? { type: result.errorType } : {}) }, { modelResult: result.content });
    turn.observeToolCall(call.id, toolErrorOutcome(result.errorType));
    return true;
  }
  const content = result.discoveredTools ? searchToolsResult(acceptDiscoveredTools(turn, result.discoveredTools)) : result.content;
  turn.record('TOOL_RESULT', { content, toolCallId: call.id, type: TEXT }, { modelResult: content });
  turn.observeToolCall(call.id, 'result');
  return true;
}
