// Calling one tool of a Model Context Protocol server (streamable HTTP), as the
// tool executor needs it at run time; src/tools/mcp-sdk-client.ts implements it
// with the MCP SDK, every connection under the outbound URL policy.

/** One content block of a `tools/call` result, as the server sent it (text, image, audio, resource, resource_link). */
export interface McpContentBlock {
  type: string;
  [field: string]: unknown;
}

export interface McpToolCallResult {
  content: McpContentBlock[];
  /** The tool's structured result, when it declares an output schema. */
  structuredContent?: Record<string, unknown>;
  /** True when the tool ran and reported an error (its content explains it). */
  isError: boolean;
}

export interface McpToolCallRequest {
  serverUrl: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** Sent as the `Idempotency-Key` header of the `tools/call` request (the tool call id). */
  idempotencyKey: string;
  /** Aborts connecting and the call. */
  signal: AbortSignal;
  /** Longest wait for each MCP request (initialize, then tools/call). */
  timeoutMs: number;
}

export interface McpToolCaller {
  /**
   * Calls the tool once (a fresh session per call: the servers may be stateless).
   * @throws PermissionDeniedError when the URL policy refuses the address
   * @throws DeadlineExceededError when the server does not answer within `timeoutMs`
   * @throws UnavailableError when the server cannot be reached or answers with a protocol error
   * @throws the signal's reason (or an AbortError) when `signal` aborts
   */
  callTool(request: McpToolCallRequest): Promise<McpToolCallResult>;
}
