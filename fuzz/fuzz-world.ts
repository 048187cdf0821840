// The resources a fuzz run needs ids of: one of each kind in the fuzzed
// workspace (created over the API, so requests reach the handlers), creators
// for fresh ones (each DELETE and each concurrent pair takes its own), and the
// same kinds in another account, snapshotted so the run can check that no
// request reached them.
import { isDeepStrictEqual } from 'node:util';
import type { TestApi } from '../test/support/api';
import type { IdPools } from './request-generator';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = any;

const SCRIPTED_MODEL = 'builtin/scripted';
/** A reserved name that never resolves (RFC 6761): tools and hooks that point here fail at once. */
const DEAD_URL = 'https://fuzz.invalid/tool';

/** Kinds a Workspace can create on demand. */
export const CREATABLE_KINDS = ['ws', 'agent', 'agentvar', 'vasgn', 'mlasgn', 'sched', 'tool', 'toolset', 'memlayer', 'mement', 'secret', 'aipk', 'apikey', 'upload', 'bundle', 'obj', 'tenant', 'subject'];

export class FuzzSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FuzzSetupError';
  }
}

/** One workspace of one account, with a full-access key and one resource of each kind. */
export class Workspace {
  readonly stable: Record<string, string[]> = {};
  private counter = 0;
  private objectiveAgent?: string;

  private constructor(readonly api: TestApi, readonly globalToken: string, readonly workspaceId: string, readonly profileId: string, readonly token: string) {}

  /** A fresh account, its workspace and a `*` key of that workspace. */
  static async open(api: TestApi, label: string): Promise<Workspace> {
    const account = await api.bootstrap(`fuzz-${label}`);
    const key = await call(api, 'POST', `/v1/workspaces/${account.workspaceId}/api_keys`, account.globalApiKey.token, { metadata: { name: `fuzz-${label}` }, spec: { permissions: ['*'] } });
    return new Workspace(api, account.globalApiKey.token, account.workspaceId, account.profileId, key.spec.token);
  }

  /** Creates one stable resource of every kind, parents first. */
  async populate(): Promise<void> {
    this.stable.ws = [this.workspaceId];
    this.stable.prof = [this.profileId];
    for (const kind of ['agent', 'agentvar', 'tool', 'toolset', 'memlayer', 'mement', 'vasgn', 'mlasgn', 'sched', 'secret', 'aipk', 'apikey', 'upload', 'bundle']) {
      this.stable[kind] = [await this.create(kind)];
    }
    // Objectives created on demand run an agent the fuzz never names, so its changes cannot stop them.
    this.objectiveAgent = await this.create('agent');
    await this.create('agentvar', this.objectiveAgent);
    for (const kind of ['obj', 'tenant', 'subject']) this.stable[kind] = [await this.create(kind)];
    // Disabling the scripted model would stop every objective: the fuzz gets the other models.
    const models = await call(this.api, 'GET', '/v1/models?limit=4', this.token);
    this.stable.model = models.items.filter((model: Json) => model.metadata.name !== SCRIPTED_MODEL).map((model: Json) => model.metadata.id);
  }

  private first(kind: string): string {
    return this.stable[kind][0];
  }

