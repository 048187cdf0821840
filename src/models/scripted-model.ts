// builtin/scripted (api-decisions.md "Models"): a deterministic model that
// needs no provider key, for demos and tests. It reads the latest user
// message as a script and performs, on each model turn, the next turn of it
// not yet performed since that message; the same request always gets the
// same answer. Only SLEEP touches the clock, and it honours signal and deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import { EMIT_OUTPUT_TOOL_NAME } from '../objectives/objective-output';
import { DEFAULT_MODEL_CALL_DEADLINE_MS, type ChatCallOptions, type ChatMessage, type ChatModel, type ChatRequest, type ChatResponse, type ChatToolCall } from '../ports/model-provider';
import { SCRIPTED_MODEL_ID } from './catalog';
import { ModelCallError, ModelCallErrorType } from './model-call-error';
import { catalogPrices, tokensForCharacters, usageFromPrices, type PriceLookup } from './model-usage';
import { scriptRemainder, scriptTurns, type ScriptAction } from './scripted-script';

/** What a FAIL line without a message fails with. */
const DEFAULT_FAIL_MESSAGE = 'the script failed';
/** A summary when nothing of the script is left: prose, so it is never read as an instruction. */
export const SCRIPT_DONE_SUMMARY = 'Nothing of the script is left to perform.';

function lastIndexOfRole(messages: readonly ChatMessage[], role: ChatMessage['role']): number {
  for (let index = messages.length - 1; index >= 0; index--) if (messages[index].role === role) return index;
  return -1;
}

function charactersOf(message: ChatMessage): number {
  const calls = message.role === 'assistant' ? message.toolCalls ?? [] : [];
  return (message.content ?? '').length + calls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
}

/**
 * Ids numbered through the conversation, so a re-run of the same request gets
 * the same ones (the objective gives each call its own id for the tool).
 */
function toolCallIds(request: ChatRequest, count: number): string[] {
  const earlier = request.messages.reduce((sum, message) => sum + (message.role === 'assistant' ? message.toolCalls?.length ?? 0 : 0), 0);
  return Array.from({ length: count }, (_, index) => `call_${earlier + index + 1}`);
}

function isOutputWrapper(parameters: Record<string, unknown> | undefined): boolean {
  const properties = parameters?.properties;
  const required = parameters?.required;
  return typeof properties === 'object' && properties !== null && Object.keys(properties).join() === 'output'
    && Array.isArray(required) && required.join() === 'output';
}

/**
 * The emit_output arguments for `OUTPUT <json>`: the JSON is the output. When
 * the offered tool wraps a non-object definition as `{output: ...}`, the
 * value is wrapped too, unless it is written wrapped already.
 */
function outputArguments(request: ChatRequest, json: string): string {
  const tool = request.tools.find((candidate) => candidate.name === EMIT_OUTPUT_TOOL_NAME);
  if (!isOutputWrapper(tool?.parameters)) return json;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return json; // invalid JSON goes to the objective as written, which reports it to the model
  }
  const wrapped = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).join() === 'output';
  return wrapped ? json : JSON.stringify({ output: value });
}

export interface ScriptedChatModelOptions {
  /** @default the catalog's prices (0 for builtin/scripted) */
  prices?: PriceLookup;
}

export class ScriptedChatModel implements ChatModel {
  private readonly prices: PriceLookup;

  constructor(options: ScriptedChatModelOptions = {}) {
    this.prices = options.prices ?? catalogPrices();
  }

  /**
   * Answers the next turn of the latest user message's script.
   * @throws ModelCallError SCRIPT_FAILED (a FAIL line), SCRIPT_INVALID, CANCELLED, TIMED_OUT (a SLEEP past the deadline)
   */
  async complete(request: ChatRequest, options: ChatCallOptions = {}): Promise<ChatResponse> {
    const deadline = options.deadline ?? new Date(Date.now() + DEFAULT_MODEL_CALL_DEADLINE_MS);
    if (options.signal?.aborted) throw new ModelCallError(ModelCallErrorType.CANCELLED, `${SCRIPTED_MODEL_ID} was cancelled`);
    if (request.purpose === 'summarization') {
      const answer = this.summarize(request.messages);
      return { ...answer, usage: this.usage(request, answer) };
    }
    const { messages } = request;
    const userIndex = lastIndexOfRole(messages, 'user');
    const script = userIndex >= 0 ? (messages[userIndex].content ?? '') : '';
    const performed = messages.slice(userIndex + 1).filter((message) => message.role === 'assistant').length;
    const turn = scriptTurns(script)[performed];
    if (turn?.sleepMs) await this.sleep(turn.sleepMs, options.signal, deadline);
    const answer = turn?.action ? this.perform(turn.action, request) : this.fallback(messages, userIndex, script);
    return { ...answer, usage: this.usage(request, answer) };
  }

