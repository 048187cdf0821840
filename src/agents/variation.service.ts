// Agent variations (spec 2.14, 4.9): every spec field within its range (the
// schemas check ranges; this service checks references), defaults filled on
// create, info assembled in batches for lists. Both path styles call here.
import type { MetadataRecord } from '../accounts/records';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { InvalidArgumentError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { AgentsStore } from '../ports/agents-store';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { getPath, touches } from '../resource/update-mask';
import type { AgentVariation, CreateVariationBody, UpdateVariationBody } from '../schemas/agents.schema';
import { toVariation, type NameIndex } from './mappers';
import type { FeedbackTallySource } from './feedback-tallies';
import { selectAgentVariation, type RandomSource } from './variation-selection';
import { DEFAULT_PRESERVE_RECENT_RESULTS, DEFAULT_TRIGGER_THRESHOLD, type AgentRecord, type VariationRecord, type WorkspaceResourceRecord } from './records';
import { bundleKeyChange, inWorkspace, updatePaths, type WriteOptions } from './write-options';

/** Weight of a variation created without one, so WEIGHTED agents pick it. */
export const DEFAULT_WEIGHT = 1;

type SpecKey = Exclude<keyof VariationRecord, keyof WorkspaceResourceRecord | 'agentId'>;

/** Each updatable leaf of the spec: its body path, record field and default. */
const SPEC_FIELDS: ReadonlyArray<readonly [string, SpecKey, unknown]> = [
  ['spec.description', 'description', null],
  ['spec.prompt', 'prompt', null],
  ['spec.modelConfig.modelId', 'modelId', null],
  ['spec.modelConfig.temperature', 'temperature', null],
  ['spec.constraints.maxSubObjectives', 'maxSubObjectives', null],
  ['spec.constraints.maxToolCalls', 'maxToolCalls', null],
  ['spec.constraints.maxModelTurns', 'maxModelTurns', null],
  ['spec.constraints.maxTokens', 'maxTokens', null],
  ['spec.constraints.maxCostCents', 'maxCostCents', null],
  ['spec.constraints.modelRetryBudgetSeconds', 'modelRetryBudgetSeconds', null],
  ['spec.compactionConfig.triggerThreshold', 'triggerThreshold', DEFAULT_TRIGGER_THRESHOLD],
  ['spec.compactionConfig.summarization.instructions', 'summarizationInstructions', null],
  ['spec.compactionConfig.toolResultClearing.preserveRecentResults', 'preserveRecentResults', DEFAULT_PRESERVE_RECENT_RESULTS],
  ['spec.enableEpisodicMemory', 'enableEpisodicMemory', false],
  ['spec.episodicMemoryTtl', 'episodicMemoryTtl', null],
  ['spec.toolSelection', 'toolSelection', null],
  ['spec.progressiveDiscovery', 'progressiveDiscovery', null],
  ['spec.weight', 'weight', DEFAULT_WEIGHT],
];
/**
 * Spec fields stored as one JSON value whose own leaves a PATCH may name
 * (`spec.progressiveDiscovery.hints`), so that a partial update merges into
 * the stored value instead of replacing it.
 */
const JSON_FIELD_LEAVES: Readonly<Record<string, readonly string[]>> = {
  'spec.toolSelection': ['spec.toolSelection.assignedTools.allowDiscovery', 'spec.toolSelection.autoDiscovery.hints', 'spec.toolSelection.autoDiscovery.maxTools'],
  'spec.progressiveDiscovery': ['spec.progressiveDiscovery.hints', 'spec.progressiveDiscovery.maxTools', 'spec.progressiveDiscovery.rerankThreshold'],
};
const UPDATE_LEAVES = [
  ...METADATA_UPDATE_PATHS,
  ...SPEC_FIELDS.flatMap(([path]) => JSON_FIELD_LEAVES[path] ?? [path]),
];
const UPDATE_PARENTS = [
  'spec', 'spec.modelConfig', 'spec.constraints', 'spec.compactionConfig', 'spec.compactionConfig.summarization', 'spec.compactionConfig.toolResultClearing',
  'spec.toolSelection', 'spec.toolSelection.assignedTools', 'spec.toolSelection.autoDiscovery', 'spec.progressiveDiscovery',
];

/**
 * The new value of a JSON spec field when the PATCH names only paths inside
 * it: each named path is set from the body (or removed when the body has no
 * value) on a copy of the stored value; objects left empty are dropped.
 */
function mergeJsonField(stored: Record<string, unknown> | null, field: string, body: unknown, paths: readonly string[]): Record<string, unknown> | null {
  const merged = structuredClone(stored ?? {});
  for (const path of paths) {
    const parts = path.slice(field.length + 1).split('.');
    const value = getPath(body, path);
    let parent: Record<string, unknown> = merged;
    for (const part of parts.slice(0, -1)) {
      if (parent[part] === null || typeof parent[part] !== 'object') parent[part] = {};
      parent = parent[part] as Record<string, unknown>;
    }
    const last = parts[parts.length - 1];
    if (value === undefined) delete parent[last];
    else parent[last] = structuredClone(value);
  }
  const prune = (node: Record<string, unknown>): boolean => {
    for (const [key, value] of Object.entries(node)) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && prune(value as Record<string, unknown>)) delete node[key];
    }
    return Object.keys(node).length === 0;
  };
  return prune(merged) ? null : merged;
}

