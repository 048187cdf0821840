// The OpenRouter chat-completions wire format (OpenAI's, with OpenRouter's
// extras): a ChatRequest as a request body, and a ChatResponse from a plain
// JSON answer or from the chunks of a streamed one (SSE `data:` lines, tool
// call deltas assembled by index, usage in the last chunk). No I/O here.
import type { ChatFinishReason, ChatMessage, ChatRequest, ChatResponse, ChatToolCall, ChatToolChoice, ChatUsage } from '../ports/model-provider';
import { ModelCallError, ModelCallErrorType } from './model-call-error';
import { roundCents, usageFromPrices, type PriceLookup } from './model-usage';
import { parseProviderError, providerFailure, statusOfErrorCode, type FailureContext } from './openrouter-errors';

/** What mapping an answer needs besides the answer. */
export interface WireContext extends FailureContext {
  prices: PriceLookup;
  /** Removes the provider key from provider text before it enters a message. */
  redact: (text: string) => string;
}

type Json = Record<string, unknown>;

const asObject = (value: unknown): Json | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined);
const asNumber = (value: unknown): number | undefined => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
};

function toWireMessage(message: ChatMessage): Json {
  switch (message.role) {
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      return {
        role: 'assistant',
        content: message.content,
        ...(calls.length ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}

function toWireToolChoice(choice: ChatToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** The request body; `stream` asks for SSE with usage in the final chunk. */
export function toWireRequest(request: ChatRequest, stream: boolean): Json {
  const tools = request.tools;
  return {
    model: request.model,
    messages: request.messages.map(toWireMessage),
    ...(tools.length
      ? {
        tools: tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } })),
        tool_choice: toWireToolChoice(request.toolChoice ?? 'auto'),
        // Route only to providers that honour every parameter sent, tools included.
        provider: { require_parameters: true },
      }
      : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    // Older OpenRouter versions report usage (and cost) only when asked.
    usage: { include: true },
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

/**
 * Usage with the provider's cost when it reports one (`usage.cost` in USD
 * credits; a BYOK call adds the upstream cost the provider billed directly),
 * else priced with the requested model's prices.
 */
export function usageOf(wire: unknown, context: WireContext): ChatUsage | undefined {
  const usage = asObject(wire);
  if (!usage) return undefined;
  const promptTokens = asNumber(usage.prompt_tokens) ?? 0;
  const completionTokens = asNumber(usage.completion_tokens) ?? 0;
  const totalTokens = asNumber(usage.total_tokens) ?? promptTokens + completionTokens;
  const cost = asNumber(usage.cost);
  if (cost === undefined) return { ...usageFromPrices(promptTokens, completionTokens, context.prices(context.model)), totalTokens };
  const upstream = usage.is_byok === true ? asNumber(asObject(usage.cost_details)?.upstream_inference_cost) ?? 0 : 0;
  return { promptTokens, completionTokens, totalTokens, costCents: roundCents((cost + upstream) * 100), costSource: 'provider' };
}

function finishReasonOf(raw: unknown, toolCalls: readonly ChatToolCall[]): ChatFinishReason {
  switch (raw) {
    case 'stop':
    case 'end_turn':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls';
    case 'length':
    case 'max_tokens':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case null:
    case undefined:
      return toolCalls.length ? 'tool_calls' : 'stop';
    default:
      return 'other';
  }
}

/** Arguments as a JSON string: an object some servers send is serialised, nothing at all is `{}`. */
function argumentsText(raw: unknown): string {
  if (typeof raw === 'string') return raw.trim() === '' ? '{}' : raw;
  return raw === undefined || raw === null ? '{}' : JSON.stringify(raw);
}

/** Text of a message's content: a string, or the text parts of an array some servers send. */
function contentText(raw: unknown): string | null {
  if (typeof raw === 'string') return raw;
  if (!Array.isArray(raw)) return null;
  return raw.map((part) => (typeof asObject(part)?.text === 'string' ? (asObject(part)!.text as string) : '')).join('');
}

/** The error an answer (a 200 body, a stream chunk or its choice) carries, as a ModelCallError. */
function errorIn(error: unknown, context: WireContext): ModelCallError {
  const parsed = typeof error === 'string' ? { message: error } : parseProviderError(JSON.stringify({ error }));
  const body = { ...parsed, message: context.redact(parsed.message) };
  return providerFailure(statusOfErrorCode(parsed.code), body, context);
}

function malformed(context: WireContext, what: string): ModelCallError {
  return new ModelCallError(ModelCallErrorType.PROVIDER_ERROR, `the provider of model ${context.model} answered ${what}`);
}

/** A plain (non-streamed) answer. @throws ModelCallError for an error body or an unusable answer */
export function fromWireCompletion(body: unknown, context: WireContext, responseId?: string): ChatResponse {
  const answer = asObject(body);
  if (!answer) throw malformed(context, 'something that is not a chat completion');
  const choice = asObject(Array.isArray(answer.choices) ? answer.choices[0] : undefined);
  if (!choice) {
    if (answer.error !== undefined) throw errorIn(answer.error, context).withUsage(usageOf(answer.usage, context));
    throw malformed(context, 'a chat completion without a choice');
  }
  if (choice.finish_reason === 'error') {
    // The tokens of an answer that failed half-way are still billed: the error carries them.
    throw errorIn(choice.error ?? answer.error ?? 'the provider ended the answer with an error', context).withUsage(usageOf(answer.usage, context));
  }
  const message = asObject(choice.message) ?? {};
  const id = typeof answer.id === 'string' ? answer.id : responseId;
  const toolCalls = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((raw, index): ChatToolCall => {
    const call = asObject(raw) ?? {};
    const fn = asObject(call.function) ?? {};
    return { id: typeof call.id === 'string' && call.id ? call.id : `${id ?? 'call'}_${index + 1}`, name: typeof fn.name === 'string' ? fn.name : '', arguments: argumentsText(fn.arguments) };
  });
  const usage = usageOf(answer.usage, context);
  return {
    content: contentText(message.content),
    toolCalls,
    finishReason: finishReasonOf(choice.finish_reason, toolCalls),
    ...(usage ? { usage } : {}),
    ...(typeof answer.model === 'string' ? { model: answer.model } : {}),
    ...(id ? { responseId: id } : {}),
  };
}

/** Splits an SSE byte stream's text into the data of its events; comments (`: OPENROUTER PROCESSING`) are skipped. */
export class SseDataReader {
  private buffer = '';
  private data: string[] = [];

  /** The data of every event completed by `text`. */
  push(text: string): string[] {
    this.buffer += text;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    const events: string[] = [];
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (this.data.length) events.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      // Comment lines (`:`) and the other fields (event, id, retry) carry nothing a completion needs.
    }
    return events;
  }

  /** The data of an event the stream ended without a blank line after. */
  end(): string[] {
    const events = this.push('\n\n');
    this.buffer = '';
    return events;
  }
}

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Assembles a streamed answer from its parsed chunks. */
export class ChatStreamAssembler {
  private content = '';
  private sawContent = false;
  private readonly calls = new Map<number, PartialToolCall>();
  private finishReason: unknown;
  private usage: unknown;
  private model?: string;
  private id?: string;

  constructor(private readonly context: WireContext) {}

  /** True once a choice has said why it finished. */
  get finished(): boolean {
    return this.finishReason !== undefined && this.finishReason !== null;
  }

  /**
   * Takes one chunk; returns the answer text it added ('' for none: tool call
   * fragments, usage, the finish), which a caller may show as it streams.
   * @throws ModelCallError for a chunk reporting an error (mid-stream errors arrive after a 200)
   */
  push(raw: unknown): string {
    const chunk = asObject(raw);
    if (!chunk) throw malformed(this.context, 'a stream chunk that is not a JSON object');
    // Usage first: a chunk that reports an error may report what the call used too, and that is billed.
    if (asObject(chunk.usage)) this.usage = chunk.usage;
    if (chunk.error !== undefined) throw errorIn(chunk.error, this.context).withUsage(usageOf(this.usage, this.context));
    if (typeof chunk.id === 'string') this.id ??= chunk.id;
    if (typeof chunk.model === 'string') this.model ??= chunk.model;
    const choice = asObject(Array.isArray(chunk.choices) ? chunk.choices[0] : undefined);
    if (!choice) return '';
    if (choice.finish_reason === 'error') {
      throw errorIn(choice.error ?? 'the provider ended the stream with an error', this.context).withUsage(usageOf(this.usage, this.context));
    }
    const delta = asObject(choice.delta) ?? {};
    const text = contentText(delta.content);
    // The first chunk's `content: ""` is no text: a turn of only tool calls has null content, as in a plain answer.
    if (text) {
      this.content += text;
      this.sawContent = true;
    }
    if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((part, position) => this.addToolCallDelta(asObject(part) ?? {}, position));
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    return text ?? '';
  }

  /** The answer the chunks so far make. */
  result(responseId?: string): ChatResponse {
    const id = this.id ?? responseId;
    const toolCalls = [...this.calls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([index, call]): ChatToolCall => ({ id: call.id || `${id ?? 'call'}_${index + 1}`, name: call.name, arguments: argumentsText(call.arguments) }));
    const usage = usageOf(this.usage, this.context);
    return {
      content: this.sawContent ? this.content : null,
      toolCalls,
      finishReason: finishReasonOf(this.finishReason, toolCalls),
      ...(usage ? { usage } : {}),
      ...(this.model ? { model: this.model } : {}),
      ...(id ? { responseId: id } : {}),
    };
  }

  /** A tool call arrives in pieces keyed by `index`: the id and name once, the arguments as fragments to join. */
  private addToolCallDelta(part: Json, position: number): void {
    const index = asNumber(part.index) ?? position;
    const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
    const fn = asObject(part.function) ?? {};
    if (typeof part.id === 'string' && part.id) call.id = part.id;
    if (typeof fn.name === 'string' && fn.name && !call.name) call.name = fn.name;
    if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
    else if (asObject(fn.arguments)) call.arguments += JSON.stringify(fn.arguments);
    this.calls.set(index, call);
  }
}
