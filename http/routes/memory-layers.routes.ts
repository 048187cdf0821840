// Memory layers and their entries (spec 4.7, api-decisions.md "Memory"): flat
// paths on the caller's workspace; reads need memory:read, writes memory:manage.
import { Type } from '@sinclair/typebox';
import type { MemoryEntryService } from '../../src/memory/memory-entry.service';
import type { MemoryLayerService } from '../../src/memory/memory-layer.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import {
  CreateMemoryEntryBody,
  CreateMemoryLayerBody,
  MemoryEntry,
  MemoryEntryDetail,
  MemoryLayer,
  MemoryLayerTypeSchema,
  UpdateMemoryEntryBody,
  UpdateMemoryLayerBody,
} from '../../src/schemas/memory.schema';
import { memoryLayerAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';

const LayerPath = PathIds({ id: 'memoryLayer' });
const EntriesPath = PathIds({ memoryLayerId: 'memoryLayer' });
const EntryPath = PathIds({ memoryLayerId: 'memoryLayer', id: 'memoryEntry' });
const LayerListQuery = Strict({ ...listParamProperties, type: Type.Optional(MemoryLayerTypeSchema) });
const EntryListQuery = Strict({ ...listParamProperties, prefix: Type.Optional(Type.String({ description: 'Key prefix (case-sensitive)' })) });
const DeleteLayerQuery = Strict({ force: Type.Optional(Type.Boolean({ description: 'Delete even while assigned to variations' })) });
/** An entry body holds up to 1 MiB of content, which JSON escaping can grow several times. */
const ENTRY_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export interface MemoryRoutesDependencies {
  memoryLayers: MemoryLayerService;
  memoryEntries: MemoryEntryService;
}

function layerRoutes(layers: MemoryLayerService): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/memory_layers', operationId: 'listMemoryLayers', summary: 'List memory layers',
      scope: 'memory:read', workspace: 'flat', query: LayerListQuery, response: ListOf(MemoryLayer),
      handler: ({ workspace, query }) =>
        layers.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), type: query.type }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: '/v1/memory_layers', operationId: 'createMemoryLayer', summary: 'Create a memory layer',
      scope: 'memory:manage', workspace: 'flat', body: CreateMemoryLayerBody, readOnlyFields: LAYER_READ_ONLY, response: MemoryLayer, idempotent: true,
      handler: ({ principal, workspace, body }) => layers.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: '/v1/memory_layers/{id}', operationId: 'getMemoryLayer', summary: 'Get a memory layer',
      scope: 'memory:read', workspace: 'flat', params: LayerPath, response: MemoryLayer,
      handler: ({ workspace, params }) => layers.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/memory_layers/{id}', operationId: 'updateMemoryLayer', summary: 'Update a memory layer (not a system-managed one)',
      scope: 'memory:manage', workspace: 'flat', params: LayerPath, body: UpdateMemoryLayerBody, readOnlyFields: LAYER_READ_ONLY, response: MemoryLayer, conditional: true,
      handler: ({ workspace, params, body, headers }) => layers.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/memory_layers/{id}', operationId: 'deleteMemoryLayer', summary: 'Delete a memory layer and its entries',
      scope: 'memory:manage', workspace: 'flat', params: LayerPath, query: DeleteLayerQuery, response: Empty,
      handler: async ({ workspace, params, query }) => (await layers.delete(workspace, params.id, query.force ?? false), {}),
    }),
  ];
}

function entryRoutes(entries: MemoryEntryService, layers: MemoryLayerService): RouteDefinition[] {
  const layerAccess = memoryLayerAccess(layers);
  return [
    defineRoute({
      method: 'GET', path: '/v1/memory_layers/{memoryLayerId}/entries', operationId: 'listMemoryEntries', summary: 'List the entries of a memory layer (without bodies)',
      scope: 'memory:read', workspace: 'flat', params: EntriesPath, query: EntryListQuery, response: ListOf(MemoryEntry),
      handler: ({ workspace, params, query }) =>
        entries.list(workspace, params.memoryLayerId, pageRequest(query), { keyPrefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: '/v1/memory_layers/{memoryLayerId}/entries', operationId: 'createMemoryEntry', summary: 'Create a memory entry from content or a COMPLETE upload',
      scope: 'memory:manage', workspace: 'flat', params: EntriesPath, checkAccess: layerAccess, body: CreateMemoryEntryBody, readOnlyFields: ENTRY_READ_ONLY, response: MemoryEntryDetail, idempotent: true,
      bodyLimitBytes: ENTRY_BODY_LIMIT_BYTES,
      handler: ({ principal, workspace, params, body }) => entries.create(principal, workspace, params.memoryLayerId, body),
    }),
    defineRoute({
      method: 'GET', path: '/v1/memory_layers/{memoryLayerId}/entries/{id}', operationId: 'getMemoryEntry', summary: 'Get a memory entry with its content',
      scope: 'memory:read', workspace: 'flat', params: EntryPath, response: MemoryEntryDetail,
      handler: ({ workspace, params }) => entries.get(workspace, params.memoryLayerId, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/memory_layers/{memoryLayerId}/entries/{id}', operationId: 'updateMemoryEntry', summary: 'Update a memory entry',
      scope: 'memory:manage', workspace: 'flat', params: EntryPath, checkAccess: layerAccess, body: UpdateMemoryEntryBody, readOnlyFields: ENTRY_READ_ONLY, response: MemoryEntryDetail, conditional: true,
      bodyLimitBytes: ENTRY_BODY_LIMIT_BYTES,
      handler: ({ workspace, params, body, headers }) => entries.update(workspace, params.memoryLayerId, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/memory_layers/{memoryLayerId}/entries/{id}', operationId: 'deleteMemoryEntry', summary: 'Delete a memory entry',
      scope: 'memory:manage', workspace: 'flat', params: EntryPath, response: Empty,
      handler: async ({ workspace, params }) => (await entries.delete(workspace, params.memoryLayerId, params.id), {}),
    }),
  ];
}

/** Server-set layer fields, ignored when a client sends them back. */
const LAYER_READ_ONLY = ['spec.systemManaged', 'spec.expiresAt'];
/** The resolved body of a MemoryEntryDetail: read-only at the top level (writes name `spec.content`). */
const ENTRY_READ_ONLY = ['content'];

export function memoryRoutes({ memoryLayers, memoryEntries }: MemoryRoutesDependencies): RouteDefinition[] {
  return [...layerRoutes(memoryLayers), ...entryRoutes(memoryEntries, memoryLayers)];
}
