// The end of the middleware chain: a request no router answered. A path that
// some route serves with other methods is 405 Method Not Allowed with `Allow`
// (code UNIMPLEMENTED, as grpc-gateway answers it); any other path is 404.
import type Koa from 'koa';
import { NotFoundError, UnimplementedError } from '../../src/errors';
import type { HttpStatusOverride } from './errors';

/** What @koa/router leaves on the context: every layer whose path matched, across the routers passed. */
interface MatchedLayer {
  methods: string[];
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The methods the matched routes serve, in METHOD_ORDER (others after, as found). */
function allowedMethods(matched: readonly MatchedLayer[] | undefined): string[] {
  const methods = new Set((matched ?? []).flatMap((layer) => layer.methods));
  const rank = (method: string) => (METHOD_ORDER.includes(method) ? METHOD_ORDER.indexOf(method) : METHOD_ORDER.length);
  return [...methods].sort((a, b) => rank(a) - rank(b));
}

/** 405 for a known path's wrong method, 404 for an unknown path; placed after every router. */
export function noRoute(): Koa.Middleware {
  return async function noRoute(ctx) {
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const allowed = allowedMethods((ctx as { matched?: MatchedLayer[] }).matched);
    if (allowed.length === 0 || allowed.includes(ctx.method)) throw new NotFoundError(`no route for ${ctx.method} ${ctx.path}`);
    ctx.set('Allow', allowed.join(', '));
    const error = new UnimplementedError(`method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${allowed.join(', ')}`);
    throw Object.assign(error, { httpStatus: 405 } satisfies HttpStatusOverride);
  };
}
