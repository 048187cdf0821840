// The pass rule for one fuzz answer: no 5xx, no hang, every error a Status
// body whose HTTP status is the one its code maps to, no 2xx for another
// account's ids.
import { HTTP_STATUS } from '../http/middleware/errors';
import { StatusCode } from '../src/errors';
import type { Answer } from './send';

/**
 * Statuses the edge answers for a code besides HTTP_STATUS's: size and media
 * type refusals (http/middleware/json-body.ts, http/client-errors.ts) and a
 * request that did not arrive in time.
 */
const EDGE_STATUSES: Record<number, StatusCode[]> = {
  408: ['DEADLINE_EXCEEDED'],
  413: ['INVALID_ARGUMENT'],
  415: ['INVALID_ARGUMENT'],
  431: ['INVALID_ARGUMENT'],
};

const CODE_NAMES = new Map(Object.entries(StatusCode).map(([name, value]) => [value as number, name as StatusCode]));

/** Bodies past the body limit: the server may close the connection before the client finished writing. */
export const LARGE_BODY_BYTES = 256 * 1024;

/**
 * Operations that call a server outside agentrt while the client waits (a tool
 * set sync lists the tools of its MCP server): when that server cannot be
 * reached, 503 UNAVAILABLE is the right answer, not a fault of the node.
 */
const CALLS_OUTSIDE = new Set(['syncToolSet']);

export interface CheckContext {
  operationId: string;
  /** The path names another account's resource. */
  namesForeign: boolean;
  bodyBytes: number;
}

/** Null when the answer passes; otherwise why it fails. */
export function checkAnswer(answer: Answer, context: CheckContext): string | null {
  if ('error' in answer) {
    if (answer.error === 'timeout') return 'no answer before the timeout (hang)';
    if (/^(ECONNRESET|EPIPE)$/.test(answer.error) && context.bodyBytes > LARGE_BODY_BYTES) return null;
    return `no HTTP answer: ${answer.error}`;
  }
  const { status } = answer;
  if (status === 503 && CALLS_OUTSIDE.has(context.operationId)) return statusBodyProblem(status, answer.text);
  if (status >= 500) return `${status} server error`;
  if (status >= 200 && status < 300) {
    if (context.namesForeign) return `${status} for another account's id`;
    if (answer.contentType.startsWith('text/event-stream') || (status === 204 && answer.text === '')) return null;
    return parses(answer.text) ? null : `${status} with a body that is not JSON`;
  }
  if (status < 400) return `unexpected status ${status}`;
  return statusBodyProblem(status, answer.text);
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Null when `text` is a Status body `{code, message, details}` whose code maps to `status`. */
export function statusBodyProblem(status: number, text: string): string | null {
  let body: { code?: unknown; message?: unknown; details?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    return `${status} without a JSON Status body`;
  }
  if (typeof body !== 'object' || body === null || typeof body.code !== 'number' || typeof body.message !== 'string' || !Array.isArray(body.details)) {
    return `${status} body is not a Status {code, message, details}`;
  }
  const name = CODE_NAMES.get(body.code);
  if (!name) return `${status} with unknown code ${body.code}`;
  if (HTTP_STATUS[name] === status || EDGE_STATUSES[status]?.includes(name)) return null;
  return `${status} with code ${name} (${body.code}), which maps to ${HTTP_STATUS[name]}`;
}
