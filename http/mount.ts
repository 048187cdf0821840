// Mounts declared routes on a Koa router. Each request runs the same ladder:
// authenticate, check scope and admin role, validate path and query,
// rate-limit, resolve the workspace and what else the path names, read and
// validate the body, apply Idempotency-Key, call the handler. Access comes
// before the body, so a caller without it never learns the body's schema.
// Authentication reads the workspace the request names together with the API
// key (one round trip); the ladder still authorizes it at step 5, in order.
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Authentication, Authenticator } from '../src/auth/authenticator';
import { principalKey, type Principal } from '../src/auth/principal';
import type { RateLimiter } from '../src/auth/rate-limiter';
import { scopeAllows } from '../src/auth/scopes';
import { authorizeWorkspace, flatWorkspaceId, WORKSPACE_HEADER, type WorkspaceRef } from '../src/auth/workspace-access';
import { AbortedError, InvalidArgumentError, PermissionDeniedError } from '../src/errors';
import { idPattern } from '../src/ids';
import type { IdempotencyStore } from '../src/ports/idempotency-store';
import { readJsonBody } from './middleware/json-body';
import { withoutReadOnlyFields } from './read-only-fields';
import { toKoaPath, type RouteDefinition } from './route';
import { compileValidator, type Validator } from './validation';

export interface MountDependencies {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  /** Loads a workspace by id (null when absent). */
  findWorkspace: (id: string) => Promise<WorkspaceRef | null>;
  bodyLimitBytes: number;
  includeInfoCost: number;
}

interface CompiledRoute {
  definition: RouteDefinition;
  params?: Validator;
  query?: Validator;
  body?: Validator;
}

function compile(definition: RouteDefinition): CompiledRoute {
  return {
    definition,
    params: definition.params && compileValidator(definition.params, 'path'),
    query: definition.query && compileValidator(definition.query, 'query'),
    body: definition.body && compileValidator(definition.body, 'body'),
  };
}

function authorize(definition: RouteDefinition, principal: Principal): void {
  if (definition.scope !== 'none' && !scopeAllows(principal.scopes, definition.scope)) {
    throw new PermissionDeniedError(`this credential lacks the ${definition.scope} scope`);
  }
  if (definition.admin && !principal.admin) throw new PermissionDeniedError('this operation needs the admin role');
}

const WORKSPACE_ID = new RegExp(idPattern('workspace'));

/**
 * The workspace a request names, read before validation so the credential
 * check can fetch it with the key: the path's id, or for flat paths the
 * header's (null: the key's own). Undefined (nothing fetched) outside
 * workspaces and for anything that is not a well-formed id, which validation
 * refuses or resolveWorkspace looks up as before.
 */
function namedWorkspaceId(route: RouteDefinition, ctx: Koa.Context): string | null | undefined {
  if (route.workspace === 'none') return undefined;
  const named = route.workspace === 'path' ? (ctx.params as Record<string, string>).workspaceId : ctx.get(WORKSPACE_HEADER);
  if (!named) return route.workspace === 'flat' ? null : undefined;
  return WORKSPACE_ID.test(named) ? named : undefined;
}

async function resolveWorkspace(route: RouteDefinition, ctx: Koa.Context, authentication: Authentication, params: Record<string, string>, deps: MountDependencies) {
  if (route.workspace === 'none') return undefined;
  const { principal, workspaceRead } = authentication;
  const id = route.workspace === 'path' ? params.workspaceId : flatWorkspaceId(principal, ctx.get(WORKSPACE_HEADER) || undefined);
  const workspace = workspaceRead?.id === id ? workspaceRead.workspace : await deps.findWorkspace(id);
  return authorizeWorkspace(principal, id, workspace);
}

/** The request an Idempotency-Key stands for; the workspace counts, as flat paths name it only in a header. */
function requestHash(ctx: Koa.Context, workspace: WorkspaceRef | undefined, body: unknown): string {
  return createHash('sha256').update(`${ctx.method} ${ctx.path} ${workspace?.id ?? ''}\n${JSON.stringify(body ?? null)}`).digest('hex');
}

