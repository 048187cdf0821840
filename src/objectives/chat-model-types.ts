// The chat shapes the objective actor uses, from the model port
// (src/ports/model-provider.ts): the `model.call` effect's input is a
// ChatRequest and its value a ChatResponse. The objective reads only the
// response's content, tool calls and usage, so it accepts any response that
// has those (a value recorded by an earlier version may lack the rest).
import type { ChatResponse as PortChatResponse, ChatToolCall, ChatUsage as PortChatUsage } from '../ports/model-provider';

export type { ChatMessage, ChatRequest, ChatToolCall, ChatToolDefinition } from '../ports/model-provider';

/** The usage figures the objective sums into `info.usage`. */
export type ChatUsage = Pick<PortChatUsage, 'promptTokens' | 'completionTokens' | 'costCents'> & Partial<PortChatUsage>;

/** What the objective reads of a model response. */
export type ChatResponse = Pick<PortChatResponse, 'content'> & { toolCalls?: ChatToolCall[]; usage?: ChatUsage } & Partial<Omit<PortChatResponse, 'content' | 'toolCalls' | 'usage'>>;
