// The OpenAPI 3.1 document, generated from the same route declarations that
// mount and validate the routes, so it cannot drift from what is served.
import type { TSchema } from '@sinclair/typebox';
import { StatusBody } from '../src/schemas/common.schema';
import type { RouteDefinition } from './route';

type JsonObject = Record<string, unknown>;

/** Where the node serves the document (http/routes/system.routes); the API reference page (/docs) reads it there. */
export const OPENAPI_DOCUMENT_PATH = '/v1/openapi.json';

/** Strips typebox's symbol keys (JSON.stringify drops them) to a plain JSON Schema. */
function plain(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

function parameters(schema: TSchema | undefined, location: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const object = plain(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }));
}

const errorResponse = { description: 'Error (Status body)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Status' } } } };

/**
 * A Server-Sent Events answer: OpenAPI 3.1 has no schema for a stream's items,
 * so the JSON of each `data:` line is given as `x-sse-data`.
 */
function eventStreamResponse(route: RouteDefinition): JsonObject {
  return {
    description: 'Server-Sent Events; each message\'s `data:` line is one JSON value of the schema in x-sse-data',
    content: { 'text/event-stream': { schema: { type: 'string' }, 'x-sse-data': plain(route.response) } },
  };
}

function operation(route: RouteDefinition): JsonObject {
  const headers: JsonObject[] = [];
  if (route.workspace === 'flat') {
    headers.push({ name: 'X-Workspace-Id', in: 'header', required: false, schema: { type: 'string' }, description: 'Required for the global key and users on flat paths' });
  }
  if (route.idempotent) headers.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
  if (route.produces === 'text/event-stream') {
    headers.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'The id: of the last event received; the stream resumes after it' });
  }
  if (route.conditional) headers.push({ name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'metadata.updatedAt of the version being changed' });
  return {
    operationId: route.operationId,
    summary: route.summary,
    'x-required-scope': route.scope,
    ...(route.admin ? { 'x-admin-role': true } : {}),
    security: route.auth === 'bearer' ? [{ bearer: [] }] : [],
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...headers],
    ...(route.body ? { requestBody: { required: false, content: { 'application/json': { schema: plain(route.body) } } } } : {}),
    responses: {
      200: route.produces === 'text/event-stream' ? eventStreamResponse(route) : { description: 'OK', content: { 'application/json': { schema: plain(route.response) } } },
      default: errorResponse,
    },
  };
}

/** Builds the OpenAPI 3.1 document for the mounted routes. */
export function buildOpenApiDocument(routes: RouteDefinition[], version: string): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'agentrt API', version, description: 'Agent runtime service. Every operation states its required scope in x-required-scope.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Status: plain(StatusBody) },
    },
  };
}
