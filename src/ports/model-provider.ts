// The provider-neutral chat model port: what a model call takes and returns,
// whoever serves it (builtin/scripted, OpenRouter or any server speaking its
// protocol). Plain JSON shapes, because a response crosses restarts as an
// effect's value; a failure is a thrown ModelCallError (src/models/model-call-error.ts).

/** One tool call as the model made it. */
export interface ChatToolCall {
  /** The model's id for the call; the objective uses it as the tool call id (the Idempotency-Key). */
  id: string;
  /** The tool name the model saw. */
  name: string;
  /** The arguments as the model gave them: a JSON string (which may be invalid JSON). */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ChatToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool offered to the model. */
export interface ChatToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/** Whether the model may, must or must not call tools, or must call one named tool. */
export type ChatToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ChatRequest {
  /** The full model id, `family/model` (`openai/gpt-4o-mini`, `builtin/scripted`). */
  model: string;
  messages: ChatMessage[];
  tools: ChatToolDefinition[];
  /** @default 'auto' when tools are offered */
  toolChoice?: ChatToolChoice;
  /** 0.0 to 1.0 (the variation's `modelConfig.temperature`); the provider's default when absent. */
  temperature?: number;
  /** Longest completion in tokens; the provider's default when absent. */
  maxTokens?: number;
  /**
   * Why the objective asks: absent for a turn of the conversation,
   * `summarization` for compaction's summary of it (objective-compaction.ts).
   * Only builtin/scripted reads it (it answers a summarization with the rest
   * of its script); a provider never receives it.
   */
  purpose?: 'summarization';
}

/** Why the model stopped: a final answer, tool calls, the token limit, a content filter, or anything else. */
export type ChatFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

/** Where `costCents` comes from: the provider's own figure, the model's prices, or nothing known. */
export type ChatCostSource = 'provider' | 'catalog' | 'none';

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Cost in cents (USD), fractional; api-decisions.md counts usage in cents. */
  costCents: number;
  costSource: ChatCostSource;
}

export interface ChatResponse {
  /** The assistant's text; null when it only called tools. */
  content: string | null;
  /** Parallel tool calls of this turn, in the model's order (empty for a final answer). */
  toolCalls: ChatToolCall[];
  finishReason: ChatFinishReason;
  /** Absent only when the provider reported none. */
  usage?: ChatUsage;
  /** The model that answered, when the provider says (OpenRouter may route to another variant). */
  model?: string;
  /** The provider's id for the generation (`gen-…`), to reconcile costs later. */
  responseId?: string;
}

/** The deadline of a call that names none (the objective's model-call timeout). */
export const DEFAULT_MODEL_CALL_DEADLINE_MS = 120_000;

export interface ChatCallOptions {
  /** Aborting it ends the call with CANCELLED (TIMED_OUT once the deadline passed). */
  signal?: AbortSignal;
  /** No wait, retry or answer goes past it. @default now + 120 s */
  deadline?: Date;
  /**
   * Called with the answer's text as it streams in, before the call returns
   * (a model that does not stream may never call it). `offset` starts at 0
   * again when the call is retried after a failed attempt.
   */
  onDelta?: (delta: { offset: number; text: string }) => void;
}

/** One model implementation. */
export interface ChatModel {
  /**
   * Runs one model turn.
   * @throws ModelCallError with a `type` a user can act on
   */
  complete(request: ChatRequest, options?: ChatCallOptions): Promise<ChatResponse>;
}

/** Every model a workspace can use, each reached with the workspace's credentials. */
export interface ModelProvider {
  /**
   * Runs one model turn of `request.model` for a workspace: its provider key
   * is resolved and decrypted for this call only.
   * @throws ModelCallError with a `type` a user can act on (NO_PROVIDER_KEY, RATE_LIMITED, ...)
   */
  complete(workspaceId: string, request: ChatRequest, options?: ChatCallOptions): Promise<ChatResponse>;
}
