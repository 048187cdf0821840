// The operations of the served OpenAPI document, read once into the shape the
// fuzz generator needs: parameters by location, the body schema, how the
// route finds its workspace and whether it streams.
import type { JsonSchema } from './schema-arbitrary';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

/** How a route finds its workspace (mirrors http/route.ts WorkspaceBinding). */
export type Binding = 'path' | 'flat' | 'none';

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI path template, e.g. `/v1/workspaces/{workspaceId}/agents/{id}`. */
  path: string;
  pathParams: Parameter[];
  query: Parameter[];
  headers: Parameter[];
  body?: JsonSchema;
  auth: 'bearer' | 'none';
  admin: boolean;
  stream: boolean;
  binding: Binding;
}

interface OpenApiOperation {
  operationId: string;
  parameters?: Parameter[];
  security?: unknown[];
  'x-admin-role'?: boolean;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

function bindingOf(path: string, headers: Parameter[]): Binding {
  if (path.startsWith('/v1/workspaces/{workspaceId}')) return 'path';
  return headers.some((header) => header.name.toLowerCase() === 'x-workspace-id') ? 'flat' : 'none';
}

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const parameters = operation.parameters ?? [];
      const headers = parameters.filter((parameter) => parameter.in === 'header');
      return {
        operationId: operation.operationId,
        method: method.toUpperCase() as Operation['method'],
        path,
        pathParams: parameters.filter((parameter) => parameter.in === 'path'),
        query: parameters.filter((parameter) => parameter.in === 'query'),
        headers,
        body: operation.requestBody?.content['application/json']?.schema,
        auth: operation.security?.length ? 'bearer' : 'none',
        admin: operation['x-admin-role'] === true,
        stream: Boolean(operation.responses['200']?.content?.['text/event-stream']),
        binding: bindingOf(path, headers),
      };
    }),
  );
}

/**
 * The kind of resource a path parameter names: the id prefix of its pattern
 * (`agent`, `agentvar`, `ws`, …), or `bundle` and `toolcall` for the two
 * parameters that are not prefixed ids.
 */
export function parameterKind(parameter: Parameter): string {
  const prefix = /^\^([a-z]+)_/.exec(parameter.schema.pattern ?? '')?.[1];
  if (prefix) return prefix;
  if (parameter.name === 'bundleKey') return 'bundle';
  if (parameter.name === 'toolCallId') return 'toolcall';
  return parameter.name;
}

/** True for methods that change state. */
export function isWrite(operation: Operation): boolean {
  return operation.method !== 'GET';
}
