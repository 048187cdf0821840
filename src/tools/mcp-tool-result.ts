// An MCP `tools/call` result flattened to the text a model reads: text blocks
// as they are, embedded text resources by their text, and a short bracketed
// note for what a text-only tool result cannot carry (images, audio, blobs,
// links), so the model knows something was there.
import type { McpContentBlock, McpToolCallResult } from '../ports/mcp-tool-caller';

function describeBlock(block: McpContentBlock): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio': {
      const size = typeof block.data === 'string' ? Buffer.byteLength(block.data, 'base64') : 0;
      return `[${block.type}: ${String(block.mimeType ?? 'unknown type')}, ${size} bytes]`;
    }
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return resource.text;
      return `[resource: ${String(resource.uri ?? '')}${resource.mimeType ? ` (${String(resource.mimeType)})` : ''}]`;
    }
    case 'resource_link':
      return `[resource link: ${String(block.uri ?? '')}${block.name ? ` (${String(block.name)})` : ''}]`;
    default:
      return `[${block.type} content]`;
  }
}

/** The result as text: blocks joined by blank lines; a result with only structured content is its JSON. */
export function flattenMcpResult(result: McpToolCallResult): string {
  const parts = result.content.map(describeBlock).filter((part) => part !== '');
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n\n');
}
