// Agents (spec 2.13, 4.8): create, list, get, update and delete; JSON Schemas
// checked at write time; DELETE refused while objectives run unless forced,
// and archives the agent's schedules (through the AgentScheduleArchive port).
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { FailedPreconditionError } from '../errors';
import { newId } from '../ids';
import { checkOutboundUrl, type UrlPolicyOptions } from '../network/url-policy';
import type { AgentScheduleArchive } from '../ports/agent-schedules';
import type { AgentsStore } from '../ports/agents-store';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { getPath, touches } from '../resource/update-mask';
import type { Agent, AgentSpecInput, CreateAgentBody, UpdateAgentBody } from '../schemas/agents.schema';
import { checkJsonSchema } from './json-schema';
import { toAgent } from './mappers';
import { AgentStatus, VariationSelectionMode, type AgentRecord } from './records';
import { bundleKeyChange, inWorkspace, updatePaths, type WriteOptions } from './write-options';

const SPEC_PATHS = [
  'spec.status',
  'spec.variationSelectionMode',
  'spec.description',
  'spec.inputDataSchema',
  'spec.outputDefinition',
  'spec.webhookEventsUrl',
] as const;
const UPDATE_LEAVES = [...METADATA_UPDATE_PATHS, ...SPEC_PATHS];

type AgentSpecFields = Pick<AgentRecord, 'status' | 'variationSelectionMode' | 'description' | 'inputDataSchema' | 'outputDefinition' | 'webhookEventsUrl'>;

/**
 * Checks `webhookEventsUrl` by the outbound URL rule (absolute http(s), no
 * credentials, no literal private address unless allowed): refused here, not
 * by every delivery later. Names are checked again when a delivery connects.
 */
function checkWebhookUrl(raw: string, policy: UrlPolicyOptions): string {
  checkOutboundUrl('spec.webhookEventsUrl', raw, policy, 'deliveries are signed (webhook-signature); put any token of your own in the path or query');
  return raw;
}

/** The validated value of one spec field (null clears it). */
function specValue<K extends keyof AgentSpecFields>(key: K, spec: AgentSpecInput | undefined, policy: UrlPolicyOptions): AgentSpecFields[K] {
  const fields: { [P in keyof AgentSpecFields]: () => AgentSpecFields[P] } = {
    status: () => (spec?.status && spec.status !== AgentStatus.UNSPECIFIED ? spec.status : AgentStatus.DRAFT),
    variationSelectionMode: () => spec?.variationSelectionMode ?? VariationSelectionMode.UNSPECIFIED,
    description: () => spec?.description ?? null,
    inputDataSchema: () => {
      if (spec?.inputDataSchema) checkJsonSchema('spec.inputDataSchema', spec.inputDataSchema, { objectType: true });
      return spec?.inputDataSchema ?? null;
    },
    outputDefinition: () => {
      if (spec?.outputDefinition) checkJsonSchema('spec.outputDefinition', spec.outputDefinition);
      return spec?.outputDefinition ?? null;
    },
    webhookEventsUrl: () => (spec?.webhookEventsUrl ? checkWebhookUrl(spec.webhookEventsUrl, policy) : null),
  };
  return fields[key]();
}

const SPEC_KEYS = SPEC_PATHS.map((path) => [path, path.slice('spec.'.length) as keyof AgentSpecFields] as const);

export class AgentService {
  constructor(
    private readonly store: AgentsStore,
    private readonly foundation: FoundationStore,
    private readonly schedules: AgentScheduleArchive,
    /** The outbound URL rule `spec.webhookEventsUrl` is checked by (AGENTRT_ALLOW_PRIVATE_NETWORK). */
    private readonly urlPolicy: UrlPolicyOptions,
  ) {}

