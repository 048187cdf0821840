// Validation of a tool's spec (api-decisions.md "Tools and tool sets"): exactly
// one kind, outbound URLs under the URL policy, headers that are valid HTTP
// headers whose values may hold {{secrets.NAME}}, inputSchema a JSON Schema.
import { checkJsonSchema } from '../agents/json-schema';
import { InvalidArgumentError } from '../errors';
import { checkOutboundUrl, type UrlPolicyOptions } from '../network/url-policy';
import type { ToolSpecInput, ToolSpecUpdateInput } from '../schemas/tools.schema';
import { DEFAULT_TOOL_TIMEOUT_MS, type HttpMethod, type ToolRecord } from './records';

/** `{{secrets.NAME}}`: the only template a tool URL or header may hold. */
export const SECRET_PLACEHOLDER = /\{\{\s*secrets\.([A-Za-z0-9_.-]{1,256})\s*\}\}/g;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** Headers the HTTP client sets itself. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive']);

export type ToolSpecFields = Pick<
  ToolRecord,
  'description' | 'inputSchema' | 'requiresApproval' | 'kind' | 'httpUrl' | 'httpMethod' | 'httpHeaders' | 'httpTimeoutMs' | 'mcpServerUrl' | 'mcpToolName'
>;

/** Refuses `{{...}}` other than `{{secrets.NAME}}`. */
function checkTemplates(field: string, value: string): void {
  const rest = value.replace(SECRET_PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) throw InvalidArgumentError.forField(field, 'may only contain {{secrets.NAME}} placeholders');
}

function checkHttpUrl(raw: string, policy: UrlPolicyOptions): string {
  const field = 'spec.http.url';
  checkTemplates(field, raw);
  const schemeEnd = raw.indexOf('//');
  const afterScheme = schemeEnd === -1 ? 0 : schemeEnd + 2;
  const authorityLength = raw.slice(afterScheme).search(/[/?#]/);
  const origin = raw.slice(0, authorityLength === -1 ? raw.length : afterScheme + authorityLength);
  if (origin.includes('{{')) {
    throw InvalidArgumentError.forField(field, 'may hold {{secrets.NAME}} only in its path and query, not in its scheme or host');
  }
  checkOutboundUrl(field, raw.replace(SECRET_PLACEHOLDER, 'secret'), policy);
  return raw;
}

function checkHeaders(headers: Record<string, string> | undefined): Record<string, string> | null {
  if (!headers) return null;
  for (const [name, value] of Object.entries(headers)) {
    const field = `spec.http.headers.${name}`;
    if (!HEADER_NAME.test(name)) throw InvalidArgumentError.forField(field, 'is not a valid HTTP header name');
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw InvalidArgumentError.forField(field, 'is set by the HTTP client and cannot be configured');
    if (/[\r\n\0]/.test(value)) throw InvalidArgumentError.forField(field, 'must not contain line breaks or NUL');
    checkTemplates(field, value);
  }
  return headers;
}

/** @throws InvalidArgumentError naming the first required field of the kind that is missing */
function requireFields<T extends object>(kind: 'http' | 'mcp', value: T, fields: ReadonlyArray<keyof T & string>): void {
  const missing = fields.find((field) => value[field] === undefined);
  if (missing) throw InvalidArgumentError.forField(`spec.${kind}.${missing}`, 'is required');
}

/**
 * Validates a complete tool spec (a PATCH's merged one included) and returns its record fields.
 * @throws InvalidArgumentError naming the offending field
 */
export function toolSpecFields(spec: ToolSpecUpdateInput, policy: UrlPolicyOptions): ToolSpecFields {
  if ((spec.http === undefined) === (spec.mcp === undefined)) {
    throw InvalidArgumentError.forField('spec', 'exactly one of spec.http and spec.mcp must be set');
  }
  if (spec.http) requireFields('http', spec.http, ['url', 'method']);
  if (spec.mcp) requireFields('mcp', spec.mcp, ['serverUrl', 'toolName']);
  if (spec.inputSchema) checkJsonSchema('spec.inputSchema', spec.inputSchema, { objectType: true });
  const common = { description: spec.description ?? null, inputSchema: spec.inputSchema ?? null, requiresApproval: spec.requiresApproval ?? false };
  if (spec.http) {
    return {
      ...common,
      kind: 'http',
      httpUrl: checkHttpUrl(spec.http.url!, policy),
      httpMethod: spec.http.method as HttpMethod,
      httpHeaders: checkHeaders(spec.http.headers),
      httpTimeoutMs: spec.http.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      mcpServerUrl: null,
      mcpToolName: null,
    };
  }
  const mcp = spec.mcp as Required<NonNullable<ToolSpecUpdateInput['mcp']>>;
  checkOutboundUrl('spec.mcp.serverUrl', mcp.serverUrl, policy);
  return { ...common, kind: 'mcp', httpUrl: null, httpMethod: null, httpHeaders: null, httpTimeoutMs: null, mcpServerUrl: mcp.serverUrl, mcpToolName: mcp.toolName };
}

/** The record's spec as a client would send it (the base a PATCH merges into). */
export function specOfRecord(record: ToolRecord): ToolSpecInput {
  return {
    ...(record.description !== null ? { description: record.description } : {}),
    ...(record.inputSchema ? { inputSchema: record.inputSchema } : {}),
    requiresApproval: record.requiresApproval,
    ...(record.kind === 'http'
      ? { http: { url: record.httpUrl ?? '', method: record.httpMethod ?? 'POST', ...(record.httpHeaders ? { headers: record.httpHeaders } : {}), timeoutMs: record.httpTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS } }
      : { mcp: { serverUrl: record.mcpServerUrl ?? '', toolName: record.mcpToolName ?? '' } }),
  };
}
