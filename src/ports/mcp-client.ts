// Outbound Model Context Protocol calls, as tool-set sync (and tools at run
// time) need them; src/tools/mcp-sdk-client.ts implements it with the SDK.

/** One tool as an MCP server lists it. */
export interface McpToolDescription {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface McpClient {
  /**
   * Every tool the server at `serverUrl` lists (all pages).
   * @throws UnavailableError when the server cannot be reached or answers badly
   * @throws PermissionDeniedError when the URL policy refuses the address
   */
  listTools(serverUrl: string): Promise<McpToolDescription[]>;
}
