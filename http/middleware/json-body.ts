// Reads JSON request bodies with a size limit. Malformed JSON, nesting deeper
// than MAX_JSON_DEPTH, a wrong content type and an oversized body are
// INVALID_ARGUMENT (with 400, 400, 415 and 413).
// readLimited is exported for routes that take raw bytes.
import type Koa from 'koa';
import { InvalidArgumentError } from '../../src/errors';

function edgeError(message: string, httpStatus: number, field = '(body)'): InvalidArgumentError {
  return Object.assign(InvalidArgumentError.forField(field, message), { httpStatus, message });
}

export async function readLimited(ctx: Koa.Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw edgeError(`request body exceeds the ${limit}-byte limit`, 413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.destroy();
      throw edgeError(`request body exceeds the ${limit}-byte limit`, 413);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Deepest nesting of arrays and objects a JSON body may have (protobuf's default recursion limit). */
export const MAX_JSON_DEPTH = 100;

/** True when `value` nests arrays or objects deeper than `limit`; iterative, so any depth is safe to check. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

function hasBody(ctx: Koa.Context): boolean {
  return Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
}

/**
 * Reads and parses the JSON body of a request; undefined when there is none.
 * Called by routes that declare a body, so routes taking raw bytes (signed
 * upload URLs) read the stream themselves.
 */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  const type = ctx.get('content-type');
  if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) {
    throw edgeError(`content type must be application/json (got "${type || 'none'}")`, 415, 'Content-Type');
  }
  const raw = await readLimited(ctx, limitBytes);
  if (raw.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    // V8's message quotes the body around the error, which may be a secret value: keep only the position.
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    throw InvalidArgumentError.forField('(body)', `request body is not valid JSON${position ? ` (error at position ${position})` : ''}`);
  }
  // Validation and copying walk the body recursively: refuse what would overflow the stack.
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) throw InvalidArgumentError.forField('(body)', `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  return parsed;
}
