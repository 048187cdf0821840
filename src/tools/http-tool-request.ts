// One HTTP tool call on the wire (api-decisions.md "Tools and tool sets"): the
// arguments as the JSON body (as the query for GET), `{{secrets.NAME}}`
// rendered into the URL and headers, `Idempotency-Key: <toolCallId>` always,
// sent with undici over keep-alive agents whose every socket passes the URL
// policy at connect time. Redirects are never followed: a 3xx is the answer.
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { CONNECT_TIMEOUT_CAP_MS, guardedConnector } from '../network/guarded-fetch';
import type { UrlPolicyOptions } from '../network/url-policy';
import { SECRET_NAME_PATTERN } from '../secrets/secret-templates';
import { withTraceHeaders } from '../tracing/tracing';
import type { ExecutableTool } from './tool-call-outcome';
import { readCapped, type CappedText } from './tool-result-text';
import { SECRET_PLACEHOLDER } from './tool-spec';

const USER_AGENT = 'agentrt-tool/1.0';

/** The header our client always sets; a configured header of the same name is replaced. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Why a request could not be built; the executor turns each into its error type. */
export class HttpToolRequestError extends Error {
  constructor(
    readonly reason: 'SECRET_NAME' | 'SECRET_UNUSABLE' | 'URL',
    message: string,
  ) {
    super(message);
    this.name = 'HttpToolRequestError';
  }
}

export interface HttpToolRequest {
  method: string;
  /** The URL with secrets rendered: never log it. */
  url: URL;
  /** Headers with secrets rendered: never log them. */
  headers: Record<string, string>;
  body?: string;
}

export interface HttpToolAnswer extends CappedText {
  status: number;
  /** The Location of a 3xx, which is reported, not followed. */
  location?: string;
}

/** The distinct secret names the tool's URL and headers reference. */
export function secretNamesOfHttpTool(tool: ExecutableTool): string[] {
  const texts = [tool.httpUrl ?? '', ...Object.values(tool.httpHeaders ?? {})];
  const names = texts.flatMap((text) => [...text.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1]));
  return [...new Set(names)];
}

/**
 * Checks that each referenced name is one a workspace secret can have (the
 * spec's placeholder syntax is wider than the name rule).
 * @throws HttpToolRequestError (SECRET_NAME) naming the first that is not
 */
export function checkSecretNames(names: readonly string[]): void {
  const bad = names.find((name) => !SECRET_NAME_PATTERN.test(name));
  if (bad !== undefined) {
    throw new HttpToolRequestError('SECRET_NAME', `{{secrets.${bad}}} can name no workspace secret: secret names hold only letters, digits and underscores`);
  }
}

function render(text: string, values: ReadonlyMap<string, string>, encode: (value: string) => string): string {
  return text.replace(SECRET_PLACEHOLDER, (_template, name: string) => encode(values.get(name) ?? ''));
}

/** A query value: strings as they are, other scalars as their JSON text, objects as JSON. */
function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The request for one call. A secret in the URL is percent-encoded (it is a
 * value inside a path segment or query, never URL structure); a secret in a
 * header is sent as it is, but must not hold a line break or NUL.
 * @throws HttpToolRequestError for an unusable secret value or URL (messages name no value)
 */
export function buildHttpToolRequest(tool: ExecutableTool, args: Record<string, unknown>, toolCallId: string, secrets: ReadonlyMap<string, string>): HttpToolRequest {
  const method = tool.httpMethod ?? 'POST';
  let url: URL;
  try {
    url = new URL(render(tool.httpUrl ?? '', secrets, encodeURIComponent));
  } catch {
    throw new HttpToolRequestError('URL', `the tool URL ${tool.httpUrl} is not a valid URL once its secrets are filled in`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpToolRequestError('URL', `the tool URL ${tool.httpUrl} is not an http or https URL`);
  if (url.username || url.password) throw new HttpToolRequestError('URL', `the tool URL ${tool.httpUrl} carries credentials, which are never sent`);
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.8', 'user-agent': USER_AGENT };
  for (const [name, template] of Object.entries(tool.httpHeaders ?? {})) {
    if (name.toLowerCase() === IDEMPOTENCY_KEY_HEADER) continue;
    const value = render(template, secrets, (secret) => secret);
    if (/[\r\n\0]/.test(value)) throw new HttpToolRequestError('SECRET_UNUSABLE', `header ${name}: a secret it references holds a line break or NUL, which a header cannot carry`);
    headers[name.toLowerCase()] = value;
  }
  headers[IDEMPOTENCY_KEY_HEADER] = toolCallId;
  if (method === 'GET') {
    for (const [key, value] of Object.entries(args)) {
      if (value === null || value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, queryValue(item));
    }
    return { method, url, headers };
  }
  headers['content-type'] = 'application/json';
  return { method, url, headers, body: JSON.stringify(args) };
}

/**
 * Keep-alive agents whose sockets connect through the URL policy, one per
 * connect timeout (a connect timeout is a property of the agent in undici, and
 * tools use few distinct `timeoutMs` values).
 */
export class GuardedAgents {
  private readonly agents = new Map<number, Agent>();

  constructor(private readonly policy: UrlPolicyOptions) {}

  /** The agent for a tool whose whole call may take `timeoutMs`. */
  forTimeout(timeoutMs: number): Agent {
    const connectTimeoutMs = Math.max(1, Math.min(timeoutMs, CONNECT_TIMEOUT_CAP_MS));
    let agent = this.agents.get(connectTimeoutMs);
    if (!agent) {
      agent = new Agent({ connect: guardedConnector(this.policy, connectTimeoutMs) });
      this.agents.set(connectTimeoutMs, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}

/**
 * Sends the request and reads at most TOOL_RESULT_MAX_BYTES of the answer.
 * Throws what undici throws (the URL policy's PermissionDeniedError for a
 * refused address, ConnectTimeoutError, socket errors, the signal's reason).
 */
export async function sendHttpToolRequest(agent: Agent, toolRequest: HttpToolRequest, signal: AbortSignal): Promise<HttpToolAnswer> {
  const response = await request(toolRequest.url, {
    dispatcher: agent,
    method: toolRequest.method as never,
    // The tool call's span, when tracing is on: the tool can join the objective's trace.
    headers: withTraceHeaders(toolRequest.headers),
    ...(toolRequest.body !== undefined ? { body: toolRequest.body } : {}),
    signal,
  });
  const location = response.headers.location;
  const body = await readCapped(response.body as unknown as Readable);
  return { status: response.statusCode, ...body, ...(response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string' ? { location } : {}) };
}