/** Models of a workspace by full id (`family/model`); ModelService satisfies it. */
export interface ModelLookup {
  findModel(workspaceId: string, modelId: string): Promise<(MetadataRecord & { workspaceId: string }) | null>;
}

export class VariationService {
  constructor(
    private readonly store: AgentsStore,
    private readonly foundation: FoundationStore,
    private readonly models: ModelLookup,
    /** Feedback counts for THOMPSON_SAMPLING (FeedbackService). */
    private readonly tallies: FeedbackTallySource,
  ) {}

  async create(principal: Principal, workspace: WorkspaceRef, agentId: string, body: CreateVariationBody, options: WriteOptions = {}): Promise<AgentVariation> {
    const store = options.store ?? this.store;
    const agent = await this.findAgent(workspace, agentId, store);
    const spec = Object.fromEntries(SPEC_FIELDS.map(([path, key, fallback]) => [key, getPath(body, path) ?? fallback])) as Pick<VariationRecord, SpecKey>;
    await this.checkModel(workspace, spec.modelId);
    const record = await store.variations.insert({
      ...newResourceFields(newId('agentVariation'), principal, workspace, body.metadata),
      agentId: agent.id,
      bundleKey: options.bundleKey ?? null,
      ...spec,
    });
    return (await this.withInfo([record], store))[0];
  }