  /** Creates an agent; `status` defaults to AGENT_STATUS_DRAFT. */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateAgentBody, options: WriteOptions = {}): Promise<Agent> {
    const spec = Object.fromEntries(SPEC_KEYS.map(([, key]) => [key, specValue(key, body.spec, this.urlPolicy)])) as AgentSpecFields;
    const record = await (options.store ?? this.store).agents.insert({
      ...newResourceFields(newId('agent'), principal, workspace, body.metadata),
      bundleKey: options.bundleKey ?? null,
      ...spec,
    });
    return this.withInfo(record, options.store);
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<Agent>> {
    const result = toPage(await this.store.agents.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toAgent(row)) };
    const counts = await this.store.variations.countByAgents(result.items.map((row) => row.id));
    const creators = await this.foundation.profiles.findByIds(result.items.map((row) => row.profileId));
    return {
      ...result,
      items: result.items.map((row) => toAgent(row, { createdBy: creators.get(row.profileId ?? ''), variationCount: counts.get(row.id) ?? 0 })),
    };
  }

  /** The agent with its `info`, read in one round trip. */
  async get(workspace: WorkspaceRef, id: string): Promise<Agent> {
    const found = await this.store.agents.findWithInfo(id);
    const record = inWorkspace(found?.record ?? null, workspace, 'agent', id);
    return toAgent(record, { createdBy: found?.createdBy, variationCount: found?.variationCount ?? 0 });
  }

  /** @throws AbortedError when If-Match does not match `updatedAt` */
  async update(workspace: WorkspaceRef, id: string, body: UpdateAgentBody, ifMatch?: string, options: WriteOptions = {}): Promise<Agent> {
    const store = options.store ?? this.store;
    const record = await this.find(workspace, id, store);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = updatePaths(fields, updateMask, UPDATE_LEAVES, ['spec']);
    const changes: Partial<AgentRecord> = { ...metadataChanges(body.metadata, paths), ...bundleKeyChange(options) };
    for (const [path, key] of SPEC_KEYS) {
      if (touches(paths, path)) Object.assign(changes, { [key]: specValue(key, getPath(body, 'spec') as AgentSpecInput | undefined, this.urlPolicy) });
    }
    const updated = await store.agents.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record, options.store);
  }

  /**
   * Deletes the agent with its variations, assignments and feedback, and its
   * sub-agent assignments in other agents, after archiving its schedules.
   * Within a caller's transaction (`options.store`, a bundle) only the rows go:
   * the caller hands schedules to their actors after its commit.
   * @throws FailedPreconditionError when objectives of the agent are running and `force` is not set
   * @throws the error of a schedule's actor (UNAVAILABLE without an actor runtime); the agent is then not deleted
   */
  async delete(workspace: WorkspaceRef, id: string, force = false, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.find(workspace, id, store);
    const running = await store.objectives.countRunningObjectives(record.id);
    if (running > 0 && !force) {
      throw new FailedPreconditionError(`agent ${record.id} has ${running} running objective(s); cancel them or delete with ?force=true`);
    }
    // Schedules live in their actors, outside any transaction, so they are
    // archived BEFORE the row goes: when an actor fails, the DELETE fails with
    // the agent still there, and a retry archives what is left (an ARCHIVED
    // schedule is not asked again) and then deletes. Archiving after the delete
    // would leave, on a failure, schedules of a deleted agent that no API call
    // reaches (its DELETE is then NOT_FOUND). The second pass archives a
    // schedule created while this ran (its create found the agent still there);
    // should it fail, that one schedule's fires fail (info.lastError) as before.
    const archive = options.store ? null : this.schedules;
    await archive?.archiveSchedulesOf(workspace.id, record.id);
    await store.agents.delete(record.id);
    await archive?.archiveSchedulesOf(workspace.id, record.id);
  }

  /**
   * The agent when it belongs to the workspace.
   * @throws NotFoundError otherwise
   */
  async find(workspace: WorkspaceRef, id: string, store: AgentsStore = this.store): Promise<AgentRecord> {
    return inWorkspace(await store.agents.findById(id), workspace, 'agent', id);
  }

  private async withInfo(record: AgentRecord, store: AgentsStore = this.store): Promise<Agent> {
    const counts = await store.variations.countByAgents([record.id]);
    const creators = await this.foundation.profiles.findByIds([record.profileId]);
    return toAgent(record, { createdBy: creators.get(record.profileId ?? ''), variationCount: counts.get(record.id) ?? 0 });
  }
}
