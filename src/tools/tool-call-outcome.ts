// What one executed tool call came to (issue 9 item 4): a JSON value, because
// it crosses a restart as an effect outcome, holding both what the model sees
// (`content`) and what events and operators see (`message`, `errorType`).
// Nothing in an outcome ever holds a secret value.
import type { FieldViolation } from '../errors';
import type { HttpMethod, ToolKind, ToolRecord } from './records';

/** Why a tool call failed; one value per reason a TOOL_ERROR event reports. */
export const ToolErrorType = {
  /** The arguments are not JSON, not an object, or break the tool's inputSchema (`fieldViolations` names the fields). */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** A `{{secrets.NAME}}` names no secret of the workspace, or one without a value, or any secret once the objective's widget session has ended. */
  SECRET_NOT_FOUND: 'SECRET_NOT_FOUND',
  /** A secret's value cannot go where the template puts it (a line break in a header value). */
  SECRET_UNUSABLE: 'SECRET_UNUSABLE',
  /** The URL policy refused the address (private, loopback, link-local, metadata) or the URL is unusable. */
  URL_REFUSED: 'URL_REFUSED',
  /** The tool's `timeoutMs` (or the caller's deadline) passed: connecting, waiting or reading. */
  TIMED_OUT: 'TIMED_OUT',
  /** The caller's signal aborted the call (objective cancelled, node stopping). */
  CANCELLED: 'CANCELLED',
  /** The HTTP tool answered a status outside 2xx (a 3xx included: redirects are never followed). */
  HTTP_ERROR: 'HTTP_ERROR',
  /** The HTTP tool could not be reached or broke the connection. */
  NETWORK_ERROR: 'NETWORK_ERROR',
  /** The MCP server could not be reached, or answered with a protocol error (an unknown tool, say). */
  MCP_ERROR: 'MCP_ERROR',
  /** The MCP tool ran and reported an error (`isError`); `content` is its explanation. */
  MCP_TOOL_ERROR: 'MCP_TOOL_ERROR',
  /** A service tool's key resolves in no layer (`load_skill`, `memory_read`). */
  NOT_FOUND: 'NOT_FOUND',
  /** A fault of the service itself (its database, say); the message is generic. */
  INTERNAL: 'INTERNAL',
} as const;
export type ToolErrorType = (typeof ToolErrorType)[keyof typeof ToolErrorType];

/** Largest tool result kept, in bytes of UTF-8 (api-decisions.md "Objectives"). */
export const TOOL_RESULT_MAX_BYTES = 64 * 1024;

interface OutcomeCommon {
  toolCallId: string;
  toolId: string;
  kind: ToolKind;
  /** What goes back to the model as the tool result: a response body, or an explanation of the failure. */
  content: string;
  /** True when `content` is the first TOOL_RESULT_MAX_BYTES of a longer answer. */
  truncated: boolean;
  /** The HTTP status the tool answered (HTTP tools only, when one arrived). */
  status?: number;
  /** From the start of the call to its outcome, secret resolution included. */
  durationMs: number;
}

export interface ToolCallSuccess extends OutcomeCommon {
  ok: true;
}

export interface ToolCallFailure extends OutcomeCommon {
  ok: false;
  errorType: ToolErrorType;
  /** For the TOOL_ERROR event and logs: names the tool's target and the reason, never a secret value. */
  message: string;
  /** INVALID_ARGUMENTS: each failing field (`arguments.query`), as the API reports field violations. */
  fieldViolations?: FieldViolation[];
}

export type ToolCallOutcome = ToolCallSuccess | ToolCallFailure;

/**
 * The part of a stored tool a call needs: JSON only, so it can be the input of
 * an effect and be run again after a restart exactly as first decided.
 */
export interface ExecutableTool {
  id: string;
  name: string;
  workspaceId: string;
  kind: ToolKind;
  inputSchema: Record<string, unknown> | null;
  httpUrl: string | null;
  httpMethod: HttpMethod | null;
  httpHeaders: Record<string, string> | null;
  httpTimeoutMs: number | null;
  mcpServerUrl: string | null;
  mcpToolName: string | null;
}

/** The executable snapshot of a stored tool (what an objective puts into an effect's input). */
export function executableTool(record: ToolRecord): ExecutableTool {
  return {
    id: record.id,
    name: record.name,
    workspaceId: record.workspaceId,
    kind: record.kind,
    inputSchema: record.inputSchema,
    httpUrl: record.httpUrl,
    httpMethod: record.httpMethod,
    httpHeaders: record.httpHeaders,
    httpTimeoutMs: record.httpTimeoutMs,
    mcpServerUrl: record.mcpServerUrl,
    mcpToolName: record.mcpToolName,
  };
}