  async list(workspace: WorkspaceRef, agentId: string, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<AgentVariation>> {
    const agent = await this.findAgent(workspace, agentId);
    const result = toPage(await this.store.variations.list(agent.id, page, filter), page, (row) => row);
    return { ...result, items: includeInfo ? await this.withInfo(result.items) : result.items.map((row) => toVariation(row)) };
  }

  /** @param agentId the agent of the path, or undefined on `/agent_variations/{id}` paths */
  async get(workspace: WorkspaceRef, agentId: string | undefined, id: string): Promise<AgentVariation> {
    return (await this.withInfo([await this.find(workspace, agentId, id)]))[0];
  }

  /** @throws AbortedError when If-Match does not match `updatedAt` */
  async update(workspace: WorkspaceRef, agentId: string | undefined, id: string, body: UpdateVariationBody, ifMatch?: string, options: WriteOptions = {}): Promise<AgentVariation> {
    const store = options.store ?? this.store;
    const record = await this.find(workspace, agentId, id, store);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = updatePaths(fields, updateMask, UPDATE_LEAVES, UPDATE_PARENTS);
    const changes: Partial<VariationRecord> = { ...metadataChanges(body.metadata, paths), ...bundleKeyChange(options) };
    for (const [path, key, fallback] of SPEC_FIELDS) {
      if (!touches(paths, path)) continue;
      const inside = paths.filter((candidate) => candidate.startsWith(`${path}.`));
      const whole = inside.length === 0 || paths.some((candidate) => path === candidate || path.startsWith(`${candidate}.`));
      const value = whole ? (getPath(body, path) ?? fallback) : mergeJsonField(record[key] as Record<string, unknown> | null, path, body, inside);
      Object.assign(changes, { [key]: value });
    }
    if (changes.modelId) await this.checkModel(workspace, changes.modelId);
    const updated = await store.variations.update(record.id, { ...changes, updatedAt: new Date() });
    return (await this.withInfo([updated ?? record], store))[0];
  }

  /** Deletes the variation with its assignments and feedback. */
  async delete(workspace: WorkspaceRef, agentId: string | undefined, id: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.find(workspace, agentId, id, store);
    await store.variations.delete(record.id);
  }

  /**
   * The variation an objective of the agent runs: `explicitId` when given
   * (weight 0 included), else the agent's selection mode (selectVariation;
   * THOMPSON_SAMPLING with the feedback counts in memory).
   * @throws NotFoundError for an unknown agent, or an explicit id that is not the agent's
   * @throws FailedPreconditionError when there is nothing to select
   */
  async select(workspace: WorkspaceRef, agentId: string, explicitId?: string, random: RandomSource = Math.random, store: AgentsStore = this.store): Promise<VariationRecord> {
    const agent = await this.findAgent(workspace, agentId, store);
    return selectAgentVariation(agent.id, await store.variations.listByAgent(agent.id), { mode: agent.variationSelectionMode, explicitId, random }, this.tallies);
  }

  /**
   * The variation when it belongs to the workspace (and to `agentId` when given).
   * @throws NotFoundError otherwise
   */
  async find(workspace: WorkspaceRef, agentId: string | undefined, id: string, store: AgentsStore = this.store): Promise<VariationRecord> {
    if (agentId !== undefined) await this.findAgent(workspace, agentId, store);
    const record = inWorkspace(await store.variations.findById(id), workspace, 'agent variation', id);
    if (agentId !== undefined && record.agentId !== agentId) throw NotFoundError.resource('agent variation', id);
    return record;
  }

  private async findAgent(workspace: WorkspaceRef, agentId: string, store: AgentsStore = this.store): Promise<AgentRecord> {
    return inWorkspace(await store.agents.findById(agentId), workspace, 'agent', agentId);
  }

  /** @throws InvalidArgumentError when `modelId` names no model of the workspace */
  private async checkModel(workspace: WorkspaceRef, modelId: string | null): Promise<void> {
    if (!modelId) return;
    if (!(await this.models.findModel(workspace.id, modelId))) {
      throw InvalidArgumentError.forField('spec.modelConfig.modelId', `no model named "${modelId}" exists in this workspace (names are family/model, see GET /v1/models)`);
    }
  }

  /** Full `info` for each variation, with one query per kind of related record. */
  async withInfo(records: VariationRecord[], store: AgentsStore = this.store): Promise<AgentVariation[]> {
    if (!records.length) return [];
    const ids = records.map((record) => record.id);
    // One query after another: `store` may be bound to a transaction, whose
    // single connection must not run two queries at once.
    const assignments = await store.assignments.listByVariations(ids);
    const layerAssignments = await store.memoryLayerAssignments.listByVariations(ids);
    const tallies = await store.feedback.tallies(ids);
    const creators = await this.foundation.profiles.findByIds(records.map((record) => record.profileId));
    const agents = await store.agents.findByIds([...new Set(records.map((record) => record.agentId))]);
    const ofIds = (key: 'agentId' | 'toolId' | 'toolSetId') => [...new Set(assignments.flatMap((row) => (row[key] ? [row[key]] : [])))];
    const subAgents = await store.agents.findByIds(ofIds('agentId'));
    const tools = await store.tools.findByIds(ofIds('toolId'));
    const toolSets = await store.toolSets.findByIds(ofIds('toolSetId'));
    const layers = await store.memoryLayers.findByIds([...new Set(layerAssignments.map((row) => row.memoryLayerId))]);
    const names: NameIndex = new Map(
      [...agents, ...subAgents, ...tools, ...toolSets, ...layers.map((layer) => layer.record)].map((row) => [row.id, { id: row.id, name: row.name }]),
    );
    const models = new Map<string, Awaited<ReturnType<ModelLookup['findModel']>>>();
    for (const modelId of new Set(records.flatMap((record) => (record.modelId ? [record.modelId] : [])))) {
      models.set(modelId, await this.models.findModel(records[0].workspaceId, modelId));
    }
    return records.map((record) =>
      toVariation(record, {
        agent: names.get(record.agentId) ?? { id: record.agentId, name: '' },
        assignments: assignments.filter((row) => row.variationId === record.id),
        memoryLayerAssignments: layerAssignments.filter((row) => row.variationId === record.id),
        names,
        createdBy: creators.get(record.profileId ?? '') ?? null,
        tally: tallies.get(record.id) ?? { positive: 0, negative: 0 },
        model: record.modelId ? (models.get(record.modelId) ?? null) : null,
      }),
    );
  }
}