  /** Creates a resource of `kind` under the stable parents; returns its id (the key, for bundles). */
  async create(kind: string, parentAgentId?: string): Promise<string> {
    const agentId = parentAgentId ?? (kind === 'agent' ? '' : this.first('agent'));
    const n = (this.counter += 1);
    const ws = `/v1/workspaces/${this.workspaceId}`;
    const post = (path: string, body: Json, token = this.token) => call(this.api, 'POST', path, token, body);
    const idOf = async (path: string, body: Json, token?: string) => {
      const created = await post(path, body, token);
      return (created.metadata?.id ?? created.id) as string; // assignments answer a bare id
    };
    const variation = () => `${ws}/agents/${this.first('agent')}/variations/${this.first('agentvar')}`;
    switch (kind) {
      case 'ws': return idOf('/v1/account/workspaces', { metadata: { name: `fuzz-ws-${n}` } }, this.globalToken);
      case 'agent': return idOf(`${ws}/agents`, { metadata: { name: `fuzz-agent-${n}` } });
      case 'agentvar': return idOf(`${ws}/agents/${agentId}/variations`, { metadata: { name: `fuzz-variation-${n}` }, spec: { prompt: 'Answer.', modelConfig: { modelId: SCRIPTED_MODEL } } });
      case 'tool': return idOf(`${ws}/tools`, { metadata: { name: `fuzz-tool-${n}` }, spec: { http: { url: DEAD_URL, method: 'POST' } } });
      case 'toolset': return idOf(`${ws}/tool_sets`, { metadata: { name: `fuzz-set-${n}` } });
      case 'memlayer': return idOf('/v1/memory_layers', { metadata: { name: `fuzz-layer-${n}` }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } });
      case 'mement': return idOf(`/v1/memory_layers/${this.first('memlayer')}/entries`, { spec: { key: `fuzz-entry-${n}`, content: 'Remember this.' } });
      case 'vasgn': return idOf(`${variation()}/assignments`, { toolId: await this.create('tool') });
      case 'mlasgn': return idOf(`${variation()}/memory_layer_assignments`, { memoryLayerId: await this.create('memlayer') });
      case 'sched': return idOf(`${ws}/agents/${this.first('agent')}/schedules`, {
        metadata: { name: `fuzz-schedule-${n}` },
        spec: { initialMessage: 'Report.', schedule: { timezone: 'UTC', intervals: [{ every: '1d' }] }, status: 'AGENT_SCHEDULE_STATUS_PAUSED' },
      });
      case 'secret': return idOf('/v1/workspace_secrets', { metadata: { name: `FUZZ_SECRET_${n}` }, spec: { value: `value-${n}` } });
      case 'aipk': return idOf(`${ws}/ai_provider_keys`, { metadata: { name: `fuzz-provider-${n}` }, spec: { apiKey: `sk-fuzz-${n}`, provider: 'AI_PROVIDER_OPENROUTER' } });
      case 'apikey': return idOf(`${ws}/api_keys`, { metadata: { name: `fuzz-key-${n}` }, spec: { permissions: ['agents:read'] } });
      case 'upload': return idOf('/v1/uploads', { filename: `fuzz-${n}.txt`, contentType: 'text/plain', sizeBytes: 1 });
      case 'bundle': {
        const key = `fuzz-bundle-${n}`;
        await call(this.api, 'PUT', `${ws}/bundles/${key}`, this.token, { tools: [{ metadata: { name: `fuzz-bundle-tool-${n}` }, spec: { http: { url: DEAD_URL, method: 'GET' } } }] });
        return key;
      }
      case 'obj': return idOf(`${ws}/objectives`, { agentId: this.objectiveAgent ?? agentId, initialMessage: `Hello ${n}.` });
      case 'tenant':
      case 'subject': {
        const objective = await post(`${ws}/objectives`, { agentId: this.objectiveAgent ?? agentId, initialMessage: 'Hello.', tenant: { externalId: `fuzz-tenant-${n}` }, subject: { externalId: `fuzz-subject-${n}` } });
        return kind === 'tenant' ? objective.spec.tenantId : objective.spec.subjectId;
      }
      default:
        throw new FuzzSetupError(`no creator for ${kind}`);
    }
  }

  /** GET paths of the stable resources that have one, with the token to read them. */
  readablePaths(): Array<{ kind: string; path: string; token: string }> {
    const ws = `/v1/workspaces/${this.workspaceId}`;
    const agent = `${ws}/agents/${this.first('agent')}`;
    const paths: Record<string, (id: string) => string> = {
      ws: (id) => `/v1/account/workspaces/${id}`, agent: (id) => `${ws}/agents/${id}`, agentvar: (id) => `${agent}/variations/${id}`, sched: (id) => `${agent}/schedules/${id}`,
      tool: (id) => `${ws}/tools/${id}`, toolset: (id) => `${ws}/tool_sets/${id}`, memlayer: (id) => `/v1/memory_layers/${id}`, mement: (id) => `/v1/memory_layers/${this.first('memlayer')}/entries/${id}`,
      secret: (id) => `/v1/workspace_secrets/${id}`, aipk: (id) => `${ws}/ai_provider_keys/${id}`, apikey: (id) => `/v1/api_keys/${id}`, upload: (id) => `/v1/uploads/${id}`,
      bundle: (key) => `${ws}/bundles/${key}`, obj: (id) => `${ws}/objectives/${id}`, tenant: (id) => `${ws}/tenants/${id}`, subject: (id) => `${ws}/subjects/${id}`,
    };
    return Object.entries(paths).flatMap(([kind, path]) => (this.stable[kind] ?? []).map((id) => ({ kind, path: path(id), token: kind === 'ws' ? this.globalToken : this.token })));
  }
}

async function call(api: TestApi, method: string, path: string, token: string, body?: Json): Promise<Json> {
  const response = await api.request(method, path, { token, body });
  if (response.status !== 200) throw new FuzzSetupError(`${method} ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 500)}`);
  return response.body;
}

/** What a resource must still look like: objectives run on, so only their spec is fixed. */
function comparable(kind: string, body: Json): Json {
  if (kind === 'bundle') return body;
  return kind === 'obj' ? { spec: body.spec } : { metadata: body.metadata, spec: body.spec };
}

/** The other account's resources as they were before the run. */
export class Snapshot {
  private constructor(private readonly workspace: Workspace, private readonly bodies: Map<string, Json>) {}

  static async take(workspace: Workspace): Promise<Snapshot> {
    const bodies = new Map<string, Json>();
    for (const { kind, path, token } of workspace.readablePaths()) bodies.set(path, comparable(kind, await call(workspace.api, 'GET', path, token)));
    return new Snapshot(workspace, bodies);
  }

  /** Problems found: each resource still answers 200 with the same metadata and spec. */
  async verify(): Promise<string[]> {
    const problems: string[] = [];
    for (const { kind, path, token } of this.workspace.readablePaths()) {
      const response = await this.workspace.api.request('GET', path, { token });
      if (response.status !== 200) problems.push(`GET ${path}: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
      else if (!isDeepStrictEqual(comparable(kind, response.body), this.bodies.get(path))) {
        problems.push(`GET ${path} changed: was ${JSON.stringify(this.bodies.get(path)).slice(0, 400)}, now ${JSON.stringify(comparable(kind, response.body)).slice(0, 400)}`);
      }
    }
    return problems;
  }
}

/** The id pools of the generator: the fuzzed workspace's resources, the other account's as foreign ids. */
export function idPools(fuzzed: Workspace, other: Workspace): IdPools {
  // A bundle key is a name chosen per workspace, not an id: the same key may exist in both.
  const foreign = Object.fromEntries(Object.entries(other.stable).filter(([kind]) => kind !== 'bundle').map(([kind, ids]) => [kind, ids[0]]));
  return { stable: fuzzed.stable, foreign, creatable: CREATABLE_KINDS };
}
