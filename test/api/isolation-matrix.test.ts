// The isolation matrix (issue 12 item 4, security-reliability.md section 1
// API1/API2/API5): every mounted route x every principal kind, the expected
// answer derived from the route's declaration (scope, admin, workspace binding)
// and the rules of api-decisions.md, and no answer carrying another tenant's
// ids or names. The routes come from `allRoutes`, the list the app mounts and
// the OpenAPI document describes; a route without a row in ROWS fails here.
//
// Two accounts (A, B) with two workspaces each (A1, A2, B1, B2), every kind of
// resource seeded in each, and a fifth, archived workspace A3. Requests target
// A1's resources. Denials are sent with the shared resources; an allowed call
// to a route that destroys or consumes its resource gets fresh ones (`fresh`),
// and one that acts on the caller's own credential (the global key's rotate
// and disable) is made by the global key of a throwaway account.
import assert from 'node:assert/strict';
import { allRoutes } from '../../http/route-table';
import type { RouteDefinition } from '../../http/route';
import { scopeAllows, type Scope } from '../../src/auth/scopes';
import { newUlid } from '../../src/ids';
import { startTestApi, type ApiResponse, type TestApi } from '../support/api';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import {
  algNone, createKey, forged, ok, seedAccount, seedWorkspace, singleScopes, SLEEPING_SCRIPT, tag,
  type PrincipalSpec, type SeededAccount, type SeededWorkspace,
} from '../support/isolation-world';

type Params = Record<string, string>;

interface Row {
  /** Path parameters beyond the defaults taken from A1 by name (agentId, variationId, ...). */
  ids?: (w: SeededWorkspace) => Params;
  query?: string;
  /** The body; `u` is unique per request (names of created resources). */
  body?: (u: string, w: SeededWorkspace) => unknown;
  /** Fresh resources of A1 for a call that is allowed (destructive or consuming routes). */
  fresh?: (u: string) => Promise<Params>;
  /** The answer an allowed call gets (default 200). */
  allowed?: { status: number; code: number };
  /** Acts on the calling credential itself: allowed calls use a throwaway account's global key. */
  selfDestructive?: boolean;
}

