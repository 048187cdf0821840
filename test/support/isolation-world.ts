// The world of the isolation matrix (issue 12 item 4): two accounts with two
// workspaces each, every kind of resource seeded in each workspace under
// names unique to it (so an answer that carries another tenant's resource can
// be told by a plain substring scan), and the principals that call the routes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ApiResponse, TestApi } from './api';
import { deliveryChanges, deliveryRecord } from './webhook-deliveries';
import { MODEL_ID } from './agents-world';
import { ScopeResource } from '../../src/auth/scopes';
import type { WorkspaceRef } from '../../src/auth/workspace-access';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

/** A short random tag: names built with it occur nowhere else. */
export const tag = (): string => randomBytes(5).toString('hex');

/** Calls the API as the account's global key acting in `workspaceId`, asserting a 2xx. */
export async function ok(api: TestApi, token: string, workspaceId: string | undefined, method: string, path: string, body?: unknown): Promise<Json> {
  const headers: Record<string, string> = workspaceId ? { 'x-workspace-id': workspaceId } : {};
  const response = await api.request(method, path, { token, body, headers });
  assert.ok(response.status >= 200 && response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export interface SeededAccount {
  accountId: string;
  accountName: string;
  profileId: string;
  globalToken: string;
  globalKeyId: string;
  /** The account's first workspace. */
  workspaceId: string;
}

export async function seedAccount(api: TestApi, label: string): Promise<SeededAccount> {
  const accountName = `acct-${label}-${tag()}`;
  const result = await api.bootstrap(accountName);
  await ok(api, result.globalApiKey.token, undefined, 'PATCH', `/v1/account/workspaces/${result.workspaceId}`, { metadata: { name: `ws-${label}-${tag()}` } });
  return {
    accountId: result.accountId, accountName, profileId: result.profileId,
    globalToken: result.globalApiKey.token, globalKeyId: result.globalApiKey.id, workspaceId: result.workspaceId,
  };
}

/** Resources of one workspace; every id and name of it is listed in `secrets` for the leak scan. */
export interface SeededWorkspace {
  account: SeededAccount;
  workspaceId: string;
  workspaceName: string;
  ref: WorkspaceRef;
  agentId: string;
  variationId: string;
  toolId: string;
  toolSetId: string;
  layerId: string;
  entryId: string;
  layerAssignmentId: string;
  toolAssignmentId: string;
  secretId: string;
  providerKeyId: string;
  /** A workspace model served through providerKeyId. */
  workspaceModelId: string;
  uploadId: string;
  tenantId: string;
  subjectId: string;
  modelId: string;
  scheduleId: string;
  widgetId: string;
  widgetSessionId: string;
  /** A key with no permissions: any key managing keys may act on it. */
  targetKeyId: string;
  bundleKey: string;
  /** The agent objectives and schedules run on: one variation on builtin/scripted and the tool. */
  runnerAgentId: string;
  hooksAgentId: string;
  /** A PENDING delivery to the hooks agent's endpoint (with `objectives`). */
  deliveryId?: string;
  /** The erasure job of a throwaway subject (with `objectives`: it needs the runtime). */
  erasureId?: string;
  /** Objectives (with `runtime`): one COMPLETED after a tool call, one sleeping (RUNNING). */
  completedObjectiveId?: string;
  toolCallId?: string;
  sleepingObjectiveId?: string;
  /** Every id and name this workspace holds (what no other tenant may ever see). */
  secrets: Set<string>;
}

export interface SeedOptions {
  /** The URL of a tool the objective calls. */
  toolUrl: string;
  /** Run objectives (needs the embedded runtime). */
  objectives: boolean;
}

/** Script of a long-running objective: it sleeps until cancelled. */
export const SLEEPING_SCRIPT = 'SLEEP 600000\nSAY woke';

export async function waitForObjective(api: TestApi, token: string, workspaceId: string, id: string, status: string): Promise<Json> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const objective = await ok(api, token, undefined, 'GET', `/v1/workspaces/${workspaceId}/objectives/${id}`);
    if (objective.info.status === status) return objective;
    if (Date.now() > deadline) assert.fail(`objective ${id} is ${objective.info.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Seeds every kind of resource in `workspaceId`; names carry `label` and a random tag. */
export async function seedWorkspace(api: TestApi, account: SeededAccount, workspaceId: string, label: string, options: SeedOptions): Promise<SeededWorkspace> {
  const t = `${label}-${tag()}`;
  const token = account.globalToken;
  const call = (method: string, path: string, body?: unknown) => ok(api, token, workspaceId, method, path, body);
  const ws = `/v1/workspaces/${workspaceId}`;
  const names: string[] = [];
  const named = (kind: string) => {
    const name = `${kind}-${t}`;
    names.push(name);
    return name;
  };
  const ref = (await api.services.store.workspaces.findById(workspaceId))!;
  const agent = await call('POST', `${ws}/agents`, { metadata: { name: named('agent') } });
  const variation = await call('POST', `${ws}/agents/${agent.metadata.id}/variations`, {
    metadata: { name: named('variation') }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } },
  });
  const tool = await call('POST', `${ws}/tools`, {
    metadata: { name: named('tool').replace(/-/g, '_') }, spec: { http: { url: options.toolUrl, method: 'POST' }, inputSchema: { type: 'object' } },
  });
  names.push(tool.metadata.name);
  const toolSet = await call('POST', `${ws}/tool_sets`, { metadata: { name: named('toolset') } });
  await call('POST', `${ws}/tool_sets/${toolSet.metadata.id}/tools`, { toolId: tool.metadata.id });
  const runner = await call('POST', `${ws}/agents`, { metadata: { name: named('runner') } });
  const runnerVariation = await call('POST', `${ws}/agents/${runner.metadata.id}/variations`, {
    metadata: { name: named('runnervar') }, spec: { prompt: 'You run scripts.', modelConfig: { modelId: MODEL_ID } },
  });
  await call('POST', `${ws}/agents/${runner.metadata.id}/variations/${runnerVariation.metadata.id}/assignments`, { toolId: tool.metadata.id });
  const toolAssignment = await call('POST', `${ws}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
  const layer = await call('POST', '/v1/memory_layers', { metadata: { name: named('layer') }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } });
  const entry = await call('POST', `/v1/memory_layers/${layer.metadata.id}/entries`, { spec: { key: named('entry'), content: `content-${t}` } });
  names.push(`content-${t}`);
  const layerAssignment = await call('POST', `${ws}/agents/${agent.metadata.id}/variations/${variation.metadata.id}/memory_layer_assignments`, { memoryLayerId: layer.metadata.id });
  const secret = await call('POST', '/v1/workspace_secrets', { metadata: { name: named('SECRET').toUpperCase().replace(/-/g, '_') }, spec: { value: `value-${t}` } });
  names.push(secret.metadata.name, `value-${t}`);
  const providerKey = await call('POST', `${ws}/ai_provider_keys`, { metadata: { name: named('provkey') }, spec: { apiKey: `sk-${t}` } });
  names.push(`sk-${t}`);
  const workspaceModel = await call('POST', `${ws}/models`, {
    metadata: { name: `matrix/${named('localmodel')}` },
    spec: { aiProviderKeyId: providerKey.metadata.id, upstreamModel: named('upstream'), maxInputTokens: 8192, inputPricePerMillionTokens: '0', outputPricePerMillionTokens: '0' },
  });
  const upload = await call('POST', '/v1/uploads', { filename: `${named('file')}.txt`, contentType: 'text/plain', sizeBytes: 4 });
  const tenant = await api.services.tenants.upsertTenant(ref, { externalId: named('tenant'), name: named('tenantname') });
  const subject = await api.services.tenants.upsertSubject(ref, tenant.id, { externalId: named('subject') });
  const models = await call('GET', '/v1/models');
  const model = models.items.find((item: Json) => item.spec?.modelId !== MODEL_ID && item.metadata?.name !== MODEL_ID) ?? models.items[0];
  const schedule = await call('POST', `${ws}/agents/${runner.metadata.id}/schedules`, {
    metadata: { name: named('schedule') },
    spec: { initialMessage: 'SAY scheduled', schedule: { intervals: [{ every: '24h' }], timezone: 'Europe/Berlin' } },
  });
  const targetKey = await call('POST', `${ws}/api_keys`, { metadata: { name: named('targetkey') }, spec: { permissions: [] } });
  const hostname = `${randomBytes(6).toString('hex')}.matrix.example.com`;
  const widget = await call('POST', `${ws}/widgets`, {
    metadata: { name: named('widget') }, spec: { agentId: agent.metadata.id, hostname, allowedOrigins: ['https://matrix.example.com'], title: named('widgettitle') },
  });
  names.push(hostname);
  const widgetSession = await call('POST', `${ws}/widgets/${widget.metadata.id}/sessions`, {});
  const bundleKey = named('bundle');
  // Agents only: a bundle holding tools also needs the tools scopes (bundle.service.ts), beyond the route's declaration.
  await call('PUT', `${ws}/bundles/${bundleKey}`, { agents: [{ metadata: { name: named('bundleagent') }, spec: {} }] });
  const hooksAgent = await call('POST', `${ws}/agents`, { metadata: { name: named('hooksagent') }, spec: { webhookEventsUrl: 'https://hooks.example.com/agentrt' } });
  const seeded: SeededWorkspace = {
    account, workspaceId, workspaceName: ref.name, ref,
    agentId: agent.metadata.id, variationId: variation.metadata.id, toolId: tool.metadata.id, toolSetId: toolSet.metadata.id,
    layerId: layer.metadata.id, entryId: entry.metadata.id, layerAssignmentId: layerAssignment.id, toolAssignmentId: toolAssignment.id,
    secretId: secret.metadata.id, providerKeyId: providerKey.metadata.id, workspaceModelId: workspaceModel.metadata.id, uploadId: upload.metadata.id, tenantId: tenant.id, subjectId: subject.id,
    modelId: model.metadata.id, scheduleId: schedule.metadata.id, targetKeyId: targetKey.metadata.id, bundleKey,
    widgetId: widget.metadata.id, widgetSessionId: widgetSession.sessionId,
    runnerAgentId: runner.metadata.id, hooksAgentId: hooksAgent.metadata.id,
    secrets: new Set(),
  };
  if (options.objectives) {
    const completed = await call('POST', `${ws}/objectives`, { agentId: seeded.runnerAgentId, initialMessage: `CALL ${tool.metadata.name} {}\nSAY done-${t}` });
    const sleeping = await call('POST', `${ws}/objectives`, { agentId: seeded.runnerAgentId, initialMessage: SLEEPING_SCRIPT });
    await waitForObjective(api, token, workspaceId, completed.metadata.id, 'OBJECTIVE_STATUS_COMPLETED');
    const events = await call('GET', `${ws}/objectives/${completed.metadata.id}/events`);
    const called = events.items.find((event: Json) => event.data?.toolCalled);
    assert.ok(called, JSON.stringify(events.items.map((event: Json) => event.type)));
    // A delivery of the completed objective's first event, written as the endpoint
    // actor would (test/api/webhook-deliveries.test.ts); its agent runs nothing, so no
    // real delivery is ever attempted.
    const owner = { accountId: account.accountId, workspaceId, agentId: hooksAgent.metadata.id };
    const delivery = deliveryRecord(owner, completed.metadata.id, events.items[0].metadata.id);
    await api.services.webhookDeliveriesStore.project({ query: (text, parameters) => api.dataSource.query(text, parameters) }, deliveryChanges([delivery]));
    seeded.deliveryId = delivery.id;
    const erased = await api.services.tenants.upsertSubject(ref, tenant.id, { externalId: named('erasedsubject') });
    seeded.erasureId = (await call('DELETE', `${ws}/subjects/${erased.id}`)).metadata.id;
    names.push(...events.items.map((event: Json) => event.metadata.id as string));
    Object.assign(seeded, { completedObjectiveId: completed.metadata.id, sleepingObjectiveId: sleeping.metadata.id, toolCallId: called.data.toolCalled.toolCallId });
    names.push(`done-${t}`);
  }
  const ids = [
    seeded.workspaceId, seeded.agentId, seeded.variationId, seeded.toolId, seeded.toolSetId, seeded.layerId, seeded.entryId, seeded.layerAssignmentId,
    seeded.toolAssignmentId, seeded.secretId, seeded.providerKeyId, seeded.workspaceModelId, seeded.uploadId, seeded.tenantId, seeded.subjectId, seeded.modelId, seeded.scheduleId,
    seeded.widgetId, seeded.widgetSessionId,
    seeded.targetKeyId, seeded.runnerAgentId, runnerVariation.metadata.id, seeded.hooksAgentId, seeded.deliveryId, seeded.erasureId,
    seeded.completedObjectiveId, seeded.sleepingObjectiveId, seeded.toolCallId,
  ];
  for (const value of [...ids, ...names, seeded.workspaceName]) if (value) seeded.secrets.add(value);
  return seeded;
}

/** What a principal is, for deriving the answer a route owes it. */
export interface PrincipalSpec {
  name: string;
  /** The bearer token (undefined: none sent). */
  token?: string;
  /** False for credentials authentication must refuse. */
  valid: boolean;
  account?: 'A' | 'B';
  /** The key's own workspace (workspace keys); undefined for the global key. */
  workspaceId?: string;
  scopes: readonly string[];
  admin: boolean;
  /** Sent as X-Workspace-Id. */
  header?: string;
  /** The workspace it names on workspace paths (default the target, A1). */
  pathWorkspaceId?: string;
}

/** Every `<resource>:<verb>` scope of src/auth/scopes.ts a key may hold. */
export function singleScopes(): string[] {
  return ScopeResource.flatMap((resource) => (resource === 'secrets' || resource === 'account' ? [`${resource}:manage`] : [`${resource}:read`, `${resource}:manage`]));
}

export async function createKey(api: TestApi, account: SeededAccount, workspaceId: string, permissions: string[]): Promise<ApiResponse> {
  return api.request('POST', `/v1/workspaces/${workspaceId}/api_keys`, {
    token: account.globalToken, body: { metadata: { name: `principal-${permissions.join('-') || 'none'}-${tag()}` }, spec: { permissions } },
  });
}

/** A token whose signature differs from the one the service signed (one character changed). */
export function forged(token: string): string {
  const [header, payload, signature] = token.split('.');
  const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
  return `${header}.${payload}.${flipped}`;
}

/** The same claims under `alg: none` and no signature (RFC 8725 3.1). */
export function algNone(token: string): string {
  const [, payload] = token.split('.');
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'agentrt-key+jwt' })).toString('base64url');
  return `${header}.${payload}.`;
}
