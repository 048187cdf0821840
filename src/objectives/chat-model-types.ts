// The minimal chat request and response the objective actor needs from a
// model call. No chat-model port existed in src/models/ when the objective
// behaviour was written, so these are the behaviour's own JSON shapes: the
// `model.call` effect's input is a ChatRequest and its value a ChatResponse.
// When the port lands, the effect handler maps between the two (or these
// become aliases of the port's types).

/** One tool call as the model made it. */
export interface ChatToolCall {
  /** The model's id for the call; the objective uses it as the tool call id (the Idempotency-Key). */
  id: string;
  /** The tool name the model saw. */
  name: string;
  /** The arguments as the model gave them: a JSON string. */
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

export interface ChatRequest {
  /** The full model id, `family/model`. */
  model: string;
  messages: ChatMessage[];
  tools: ChatToolDefinition[];
  temperature?: number;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  costCents: number;
}

export interface ChatResponse {
  content: string | null;
  toolCalls?: ChatToolCall[];
  usage?: ChatUsage;
}
