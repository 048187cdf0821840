// What a widget visitor's event stream sends of one objective event: the
// chat page's needs (http/widget-host/assets/chat.js) and nothing more. No
// tenant, profile, usage, tool metadata, call arguments, tool results or
// internal error messages; kinds the page does not show (memory reads,
// compactions, sub-objectives and sub-agents) are not sent at all.
import type { ObjectiveEventView } from '../../src/schemas/objectives.schema';

const PREFIX = 'OBJECTIVE_EVENT_TYPE_';

/** One event as a visitor receives it: `data` keeps the API's shape ({type, <kind key>}), with only the fields below. */
export interface VisitorEvent {
  sequence: number;
  createdAt: string;
  data: { type: string } & Record<string, unknown>;
}

type Fields = Record<string, unknown>;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const fieldsOf = (value: unknown): Fields => (value && typeof value === 'object' ? (value as Fields) : {});

/** A tool failure in plain words, by its type (the event's message is internal: upstream bodies, URLs, ids). */
export function plainToolError(type: unknown): string {
  switch (type) {
    case 'TIMED_OUT': return 'The tool did not answer in time.';
    case 'CANCELLED': return 'The tool call was stopped.';
    case 'NETWORK_ERROR':
    case 'MCP_ERROR': return 'The tool could not be reached.';
    default: return 'The tool failed.';
  }
}

/**
 * A tool call of an answer: its name and its id, the toolCallId its TOOL_*
 * events name (the page pairs them by it; not secret). No arguments, no tool
 * metadata. An event recorded before calls carried their id has none.
 */
function visitorToolCall(call: unknown): Fields {
  const { id, functionName } = fieldsOf(call);
  return { ...(typeof id === 'string' ? { id } : {}), functionName: text(functionName) };
}

/** What a visitor is told of any objective error (its message is internal). */
export const VISITOR_ERROR_MESSAGE = 'Sorry, something went wrong.';

/** The visitor's view of `event`, or undefined when the visitor is sent nothing of it. */
export function visitorEvent(event: ObjectiveEventView): VisitorEvent | undefined {
  const type = event.data.type;
  const data = event.data as Fields;
  const kind = (key: string) => fieldsOf(data[key]);
  const callId = (key: string) => ({ toolCallId: text(kind(key).toolCallId) });
  let body: Fields;
  switch (type.startsWith(PREFIX) ? type.slice(PREFIX.length) : '') {
    case 'USER_MESSAGE':
      body = { userMessage: { content: text(kind('userMessage').content) } };
      break;
    case 'ASSISTANT_MESSAGE': {
      const calls = Array.isArray(kind('assistantMessage').toolCalls) ? (kind('assistantMessage').toolCalls as unknown[]) : [];
      body = { assistantMessage: { content: text(kind('assistantMessage').content), toolCalls: calls.map(visitorToolCall) } };
      break;
    }
    case 'TOOL_CALLED': body = { toolCalled: callId('toolCalled') }; break;
    case 'TOOL_RESULT': body = { toolResult: callId('toolResult') }; break;
    case 'TOOL_ERROR': body = { toolError: { ...callId('toolError'), message: plainToolError(kind('toolError').type) } }; break;
    case 'TOOL_APPROVAL_REQUESTED': body = { toolApprovalRequested: callId('toolApprovalRequested') }; break;
    case 'TOOL_APPROVED': body = { toolApproved: callId('toolApproved') }; break;
    case 'TOOL_DENIED': body = { toolDenied: callId('toolDenied') }; break;
    case 'ERROR': {
      const retryAt = kind('error').retryAt;
      body = { error: { message: VISITOR_ERROR_MESSAGE, ...(typeof retryAt === 'string' ? { retryAt } : {}) } };
      break;
    }
    case 'CANCELLED': body = {}; break;
    case 'FINALIZED': body = { finalized: { status: text(kind('finalized').status) } }; break;
    // MEMORY_READ, CONTEXT_WINDOW_COMPACTED, SUB_OBJECTIVE_CREATED, SUB_AGENT_*, and any kind added later.
    default: return undefined;
  }
  return { sequence: event.sequence, createdAt: event.metadata.createdAt, data: { type, ...body } };
}