/**
 * The request's Idempotency-Key, if it sent one: the key its response is kept
 * under here and, for a command, the command id the actor de-duplicates by
 * (so a retry is one command even after the kept response expired).
 */
export function idempotencyKeyOf(headers: Koa.Context['headers']): { idempotencyKey?: string } {
  const key = headers['idempotency-key'];
  const idempotencyKey = Array.isArray(key) ? key[0] : key;
  return idempotencyKey ? { idempotencyKey } : {};
}

/** Runs `produce` at most once per (principal, Idempotency-Key); repeats replay the first response. */
async function withIdempotency(
  ctx: Koa.Context,
  principal: Principal,
  workspace: WorkspaceRef | undefined,
  body: unknown,
  deps: MountDependencies,
  produce: () => Promise<unknown>,
) {
  const key = idempotencyKeyOf(ctx.headers).idempotencyKey;
  if (!key) return produce();
  if (key.length > 255) throw InvalidArgumentError.forField('Idempotency-Key', 'must be at most 255 characters');
  const owner = principalKey(principal);
  const hash = requestHash(ctx, workspace, body);
  const existing = await deps.idempotency.claim(owner, key, hash);
  if (existing) {
    if (existing.requestHash !== hash) throw InvalidArgumentError.forField('Idempotency-Key', 'was already used with a different request');
    if (existing.status === null) throw new AbortedError('a request with this Idempotency-Key is still in progress');
    ctx.set('Idempotent-Replayed', 'true');
    return existing.body;
  }
  try {
    const result = await produce();
    await deps.idempotency.complete(owner, key, 200, result);
    return result;
  } catch (error) {
    await deps.idempotency.release(owner, key);
    throw error;
  }
}

function handle(route: CompiledRoute, deps: MountDependencies): Koa.Middleware {
  const { definition } = route;
  return async function routeHandler(ctx) {
    ctx.state.routePath = definition.path;
    const authentication = definition.auth === 'bearer'
      ? await deps.authenticator.authenticate(ctx.get('authorization') || undefined, { accountHint: ctx.get('x-account-id') || undefined, workspaceId: namedWorkspaceId(definition, ctx) })
      : undefined;
    const principal = authentication?.principal;
    if (principal) {
      ctx.state.principal = principal;
      authorize(definition, principal);
    }
    const params = (route.params ? route.params({ ...ctx.params }) : ctx.params) as Record<string, string>;
    const query = route.query ? (route.query({ ...ctx.query }) as Record<string, unknown>) : {};
    if (principal) {
      const cost = query.includeInfo === true ? deps.includeInfoCost : (definition.rateCost?.(query) ?? 1);
      deps.rateLimiter.take(principalKey(principal), cost);
    }
    const workspace = authentication ? await resolveWorkspace(definition, ctx, authentication, params, deps) : undefined;
    if (definition.checkAccess && principal) await definition.checkAccess({ params, principal, workspace: workspace! });
    const rawBody = route.body ? await readJsonBody(ctx, Math.max(definition.bodyLimitBytes ?? 0, deps.bodyLimitBytes)) : undefined;
    const body = route.body ? route.body(withoutReadOnlyFields(rawBody ?? {}, definition.readOnlyFields)) : undefined;
    const run = () =>
      definition.handler({ params, query, body, principal: principal!, workspace: workspace!, headers: ctx.headers, requestId: ctx.state.requestId, koa: ctx });
    const result = definition.idempotent && principal ? await withIdempotency(ctx, principal, workspace, body, deps, run) : await run();
    if (result !== undefined && ctx.body === undefined) ctx.body = result;
  };
}

/** Mounts every route definition on the router. */
export function mountRoutes(router: Router, routes: RouteDefinition[], deps: MountDependencies): void {
  for (const definition of routes) {
    const method = definition.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](toKoaPath(definition.path), handle(compile(definition), deps));
  }
}