const SCHEDULE_SPEC = { initialMessage: 'SAY scheduled', schedule: { intervals: [{ every: '24h' }], timezone: 'Europe/Berlin' } };
const FAILED_PRECONDITION = { status: 400, code: 9 };
const LABELS = { metadata: { labels: { matrix: 'yes' } } };
/** The spec of a workspace model served through `aiProviderKeyId`. */
const workspaceModelSpec = (aiProviderKeyId: string) => ({ aiProviderKeyId, upstreamModel: 'matrix-upstream', maxInputTokens: 8192, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' });
/** A body every route's schema refuses (not even an object). */
const INVALID_BODY = ['not', 'an', 'object'];

describe('isolation matrix: every route x every principal', function () {
  this.timeout(120_000);
  let api: TestApi;
  let tools: TestToolServer;
  let accountA: SeededAccount;
  let accountB: SeededAccount;
  /** A1, the target of every request. */
  let w: SeededWorkspace;
  let others: { a2: SeededWorkspace; b1: SeededWorkspace; b2: SeededWorkspace };
  let archivedWorkspaceId: string;
  let principals: PrincipalSpec[];
  const sleepingObjectives: string[] = [];

  // Fresh resources of A1, made with A's global key.
  const a1 = (method: string, path: string, body?: unknown) => ok(api, accountA.globalToken, w.workspaceId, method, path, body);
  const wsPath = () => `/v1/workspaces/${w.workspaceId}`;
  const freshAgent = async (u: string) => (await a1('POST', `${wsPath()}/agents`, { metadata: { name: `fresh-agent-${u}` } })).metadata.id as string;
  const freshVariation = async (u: string) =>
    (await a1('POST', `${wsPath()}/agents/${w.agentId}/variations`, { metadata: { name: `fresh-var-${u}` }, spec: { modelConfig: { modelId: 'builtin/scripted' } } })).metadata.id as string;
  const freshTool = async (u: string) =>
    (await a1('POST', `${wsPath()}/tools`, { metadata: { name: `fresh_tool_${u}` }, spec: { http: { url: tools.url, method: 'POST' } } })).metadata.id as string;
  const freshWidget = async (u: string) => (await a1('POST', `${wsPath()}/widgets`, {
    metadata: { name: `fresh-widget-${u}` }, spec: { agentId: w.agentId, hostname: `fresh-${u}.matrix.example.com`.toLowerCase(), allowedOrigins: ['https://matrix.example.com'] },
  })).metadata.id as string;
  const freshToolSet = async (u: string) => (await a1('POST', `${wsPath()}/tool_sets`, { metadata: { name: `fresh-set-${u}` } })).metadata.id as string;
  const freshLayer = async (u: string) =>
    (await a1('POST', '/v1/memory_layers', { metadata: { name: `fresh-layer-${u}` }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } })).metadata.id as string;
  const freshWorkspace = async (u: string) => (await a1('POST', '/v1/account/workspaces', { metadata: { name: `fresh-ws-${u}` } })).metadata.id as string;
  const freshSleeping = async () => {
    const objective = await a1('POST', `${wsPath()}/objectives`, { agentId: w.runnerAgentId, initialMessage: SLEEPING_SCRIPT });
    sleepingObjectives.push(objective.metadata.id);
    return objective.metadata.id as string;
  };
  const variationRows = (base: (params: string) => string, param: 'variationId' | 'agentVariationId'): Record<string, Row> => ({
    [`POST ${base('')}/assignments`]: { body: (_u, ws) => ({ toolId: ws.toolId }), fresh: async (u) => ({ [param]: await freshVariation(u) }) },
    [`DELETE ${base('')}/assignments/{id}`]: {
      ids: (ws) => ({ id: ws.toolAssignmentId }),
      fresh: async (u) => {
        const variationId = await freshVariation(u);
        const assignment = await a1('POST', `${wsPath()}/agents/${w.agentId}/variations/${variationId}/assignments`, { toolId: w.toolId });
        return { [param]: variationId, id: assignment.id };
      },
    },
    [`POST ${base('')}/memory_layer_assignments`]: { body: (_u, ws) => ({ memoryLayerId: ws.layerId }), fresh: async (u) => ({ [param]: await freshVariation(u) }) },
    [`PATCH ${base('')}/memory_layer_assignments/{id}`]: { ids: (ws) => ({ id: ws.layerAssignmentId }), body: () => ({ position: 0 }) },
    [`DELETE ${base('')}/memory_layer_assignments/{id}`]: {
      ids: (ws) => ({ id: ws.layerAssignmentId }),
      fresh: async (u) => {
        const variationId = await freshVariation(u);
        const assignment = await a1('POST', `${wsPath()}/agents/${w.agentId}/variations/${variationId}/memory_layer_assignments`, { memoryLayerId: w.layerId });
        return { [param]: variationId, id: assignment.id };
      },
    },
  });

  /** One row per mounted route: how to reach it with A1's resources. */
  const ROWS = (): Record<string, Row> => ({
    // account (workspace binding none; admin)
    'GET /v1/account': {},
    'GET /v1/profile': {},
    'POST /v1/account/rotate_webhook_signing_key': {},
    'GET /v1/account/global_api_key': {},
    'PUT /v1/account/global_api_key/rotate': { body: () => ({}), selfDestructive: true },
    'PUT /v1/account/global_api_key/enable': {},
    'PUT /v1/account/global_api_key/disable': { selfDestructive: true },
    'GET /v1/account/workspaces': {},
    'POST /v1/account/workspaces': { body: (u) => ({ metadata: { name: `created-ws-${u}` } }) },
    'GET /v1/account/workspaces/{workspaceId}': {},
    'PATCH /v1/account/workspaces/{workspaceId}': { body: () => ({ spec: { description: 'matrix' } }) },
    'DELETE /v1/account/workspaces/{workspaceId}': { fresh: async (u) => ({ workspaceId: await freshWorkspace(u) }) },
    'GET /v1/account/workspaces/{workspaceId}/members': {},
    'POST /v1/account/workspaces/{workspaceId}/members': {
      body: (_u, ws) => ({ profileId: ws.account.profileId }), fresh: async (u) => ({ workspaceId: await freshWorkspace(u) }),
    },
    'DELETE /v1/account/workspaces/{workspaceId}/members/{profileId}': {
      fresh: async (u) => {
        const workspaceId = await freshWorkspace(u);
        await a1('POST', `/v1/account/workspaces/${workspaceId}/members`, { profileId: w.account.profileId });
        return { workspaceId };
      },
    },
    'GET /v1/account/profiles': {},
    'GET /v1/cluster': {},
    // API keys
    'GET /v1/api_keys': {},
    'POST /v1/api_keys': { body: (u) => ({ metadata: { name: `created-key-${u}` }, spec: { permissions: [] } }) },
    'GET /v1/api_keys/{id}': { ids: (ws) => ({ id: ws.targetKeyId }) },
    'PATCH /v1/api_keys/{id}': { ids: (ws) => ({ id: ws.targetKeyId }), body: () => LABELS },
    'DELETE /v1/api_keys/{id}': {
      ids: (ws) => ({ id: ws.targetKeyId }),
      fresh: async (u) => ({ id: (await a1('POST', '/v1/api_keys', { metadata: { name: `fresh-key-${u}` }, spec: { permissions: [] } })).metadata.id }),
    },
    'PUT /v1/api_keys/{id}/rotate': { ids: (ws) => ({ id: ws.targetKeyId }), body: () => ({}) },
    'PUT /v1/api_keys/{id}/enable': { ids: (ws) => ({ id: ws.targetKeyId }), body: () => ({}) },
    'PUT /v1/api_keys/{id}/disable': { ids: (ws) => ({ id: ws.targetKeyId }), body: () => ({}) },
    'GET /v1/workspaces/{workspaceId}/api_keys': {},
    'POST /v1/workspaces/{workspaceId}/api_keys': { body: (u) => ({ metadata: { name: `created-key-${u}` }, spec: { permissions: [] } }) },
    // tenants, subjects, search
    'GET /v1/workspaces/{workspaceId}/tenants': {},
    'GET /v1/workspaces/{workspaceId}/tenants/{id}': { ids: (ws) => ({ id: ws.tenantId }) },
    'DELETE /v1/workspaces/{workspaceId}/tenants/{id}': {
      ids: (ws) => ({ id: ws.tenantId }),
      fresh: async (u) => ({ id: (await api.services.tenants.upsertTenant(w.ref, { externalId: `fresh-tenant-${u}` })).id }),
    },
    'GET /v1/workspaces/{workspaceId}/tenants/{tenantId}/subjects': {},
    'GET /v1/workspaces/{workspaceId}/subjects/{id}': { ids: (ws) => ({ id: ws.subjectId }) },
    'DELETE /v1/workspaces/{workspaceId}/subjects/{id}': {
      ids: (ws) => ({ id: ws.subjectId }),
      fresh: async (u) => ({ id: (await api.services.tenants.upsertSubject(w.ref, w.tenantId, { externalId: `fresh-subject-${u}` })).id }),
    },
    'GET /v1/workspaces/{workspaceId}/erasures/{id}': { ids: (ws) => ({ id: ws.erasureId! }) },
    'GET /v1/workspaces/{workspaceId}/search': { query: 'query=agent' },
    // memory
    'GET /v1/memory_layers': {},
    'POST /v1/memory_layers': { body: (u) => ({ metadata: { name: `created-layer-${u}` }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } }) },
    'GET /v1/memory_layers/{id}': { ids: (ws) => ({ id: ws.layerId }) },
    'PATCH /v1/memory_layers/{id}': { ids: (ws) => ({ id: ws.layerId }), body: () => LABELS },
    'DELETE /v1/memory_layers/{id}': { ids: (ws) => ({ id: ws.layerId }), fresh: async (u) => ({ id: await freshLayer(u) }) },
    'GET /v1/memory_layers/{memoryLayerId}/entries': {},
    'POST /v1/memory_layers/{memoryLayerId}/entries': { body: (u) => ({ spec: { key: `created-entry-${u}`, content: 'x' } }) },
    'GET /v1/memory_layers/{memoryLayerId}/entries/{id}': { ids: (ws) => ({ id: ws.entryId }) },
    'PATCH /v1/memory_layers/{memoryLayerId}/entries/{id}': { ids: (ws) => ({ id: ws.entryId }), body: () => ({ spec: { content: 'patched' } }) },
    'DELETE /v1/memory_layers/{memoryLayerId}/entries/{id}': {
      ids: (ws) => ({ id: ws.entryId }),
      fresh: async (u) => ({ id: (await a1('POST', `/v1/memory_layers/${w.layerId}/entries`, { spec: { key: `fresh-entry-${u}`, content: 'x' } })).metadata.id }),
    },
    // uploads
    'POST /v1/uploads': { body: (u) => ({ filename: `created-${u}.txt`, contentType: 'text/plain', sizeBytes: 4 }) },
    'GET /v1/uploads/{id}': { ids: (ws) => ({ id: ws.uploadId }) },
    // No bytes were PUT: completing is refused after every access check passed.
    'POST /v1/uploads/{id}/complete': { ids: (ws) => ({ id: ws.uploadId }), allowed: FAILED_PRECONDITION },
    // Authenticated by its signed URL, not a bearer token (see the separate test below).
    'PUT /v1/uploads/{id}/content': { ids: (ws) => ({ id: ws.uploadId }), query: 'expires=1&signature=forged' },
    // secrets and provider keys
    'GET /v1/workspace_secrets': {},
    'POST /v1/workspace_secrets': { body: (u) => ({ metadata: { name: `CREATED_${u.toUpperCase()}` }, spec: { value: 'v' } }) },
    'GET /v1/workspace_secrets/{id}': { ids: (ws) => ({ id: ws.secretId }) },
    'PATCH /v1/workspace_secrets/{id}': { ids: (ws) => ({ id: ws.secretId }), body: () => LABELS },
    'DELETE /v1/workspace_secrets/{id}': {
      ids: (ws) => ({ id: ws.secretId }),
      fresh: async (u) => ({ id: (await a1('POST', '/v1/workspace_secrets', { metadata: { name: `FRESH_${u.toUpperCase()}` }, spec: { value: 'v' } })).metadata.id }),
    },
    'GET /v1/workspaces/{workspaceId}/ai_provider_keys': {},
    'POST /v1/workspaces/{workspaceId}/ai_provider_keys': { body: (u) => ({ metadata: { name: `created-pk-${u}` }, spec: { apiKey: 'sk-matrix' } }) },
    'GET /v1/workspaces/{workspaceId}/ai_provider_keys/{id}': { ids: (ws) => ({ id: ws.providerKeyId }) },
    'PATCH /v1/workspaces/{workspaceId}/ai_provider_keys/{id}': { ids: (ws) => ({ id: ws.providerKeyId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/ai_provider_keys/{id}': {
      ids: (ws) => ({ id: ws.providerKeyId }),
      fresh: async (u) => ({ id: (await a1('POST', `${wsPath()}/ai_provider_keys`, { metadata: { name: `fresh-pk-${u}` }, spec: { apiKey: 'sk-x' } })).metadata.id }),
    },
    // models
    'GET /v1/models': {},
    'GET /v1/models/{id}': { ids: (ws) => ({ id: ws.modelId }) },
    'PUT /v1/models/{id}/status': { ids: (ws) => ({ id: ws.modelId }), body: () => ({ status: 'MODEL_STATUS_ENABLED' }) },
    'GET /v1/workspaces/{workspaceId}/models': {},
    'POST /v1/workspaces/{workspaceId}/models': { body: (u, ws) => ({ metadata: { name: `matrix/created-${u}` }, spec: workspaceModelSpec(ws.providerKeyId) }) },
    'GET /v1/workspaces/{workspaceId}/models/{id}': { ids: (ws) => ({ id: ws.workspaceModelId }) },
    'PATCH /v1/workspaces/{workspaceId}/models/{id}': { ids: (ws) => ({ id: ws.workspaceModelId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/models/{id}': {
      ids: (ws) => ({ id: ws.workspaceModelId }),
      fresh: async (u) => ({ id: (await a1('POST', `${wsPath()}/models`, { metadata: { name: `matrix/fresh-${u}` }, spec: workspaceModelSpec(w.providerKeyId) })).metadata.id }),
    },
    // agents, variations, assignments
    'GET /v1/workspaces/{workspaceId}/agents': {},
    'POST /v1/workspaces/{workspaceId}/agents': { body: (u) => ({ metadata: { name: `created-agent-${u}` } }) },
    'GET /v1/workspaces/{workspaceId}/agents/{id}': { ids: (ws) => ({ id: ws.agentId }) },
    'PATCH /v1/workspaces/{workspaceId}/agents/{id}': { ids: (ws) => ({ id: ws.agentId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/agents/{id}': { ids: (ws) => ({ id: ws.agentId }), fresh: async (u) => ({ id: await freshAgent(u) }) },
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/feedback': {},
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/variations': {},
    'POST /v1/workspaces/{workspaceId}/agents/{agentId}/variations': { body: (u) => ({ metadata: { name: `created-var-${u}` } }) },
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }) },
    'PATCH /v1/workspaces/{workspaceId}/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }), fresh: async (u) => ({ id: await freshVariation(u) }) },
    ...variationRows(() => '/v1/workspaces/{workspaceId}/agents/{agentId}/variations/{variationId}', 'variationId'),
    'GET /v1/agents/{agentId}/variations': {},
    'POST /v1/agents/{agentId}/variations': { body: (u) => ({ metadata: { name: `created-var-${u}` } }) },
    'GET /v1/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }) },
    'PATCH /v1/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }), body: () => LABELS },
    'DELETE /v1/agents/{agentId}/variations/{id}': { ids: (ws) => ({ id: ws.variationId }), fresh: async (u) => ({ id: await freshVariation(u) }) },
    ...variationRows(() => '/v1/agent_variations/{agentVariationId}', 'agentVariationId'),
    // schedules
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/schedules': { ids: (ws) => ({ agentId: ws.runnerAgentId }) },
    'POST /v1/workspaces/{workspaceId}/agents/{agentId}/schedules': { ids: (ws) => ({ agentId: ws.runnerAgentId }), body: (u) => ({ metadata: { name: `created-sched-${u}` }, spec: SCHEDULE_SPEC }) },
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/schedules/{id}': { ids: (ws) => ({ agentId: ws.runnerAgentId, id: ws.scheduleId }) },
    'PATCH /v1/workspaces/{workspaceId}/agents/{agentId}/schedules/{id}': { ids: (ws) => ({ agentId: ws.runnerAgentId, id: ws.scheduleId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/agents/{agentId}/schedules/{id}': {
      ids: (ws) => ({ agentId: ws.runnerAgentId, id: ws.scheduleId }),
      fresh: async (u) => ({ id: (await a1('POST', `${wsPath()}/agents/${w.runnerAgentId}/schedules`, { metadata: { name: `fresh-sched-${u}` }, spec: SCHEDULE_SPEC })).metadata.id }),
    },
    'POST /v1/workspaces/{workspaceId}/agents/{agentId}/schedules/{id}/trigger': { ids: (ws) => ({ agentId: ws.runnerAgentId, id: ws.scheduleId }), body: () => ({}) },
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/schedules/{id}/upcoming': { ids: (ws) => ({ agentId: ws.runnerAgentId, id: ws.scheduleId }) },
    // tools and tool sets
    // widgets
    'GET /v1/workspaces/{workspaceId}/widgets': {},
    'POST /v1/workspaces/{workspaceId}/widgets': {
      body: (u, ws) => ({ metadata: { name: `created-widget-${u}` }, spec: { agentId: ws.agentId, hostname: `created-${u}.matrix.example.com`.toLowerCase(), allowedOrigins: ['https://matrix.example.com'] } }),
    },
    'GET /v1/workspaces/{workspaceId}/widgets/{id}': { ids: (ws) => ({ id: ws.widgetId }) },
    'PATCH /v1/workspaces/{workspaceId}/widgets/{id}': { ids: (ws) => ({ id: ws.widgetId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/widgets/{id}': { ids: (ws) => ({ id: ws.widgetId }), fresh: async (u) => ({ id: await freshWidget(u) }) },
    'POST /v1/workspaces/{workspaceId}/widgets/{widgetId}/sessions': { ids: (ws) => ({ widgetId: ws.widgetId }), body: () => ({}) },
    'DELETE /v1/workspaces/{workspaceId}/widgets/{widgetId}/sessions/{sessionId}': {
      ids: (ws) => ({ widgetId: ws.widgetId, sessionId: ws.widgetSessionId }),
      fresh: async () => ({ sessionId: (await a1('POST', `${wsPath()}/widgets/${w.widgetId}/sessions`, {})).sessionId }),
    },
    'GET /v1/workspaces/{workspaceId}/tools': {},
    'POST /v1/workspaces/{workspaceId}/tools': { body: (u) => ({ metadata: { name: `created_tool_${u}` }, spec: { http: { url: tools.url, method: 'POST' } } }) },
    'GET /v1/workspaces/{workspaceId}/tools/{id}': { ids: (ws) => ({ id: ws.toolId }) },
    'PATCH /v1/workspaces/{workspaceId}/tools/{id}': { ids: (ws) => ({ id: ws.toolId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/tools/{id}': { ids: (ws) => ({ id: ws.toolId }), fresh: async (u) => ({ id: await freshTool(u) }) },
    'GET /v1/workspaces/{workspaceId}/tool_sets': {},
    'POST /v1/workspaces/{workspaceId}/tool_sets': { body: (u) => ({ metadata: { name: `created-set-${u}` } }) },
    'GET /v1/workspaces/{workspaceId}/tool_sets/{id}': { ids: (ws) => ({ id: ws.toolSetId }) },
    'PATCH /v1/workspaces/{workspaceId}/tool_sets/{id}': { ids: (ws) => ({ id: ws.toolSetId }), body: () => LABELS },
    'DELETE /v1/workspaces/{workspaceId}/tool_sets/{id}': { ids: (ws) => ({ id: ws.toolSetId }), fresh: async (u) => ({ id: await freshToolSet(u) }) },
    'POST /v1/workspaces/{workspaceId}/tool_sets/{id}/tools': {
      ids: (ws) => ({ id: ws.toolSetId }), body: (_u, ws) => ({ toolId: ws.toolId }), fresh: async (u) => ({ id: await freshToolSet(u) }),
    },
    'DELETE /v1/workspaces/{workspaceId}/tool_sets/{id}/tools/{toolId}': {
      ids: (ws) => ({ id: ws.toolSetId }),
      fresh: async (u) => {
        const id = await freshToolSet(u);
        await a1('POST', `${wsPath()}/tool_sets/${id}/tools`, { toolId: w.toolId });
        return { id };
      },
    },
    'POST /v1/workspaces/{workspaceId}/tool_sets/{id}/sync': { ids: (ws) => ({ id: ws.toolSetId }), body: () => ({}), allowed: FAILED_PRECONDITION },
    // bundles
    'PUT /v1/workspaces/{workspaceId}/bundles/{bundleKey}': {
      // Agents only: a bundle holding tools needs the tools scopes too (beyond the declaration).
      body: (u) => ({ agents: [{ metadata: { name: `bundled-${u}` }, spec: {} }] }),
      fresh: async (u) => ({ bundleKey: `fresh-bundle-${u}` }),
    },
    'GET /v1/workspaces/{workspaceId}/bundles/{bundleKey}': {},
    'DELETE /v1/workspaces/{workspaceId}/bundles/{bundleKey}': {
      fresh: async (u) => {
        await a1('PUT', `${wsPath()}/bundles/fresh-bundle-${u}`, { agents: [{ metadata: { name: `fresh-bundled-${u}` }, spec: {} }] });
        return { bundleKey: `fresh-bundle-${u}` };
      },
    },
    // objectives (embedded runtime)
    'POST /v1/workspaces/{workspaceId}/objectives': { body: (_u, ws) => ({ agentId: ws.runnerAgentId, initialMessage: 'SAY hello' }) },
    'GET /v1/workspaces/{workspaceId}/objectives': {},
    'GET /v1/workspaces/{workspaceId}/objectives/{id}': { ids: (ws) => ({ id: ws.completedObjectiveId! }) },
    'POST /v1/workspaces/{workspaceId}/objectives/{id}/messages': { ids: (ws) => ({ id: ws.sleepingObjectiveId! }), body: () => ({ content: 'SAY more' }) },
    'POST /v1/workspaces/{workspaceId}/objectives/{id}/cancel': {
      ids: (ws) => ({ id: ws.sleepingObjectiveId! }), body: () => ({}), fresh: async () => ({ id: await freshSleeping() }),
    },
    // The tool call of the completed objective is no longer awaiting approval.
    'PUT /v1/workspaces/{workspaceId}/objectives/{id}/tool_calls/{toolCallId}/approve': { ids: (ws) => ({ id: ws.completedObjectiveId! }), body: () => ({}), allowed: FAILED_PRECONDITION },
    'PUT /v1/workspaces/{workspaceId}/objectives/{id}/tool_calls/{toolCallId}/deny': { ids: (ws) => ({ id: ws.completedObjectiveId! }), body: () => ({}), allowed: FAILED_PRECONDITION },
    'POST /v1/workspaces/{workspaceId}/objectives/{id}/feedback': { ids: (ws) => ({ id: ws.completedObjectiveId! }), body: () => ({ rating: 'FEEDBACK_RATING_POSITIVE' }) },
    'GET /v1/workspaces/{workspaceId}/objectives/{id}/events': { ids: (ws) => ({ id: ws.completedObjectiveId! }) },
    'GET /v1/workspaces/{workspaceId}/objectives/{id}/events/stream': { ids: (ws) => ({ id: ws.completedObjectiveId! }) },
    // usage roll-ups
    'GET /v1/workspaces/{workspaceId}/usage': { query: 'groupBy=agent' },
    // webhook deliveries (a PENDING delivery: a retry is refused after every access check passed)
    'GET /v1/workspaces/{workspaceId}/agents/{agentId}/webhook_deliveries': { ids: (ws) => ({ agentId: ws.hooksAgentId }) },
    'POST /v1/workspaces/{workspaceId}/agents/{agentId}/webhook_deliveries/{id}/retry': {
      ids: (ws) => ({ agentId: ws.hooksAgentId, id: ws.deliveryId! }), body: () => ({}), allowed: FAILED_PRECONDITION,
    },
  });

  const routeName = (route: RouteDefinition) => `${route.method} ${route.path}`;
  const pathParams = (route: RouteDefinition) => [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => match[1]);
  /**
   * The path parameters that name a parent: a resource whose sub-collection
   * the path goes into (`.../agents/{agentId}/variations`). Such a parent is
   * checked before the body, as the workspace is (actions such as `/cancel`
   * act on the resource itself, found by the handler).
   */
  const SUB_COLLECTIONS = new Set(['variations', 'assignments', 'memory_layer_assignments', 'entries', 'tools', 'schedules', 'messages', 'feedback', 'tool_calls', 'webhook_deliveries', 'members', 'sessions']);
  const parentParams = (route: RouteDefinition) => [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}\/([a-z_]+)/g)]
    .filter((match) => SUB_COLLECTIONS.has(match[2]) && !(match[1] === 'workspaceId' && route.workspace === 'path'))
    .map((match) => match[1]);

  /** What a principal is owed on a route: `allowed` or a refusal, from the declaration and api-decisions.md. */
  type Expected = { kind: 'allowed' } | { kind: 'refused'; status: number; code: number; message?: RegExp; resourceLevel?: boolean };
  function expected(route: RouteDefinition, principal: PrincipalSpec): Expected {
    if (!principal.valid) return { kind: 'refused', status: 401, code: 16 };
    if (route.scope !== 'none' && !scopeAllows(principal.scopes, route.scope as Scope)) {
      return { kind: 'refused', status: 403, code: 7, message: new RegExp(`^this credential lacks the ${route.scope} scope$`) };
    }
    if (route.admin && !principal.admin) return { kind: 'refused', status: 403, code: 7, message: /needs the admin role/ };
    const archived = (id: string) => id === archivedWorkspaceId;
    const accountOf = (id: string) => (id === w.workspaceId || id === others.a2.workspaceId || archived(id) ? 'A' : 'B');
    const params = pathParams(route);
    if (route.workspace === 'none') {
      // Account routes naming a workspace of A: another account's is NOT_FOUND.
      if (params.includes('workspaceId') && principal.account !== 'A') return { kind: 'refused', status: 404, code: 5 };
      return { kind: 'allowed' };
    }
    let target: string;
    if (route.workspace === 'path') {
      target = principal.pathWorkspaceId ?? w.workspaceId;
    } else {
      if (principal.workspaceId && principal.header && principal.header !== principal.workspaceId) {
        return { kind: 'refused', status: 403, code: 7, message: /another workspace/ };
      }
      const named = principal.workspaceId ?? principal.header;
      if (!named) return { kind: 'refused', status: 400, code: 3, message: /X-Workspace-Id/ };
      target = named;
    }
    if (accountOf(target) !== principal.account) return { kind: 'refused', status: 404, code: 5, message: /^workspace .* not found/ };
    if (principal.workspaceId && principal.workspaceId !== target) return { kind: 'refused', status: 403, code: 7, message: /another workspace/ };
    if (archived(target)) return { kind: 'refused', status: 403, code: 7, message: /archived/ };
    // A flat path in another workspace: A1's ids are not found there; lists and creates act there.
    // (The resource itself, not access to where it lives: found by the handler, after the body is validated.)
    if (target !== w.workspaceId) return params.length > 0 ? { kind: 'refused', status: 404, code: 5, message: / not found/, resourceLevel: true } : { kind: 'allowed' };
    return { kind: 'allowed' };
  }

  /** The path to `route` with the ids of `seeded` (A1's by default), in A1 (or the principal's path workspace) when the path names one. */
  function fillPath(route: RouteDefinition, principal: PrincipalSpec, row: Row, overrides: Params, seeded: SeededWorkspace = w): string {
    const defaults: Params = {
      workspaceId: route.workspace === 'path' ? (principal.pathWorkspaceId ?? w.workspaceId) : seeded.workspaceId,
      agentId: seeded.agentId, variationId: seeded.variationId, agentVariationId: seeded.variationId, memoryLayerId: seeded.layerId, tenantId: seeded.tenantId,
      toolCallId: seeded.toolCallId ?? '', toolId: seeded.toolId, profileId: seeded.account.profileId, bundleKey: seeded.bundleKey,
    };
    const values = { ...defaults, ...row.ids?.(seeded), ...overrides };
    const path = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
      assert.ok(values[name], `${routeName(route)}: no value for {${name}}`);
      return encodeURIComponent(values[name]);
    });
    return row.query ? `${path}?${row.query}` : path;
  }

  /** The ids and names a principal may never see: the other account's, and for a workspace key the other workspaces'. */
  function forbiddenFor(principal: PrincipalSpec): Set<string> {
    const sets = principal.account === 'A' ? [others.b1, others.b2] : principal.account === 'B' ? [w, others.a2] : [w, others.a2, others.b1, others.b2];
    const forbidden = new Set(sets.flatMap((seeded) => [...seeded.secrets]));
    const accountOther = principal.account === 'A' ? accountB : principal.account === 'B' ? accountA : undefined;
    for (const value of accountOther ? [accountOther.accountId, accountOther.accountName, accountOther.profileId, accountOther.globalKeyId] : []) forbidden.add(value);
    if (!principal.account) for (const value of [accountA.accountId, accountB.accountId, accountA.accountName, accountB.accountName]) forbidden.add(value);
    if (principal.workspaceId) {
      for (const seeded of [w, others.a2, others.b1, others.b2]) if (seeded.workspaceId !== principal.workspaceId) for (const value of seeded.secrets) forbidden.add(value);
    }
    return forbidden;
  }

  interface Cell {
    route: RouteDefinition;
    principal: PrincipalSpec;
    expectation: Expected;
  }
  const failures: string[] = [];
  let sent = 0;

  async function run(cell: Cell, rows: Record<string, Row>): Promise<void> {
    const { route, expectation } = cell;
    let { principal } = cell;
    const row = rows[routeName(route)];
    const u = tag();
    let overrides: Params = {};
    if (expectation.kind === 'allowed' && row.fresh) overrides = await row.fresh(u);
    if (expectation.kind === 'allowed' && row.selfDestructive) {
      const throwaway = await seedAccount(api, `throwaway-${u}`);
      principal = { ...principal, name: `${principal.name} (a throwaway account's global key)`, token: throwaway.globalToken };
    }
    const path = fillPath(route, principal, row, overrides);
    const body = row.body?.(u, w) ?? (['POST', 'PUT', 'PATCH'].includes(route.method) && route.body ? {} : undefined);
    const headers: Record<string, string> = principal.header ? { 'x-workspace-id': principal.header } : {};
    let response: ApiResponse;
    try {
      response = await api.request(route.method, path, { token: principal.token, body, headers });
    } catch (error) {
      failures.push(`${routeName(route)} as ${principal.name}: request failed: ${String(error)}`);
      return;
    }
    sent += 1;
    const where = `${routeName(route)} as ${principal.name} (${route.method} ${path})`;
    const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
    const want = expectation.kind === 'allowed' ? { status: row.allowed?.status ?? 200, code: row.allowed?.code } : expectation;
    if (response.status !== want.status || (want.code !== undefined && response.body?.code !== want.code)) {
      failures.push(`${where}: expected ${want.status}${want.code === undefined ? '' : ` code ${want.code}`}, got ${response.status} ${text.slice(0, 300)}`);
    } else if (expectation.kind === 'refused' && expectation.message && !expectation.message.test(String(response.body?.message))) {
      failures.push(`${where}: expected a message matching ${expectation.message}, got ${text.slice(0, 300)}`);
    }
    // What the request itself named may be echoed ("agent X not found"); nothing else of another tenant may appear.
    const asked = `${path} ${JSON.stringify(body ?? null)} ${JSON.stringify(headers)}`;
    const leaked = [...forbiddenFor(principal)].filter((value) => text.includes(value) && !asked.includes(value));
    if (leaked.length) failures.push(`${where}: the answer carries another tenant's ${leaked.join(', ')}: ${text.slice(0, 300)}`);
    // A resource-level refusal comes before the body only when it is the parent's (the resource itself is found by the handler).
    if (expectation.kind === 'refused' && (!expectation.resourceLevel || parentParams(route).length > 0) && route.body) await refusedBeforeTheBody(cell, path, headers);
  }

  /** A caller refused access gets the same refusal with a body the schema rejects: access is checked first, the schema's complaints are not shown. */
  async function refusedBeforeTheBody({ route, principal, expectation }: Cell, path: string, headers: Record<string, string>): Promise<void> {
    if (expectation.kind !== 'refused') return;
    const response = await api.request(route.method, path, { token: principal.token, body: INVALID_BODY, headers });
    sent += 1;
    if (response.status !== expectation.status || response.body?.code !== expectation.code) {
      const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
      failures.push(`${routeName(route)} as ${principal.name} with an invalid body: expected ${expectation.status} code ${expectation.code}, got ${response.status} ${text.slice(0, 300)}`);
    }
  }

  async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }));
  }

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' }, logLevel: 'warn', poolSize: 10 });
    tools = await startTestToolServer();
    accountA = await seedAccount(api, 'a');
    accountB = await seedAccount(api, 'b');
    const newWorkspace = async (account: SeededAccount, name: string) =>
      (await ok(api, account.globalToken, undefined, 'POST', '/v1/account/workspaces', { metadata: { name: `${name}-${tag()}` } })).metadata.id as string;
    const [a2Id, b2Id, a3Id] = await Promise.all([newWorkspace(accountA, 'a2'), newWorkspace(accountB, 'b2'), newWorkspace(accountA, 'a3-archived')]);
    archivedWorkspaceId = a3Id;
    const seed = (account: SeededAccount, id: string, label: string, objectives: boolean) => seedWorkspace(api, account, id, label, { toolUrl: `${tools.url}/echo`, objectives });
    const [a1, a2, b1, b2] = await Promise.all([seed(accountA, accountA.workspaceId, 'a1', true), seed(accountA, a2Id, 'a2', false), seed(accountB, accountB.workspaceId, 'b1', true), seed(accountB, b2Id, 'b2', false)]);
    w = a1;
    others = { a2, b1, b2 };
    sleepingObjectives.push(a1.sleepingObjectiveId!, b1.sleepingObjectiveId!);

    const key = async (account: SeededAccount, workspaceId: string, permissions: string[]) => {
      const response = await createKey(api, account, workspaceId, permissions);
      assert.equal(response.status, 200, `key with ${permissions.join(',')}: ${JSON.stringify(response.body)}`);
      return { id: response.body.metadata.id as string, token: response.body.spec.token as string };
    };
    const A1 = w.workspaceId;
    const owner = await key(accountA, A1, ['*']);
    const [a2Key, b1Key, archivedKey, emptyKey, disabledKey, rotatedKey, deletedKey] = await Promise.all([
      key(accountA, a2.workspaceId, ['*']), key(accountB, b1.workspaceId, ['*']), key(accountA, a3Id, ['*']),
      key(accountA, A1, []), key(accountA, A1, ['*']), key(accountA, A1, ['*']), key(accountA, A1, ['*']),
    ]);
    const single = await Promise.all(singleScopes().map(async (scope) => ({ scope, ...(await key(accountA, A1, [scope])) })));
    const asGlobal = (method: string, path: string) => ok(api, accountA.globalToken, A1, method, path, method === 'DELETE' ? undefined : {});
    await asGlobal('PUT', `/v1/api_keys/${disabledKey.id}/disable`);
    await asGlobal('PUT', `/v1/api_keys/${rotatedKey.id}/rotate`);
    await asGlobal('DELETE', `/v1/api_keys/${deletedKey.id}`);
    await ok(api, accountA.globalToken, undefined, 'DELETE', `/v1/account/workspaces/${a3Id}`);

    const workspaceKey = (name: string, token: string, account: 'A' | 'B', workspaceId: string, scopes: string[]): PrincipalSpec =>
      ({ name, token, valid: true, account, workspaceId, scopes, admin: false });
    const invalid = (name: string, token?: string): PrincipalSpec => ({ name, token, valid: false, scopes: [], admin: false });
    principals = [
      workspaceKey('owner key of A1 (*)', owner.token, 'A', A1, ['*']),
      { ...workspaceKey('owner key of A1 naming A2 in X-Workspace-Id', owner.token, 'A', A1, ['*']), header: a2.workspaceId },
      workspaceKey('key of A2, same account (*)', a2Key.token, 'A', a2.workspaceId, ['*']),
      workspaceKey('key of account B (*)', b1Key.token, 'B', b1.workspaceId, ['*']),
      ...single.map((entry) => workspaceKey(`key of A1 with only ${entry.scope}`, entry.token, 'A', A1, [entry.scope])),
      workspaceKey('key of A1 with no scope', emptyKey.token, 'A', A1, []),
      { ...workspaceKey('key of archived workspace A3 (*)', archivedKey.token, 'A', a3Id, ['*']), pathWorkspaceId: a3Id },
      { name: 'global key of A (X-Workspace-Id A1)', token: accountA.globalToken, valid: true, account: 'A', scopes: ['*'], admin: true, header: A1 },
      { name: 'global key of A without X-Workspace-Id', token: accountA.globalToken, valid: true, account: 'A', scopes: ['*'], admin: true },
      { name: 'global key of A on archived A3', token: accountA.globalToken, valid: true, account: 'A', scopes: ['*'], admin: true, header: a3Id, pathWorkspaceId: a3Id },
      { name: 'global key of B (X-Workspace-Id A1)', token: accountB.globalToken, valid: true, account: 'B', scopes: ['*'], admin: true, header: A1 },
      invalid('no token'),
      invalid('disabled key', disabledKey.token),
      invalid("rotated key's old token", rotatedKey.token),
      invalid('deleted key', deletedKey.token),
      invalid('forged token (signature changed)', forged(owner.token)),
      invalid('alg none token', algNone(owner.token)),
      invalid('forged global key', forged(accountA.globalToken)),
    ];
  });

  after(async () => {
    // Sleeping objectives would otherwise wake on another suite's runtime over the shared database.
    await Promise.all(sleepingObjectives.map((id) =>
      api?.request('POST', `/v1/workspaces/${id === others?.b1?.sleepingObjectiveId ? others.b1.workspaceId : w.workspaceId}/objectives/${id}/cancel`, {
        token: id === others?.b1?.sleepingObjectiveId ? accountB.globalToken : accountA.globalToken, body: {},
      })));
    await api?.close();
    await tools?.close();
  });

  it('has a row for every mounted route, and none for a route that is gone', () => {
    const rows = ROWS();
    const mounted = allRoutes(api.services).map(routeName);
    const missing = mounted.filter((name) => !(name in rows));
    assert.deepEqual(missing, [], `routes without isolation-matrix rows (add them to ROWS in test/api/isolation-matrix.test.ts): ${missing.join('; ')}`);
    const stale = Object.keys(rows).filter((name) => !mounted.includes(name));
    assert.deepEqual(stale, [], `rows for routes that are not mounted: ${stale.join('; ')}`);
  });

  it('answers every route x principal as the declaration and api-decisions.md say, never with another tenant\'s ids or names', async () => {
    const rows = ROWS();
    const routes = allRoutes(api.services).filter((route) => route.auth === 'bearer' && rows[routeName(route)]);
    const cells = routes.flatMap((route) => principals.map((principal) => ({ route, principal, expectation: expected(route, principal) })));
    // Refusals first (they must change nothing), then the allowed calls.
    await inParallel(cells.filter((cell) => cell.expectation.kind === 'refused'), 12, (cell) => run(cell, rows));
    await inParallel(cells.filter((cell) => cell.expectation.kind === 'allowed'), 8, (cell) => run(cell, rows));
    const allowed = cells.filter((cell) => cell.expectation.kind === 'allowed').length;
    console.log(`      isolation matrix: ${routes.length} routes x ${principals.length} principals = ${cells.length} cells (${allowed} allowed, ${cells.length - allowed} refused), ${sent} answered`);
    assert.deepEqual(failures, [], `${failures.length} cells answered wrongly:\n${failures.join('\n')}`);
  });

  it('answers 404 to a parent of another account or a missing one in the path, whatever the body: the parent is checked before the body', async () => {
    const rows = ROWS();
    const routes = allRoutes(api.services).filter((route) => route.auth === 'bearer' && route.body && parentParams(route).length > 0);
    assert.ok(routes.length >= 15, `${routes.length} routes with a parent and a body`);
    const admin = principals.find((principal) => principal.name === 'global key of A (X-Workspace-Id A1)')!;
    const wrong: string[] = [];
    for (const route of routes) {
      // Every id of the path is B1's: the first parent the route checks is foreign to A. Then the same ids with
      // another ULID (A1's workspace kept): no such parent at all.
      const foreign = fillPath(route, admin, rows[routeName(route)], {}, others.b1);
      const missing = foreign.replace(/([a-z]+_)[0-9A-HJKMNP-TV-Z]{26}/g, (id, prefix: string) => (id === w.workspaceId ? id : `${prefix}${newUlid()}`));
      for (const [path, body] of [foreign, missing].flatMap((candidate) => [INVALID_BODY, rows[routeName(route)].body?.(tag(), others.b1) ?? {}].map((sent) => [candidate, sent] as const))) {
        const response = await api.request(route.method, path, { token: admin.token, body, headers: { 'x-workspace-id': w.workspaceId } });
        if (response.status !== 404 || response.body?.code !== 5) {
          wrong.push(`${routeName(route)} (${route.method} ${path}) with ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
        }
      }
    }
    assert.deepEqual(wrong, [], `${wrong.length} answers other than 404:\n${wrong.join('\n')}`);
  });

  it("would see a leak: the owner's own answers carry the seeded ids and names the scan looks for", async () => {
    const owner = principals[0];
    const seen = async (path: string, ...values: Array<string | undefined>) => {
      const response = await api.request('GET', path, { token: owner.token });
      assert.equal(response.status, 200, `${path}: ${JSON.stringify(response.body)}`);
      const text = JSON.stringify(response.body);
      for (const value of values) {
        assert.ok(value && w.secrets.has(value), `${value} is not in the scanned set`);
        assert.ok(text.includes(value), `${path} does not carry ${value}`);
      }
    };
    const ws = wsPath();
    await seen(`${ws}/agents`, w.agentId, w.runnerAgentId);
    await seen(`${ws}/agents/${w.agentId}/variations`, w.variationId);
    await seen(`${ws}/tools`, w.toolId);
    await seen(`${ws}/tool_sets`, w.toolSetId);
    await seen('/v1/memory_layers', w.layerId);
    await seen(`/v1/memory_layers/${w.layerId}/entries/${w.entryId}`, w.entryId);
    await seen('/v1/workspace_secrets', w.secretId);
    await seen(`${ws}/ai_provider_keys`, w.providerKeyId);
    await seen(`${ws}/models?source=MODEL_SOURCE_WORKSPACE`, w.workspaceModelId);
    await seen('/v1/api_keys', w.targetKeyId);
    await seen(`${ws}/tenants`, w.tenantId);
    await seen(`${ws}/tenants/${w.tenantId}/subjects`, w.subjectId);
    await seen(`${ws}/objectives`, w.completedObjectiveId, w.sleepingObjectiveId);
    await seen(`${ws}/agents/${w.runnerAgentId}/schedules`, w.scheduleId);
    await seen(`${ws}/widgets`, w.widgetId);
    await seen(`${ws}/agents/${w.hooksAgentId}/webhook_deliveries`, w.deliveryId);
    await seen(`/v1/uploads/${w.uploadId}`, w.uploadId);
    for (const other of [others.a2, others.b1, others.b2]) assert.ok(other.secrets.size >= 25, `${other.workspaceId}: ${other.secrets.size} scanned values`);
  });

  it('ignores every bearer token on the signed-URL route (PUT /v1/uploads/{id}/content): the same refusal of a bad signature for all', async () => {
    const route = allRoutes(api.services).find((candidate) => candidate.auth === 'none')!;
    assert.equal(routeName(route), 'PUT /v1/uploads/{id}/content');
    const path = fillPath(route, principals[0], ROWS()[routeName(route)], {});
    const answers = await Promise.all(principals.map(async (principal) => {
      const response = await api.request('PUT', path, { token: principal.token, rawBody: 'abcd', headers: { 'content-type': 'application/octet-stream' } });
      return `${response.status} ${JSON.stringify(response.body)}`;
    }));
    assert.ok(/^4\d\d /.test(answers[0]), answers[0]);
    assert.deepEqual(new Set(answers), new Set([answers[0]]));
  });
});
