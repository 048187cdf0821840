// Route declarations: every endpoint is declared once, with its path, scope,
// workspace binding and JSON Schemas (typebox). The same declaration mounts the
// Koa route, validates input at the edge and feeds the OpenAPI document.
import type { Static, TSchema } from '@sinclair/typebox';
import type Koa from 'koa';
import type { Principal } from '../src/auth/principal';
import type { Scope } from '../src/auth/scopes';
import type { WorkspaceRef } from '../src/auth/workspace-access';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route finds its workspace: `path` from the `{workspaceId}` parameter,
 * `flat` from the key's own workspace (or `X-Workspace-Id` for the global key
 * and users), `none` for account-level routes.
 */
export type WorkspaceBinding = 'path' | 'flat' | 'none';

/** Media types a route answers with on success. */
export type ResponseMediaType = 'application/json' | 'text/event-stream';

/** What a handler receives: validated input plus who is calling and where. */
export interface RouteRequest<Params, Query, Body> {
  params: Params;
  query: Query;
  body: Body;
  principal: Principal;
  /** Set for `path` and `flat` routes: the resolved, non-archived workspace. */
  workspace: WorkspaceRef;
  headers: Koa.Context['headers'];
  requestId: string;
  /** The Koa context, for the rare route that streams (SSE) or sets headers. */
  koa: Koa.Context;
}

export interface RouteOptions<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TSchema> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/v1/workspaces/{workspaceId}/agents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** The scope the route requires, or `none` for the scope-free routes. */
  scope: Scope | 'none';
  /** True for routes that need the admin role (section 5 item 5). */
  admin?: boolean;
  workspace: WorkspaceBinding;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  /** Accepts `Idempotency-Key` (POSTs that create, and commands such as an objective's messages). */
  idempotent?: boolean;
  /**
   * The success response's media type. `text/event-stream` routes stream on
   * `koa` themselves; `response` then describes the JSON of each `data:` line.
   * @default 'application/json'
   */
  produces?: ResponseMediaType;
  /** Accepts `If-Match: <updatedAt>` (PATCH of {metadata, spec, info} resources). */
  conditional?: boolean;
  /** Extra rate-limit cost for this call (default 1). */
  rateCost?: (query: Static<Q>) => number;
  /** `bearer` (default) or `none` for routes authenticated otherwise (signed URLs). */
  auth?: 'bearer' | 'none';
  /** A larger JSON body limit for this route (the configured limit applies when larger). */
  bodyLimitBytes?: number;
  /**
   * Read-only body paths of this resource besides `info` and the server-set
   * `metadata.*` (e.g. `status`, `spec.token`): ignored when a client sends them.
   */
  readOnlyFields?: readonly string[];
  /**
   * Checks, before the body is read, that what the path names beyond the
   * workspace (a parent such as the agent) is there for the caller: one who
   * may not see it gets its 404, never the body schema's complaints.
   */
  checkAccess?: (request: AccessRequest<Static<P>>) => Promise<void>;
  handler: (request: RouteRequest<Static<P>, Static<Q>, Static<B>>) => Promise<Static<R>>;
}

/** What a route's `checkAccess` receives: the validated path and the resolved workspace. */
export interface AccessRequest<Params> {
  params: Params;
  principal: Principal;
  /** Set for `path` and `flat` routes, as in RouteRequest. */
  workspace: WorkspaceRef;
}

/** A declared route with its types erased, as the app and OpenAPI builder see it. */
export interface RouteDefinition {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  scope: Scope | 'none';
  admin: boolean;
  workspace: WorkspaceBinding;
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  response: TSchema;
  idempotent: boolean;
  conditional: boolean;
  produces?: ResponseMediaType;
  auth: 'bearer' | 'none';
  bodyLimitBytes?: number;
  readOnlyFields?: readonly string[];
  rateCost?: (query: unknown) => number;
  checkAccess?: (request: AccessRequest<unknown>) => Promise<void>;
  handler: (request: RouteRequest<unknown, unknown, unknown>) => Promise<unknown>;
}

/** Declares a route; the handler's input types come from its schemas. */
export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema, R extends TSchema>(
  options: RouteOptions<P, Q, B, R>,
): RouteDefinition {
  return {
    ...options,
    admin: options.admin ?? false,
    idempotent: options.idempotent ?? false,
    conditional: options.conditional ?? false,
    auth: options.auth ?? 'bearer',
    rateCost: options.rateCost as RouteDefinition['rateCost'],
    checkAccess: options.checkAccess as RouteDefinition['checkAccess'],
    handler: options.handler as RouteDefinition['handler'],
  };
}

/** `/v1/a/{id}` → `/v1/a/:id` for @koa/router. */
export function toKoaPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