  private perform(action: ScriptAction, request: ChatRequest): Omit<ChatResponse, 'usage'> {
    switch (action.kind) {
      case 'SAY':
        return { content: action.text, toolCalls: [], finishReason: 'stop', model: SCRIPTED_MODEL_ID };
      case 'CALLS': {
        const ids = toolCallIds(request, action.calls.length);
        const toolCalls = action.calls.map((call, index): ChatToolCall => ({ id: ids[index], name: call.toolName, arguments: call.arguments }));
        return { content: null, toolCalls, finishReason: 'tool_calls', model: SCRIPTED_MODEL_ID };
      }
      case 'OUTPUT': {
        const [id] = toolCallIds(request, 1);
        const toolCalls = [{ id, name: EMIT_OUTPUT_TOOL_NAME, arguments: outputArguments(request, action.json) }];
        return { content: null, toolCalls, finishReason: 'tool_calls', model: SCRIPTED_MODEL_ID };
      }
      case 'FAIL':
        throw new ModelCallError(ModelCallErrorType.SCRIPT_FAILED, action.message || DEFAULT_FAIL_MESSAGE);
      case 'INVALID':
        throw new ModelCallError(ModelCallErrorType.SCRIPT_INVALID, `${SCRIPTED_MODEL_ID} script line ${action.line}: ${action.problem}`);
    }
  }

  /**
   * A summarization (compaction, objective-compaction.ts): the messages to
   * summarize, then the instructions as the last user message. The summary is
   * what the script still has to perform, counted over the summarized
   * messages only: the turn of the assistant message the objective keeps
   * after the summary (the tail) is the summary's first turn, which the kept
   * message then counts as performed, so the script goes on exactly where it
   * stood. Nothing left: a line of prose.
   */
  private summarize(messages: readonly ChatMessage[]): Omit<ChatResponse, 'usage'> {
    const summarized = messages.slice(0, Math.max(0, lastIndexOfRole(messages, 'user')));
    const userIndex = lastIndexOfRole(summarized, 'user');
    const script = userIndex >= 0 ? (summarized[userIndex].content ?? '') : '';
    const performed = summarized.slice(userIndex + 1).filter((message) => message.role === 'assistant').length;
    const content = scriptRemainder(script, performed) || SCRIPT_DONE_SUMMARY;
    return { content, toolCalls: [], finishReason: 'stop', model: SCRIPTED_MODEL_ID };
  }

  /** No instruction left: the latest tool result since the user message, else the user message itself. */
  private fallback(messages: readonly ChatMessage[], userIndex: number, script: string): Omit<ChatResponse, 'usage'> {
    const since = messages.slice(userIndex + 1);
    const toolIndex = lastIndexOfRole(since, 'tool');
    const content = toolIndex >= 0 ? (since[toolIndex].content ?? '') : script;
    return { content, toolCalls: [], finishReason: 'stop', model: SCRIPTED_MODEL_ID };
  }

  /** One token per 4 characters of the prompt (every message's text and tool calls) and of the answer. */
  private usage(request: ChatRequest, answer: Omit<ChatResponse, 'usage'>) {
    const promptCharacters = request.messages.reduce((sum, message) => sum + charactersOf(message), 0);
    const answerCharacters = charactersOf({ role: 'assistant', content: answer.content, toolCalls: answer.toolCalls });
    return usageFromPrices(tokensForCharacters(promptCharacters), tokensForCharacters(answerCharacters), this.prices(SCRIPTED_MODEL_ID));
  }

  /** Waits `ms`, or until the deadline (TIMED_OUT) or an abort (CANCELLED), whichever comes first. */
  private async sleep(ms: number, signal: AbortSignal | undefined, deadline: Date): Promise<void> {
    const untilDeadline = deadline.getTime() - Date.now();
    try {
      await sleep(Math.max(0, Math.min(ms, untilDeadline)), undefined, signal ? { signal } : {});
    } catch {
      const late = Date.now() >= deadline.getTime();
      throw new ModelCallError(late ? ModelCallErrorType.TIMED_OUT : ModelCallErrorType.CANCELLED, late
        ? `${SCRIPTED_MODEL_ID} passed its deadline while sleeping`
        : `${SCRIPTED_MODEL_ID} was cancelled while sleeping`);
    }
    if (ms > untilDeadline) throw new ModelCallError(ModelCallErrorType.TIMED_OUT, `${SCRIPTED_MODEL_ID} passed its deadline while sleeping (SLEEP ${ms})`);
  }
}
