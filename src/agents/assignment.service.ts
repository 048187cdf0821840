// Variation assignments (api-decisions.md "Variation assignments"): a tool, a
// tool set or a sub-agent (exactly one; no agent may reach itself through
// sub-agents), and memory layers placed in the variation's stack.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from '../errors';
import { newId } from '../ids';
import type { AgentsStore, SubAgentEdge } from '../ports/agents-store';
import type { CreateAssignmentBody, CreateMemoryLayerAssignmentBody, MemoryLayerAssignment, UpdateMemoryLayerAssignmentBody, VariationAssignment } from '../schemas/agents.schema';
import { toAssignment, toMemoryLayerAssignment } from './mappers';
import type { MemoryLayerAssignmentRecord } from './records';
import type { VariationService } from './variation.service';
import { inWorkspace, type WriteOptions } from './write-options';

/** True when `to` reaches `from` through the edges, i.e. adding from → to closes a cycle. */
export function closesCycle(edges: readonly SubAgentEdge[], from: string, to: string): boolean {
  const next = new Map<string, string[]>();
  for (const edge of edges) next.set(edge.agentId, [...(next.get(edge.agentId) ?? []), edge.subAgentId]);
  const seen = new Set<string>();
  const pending = [to];
  while (pending.length) {
    const current = pending.pop()!;
    if (current === from) return true;
    if (seen.has(current)) continue;
    seen.add(current);
    pending.push(...(next.get(current) ?? []));
  }
  return false;
}

/** The largest position (a Postgres integer, as the body schema's maximum). */
const MAX_POSITION = 2_147_483_647;

/**
 * The default position of a new memory layer: above the top of the stack.
 * @throws FailedPreconditionError when the top already holds the largest position
 */
function positionAbove(top: number | null): number {
  if (top === null) return 0;
  if (top >= MAX_POSITION) throw new FailedPreconditionError(`the top of the stack holds the largest position (${MAX_POSITION}): give position`);
  return top + 1;
}

export class AssignmentService {
  constructor(
    private readonly store: AgentsStore,
    private readonly variations: VariationService,
  ) {}

  /**
   * Assigns a tool, tool set or sub-agent to a variation.
   * @throws InvalidArgumentError unless exactly one of agentId, toolId, toolSetId is set
   * @throws NotFoundError when the target is not in the workspace
   * @throws FailedPreconditionError when a sub-agent would make the agent its own sub-agent
   * @throws AlreadyExistsError when the target is already assigned
   */
  async create(principal: Principal, workspace: WorkspaceRef, agentId: string | undefined, variationId: string, body: CreateAssignmentBody, options: WriteOptions = {}): Promise<VariationAssignment> {
    const targets = [body.agentId, body.toolId, body.toolSetId].filter((target) => target !== undefined);
    if (targets.length !== 1) throw InvalidArgumentError.forField('agentId', 'exactly one of agentId, toolId and toolSetId must be set');
    return (options.store ?? this.store).transaction(async (store) => {
      const variation = await this.variations.find(workspace, agentId, variationId, store);
      const name = await this.checkTarget(workspace, variation.agentId, body, store);
      const record = await store.assignments.insert({
        id: newId('variationAssignment'),
        accountId: workspace.accountId,
        workspaceId: workspace.id,
        variationId: variation.id,
        agentId: body.agentId ?? null,
        toolId: body.toolId ?? null,
        toolSetId: body.toolSetId ?? null,
        requiresApproval: body.requiresApproval ?? null,
        profileId: principal.profileId,
        createdAt: new Date(),
      });
      return toAssignment(record, new Map([[targets[0]!, { id: targets[0]!, name }]]));
    });
  }

  async delete(workspace: WorkspaceRef, agentId: string | undefined, variationId: string, id: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const variation = await this.variations.find(workspace, agentId, variationId, store);
    const record = await store.assignments.findById(id);
    if (!record || record.variationId !== variation.id) throw NotFoundError.resource('variation assignment', id);
    await store.assignments.delete(record.id);
  }

  /**
   * Attaches a memory layer; `position` defaults to the top of the stack.
   * @throws NotFoundError when the layer is not in the workspace
   * @throws PermissionDeniedError for a system-managed layer (spec 7 rule 6: the
   *   same refusal as mutating one, see MemoryLayerService.findMutable)
   */
  async createMemoryLayerAssignment(principal: Principal, workspace: WorkspaceRef, agentId: string | undefined, variationId: string, body: CreateMemoryLayerAssignmentBody, options: WriteOptions = {}): Promise<MemoryLayerAssignment> {
    return (options.store ?? this.store).transaction(async (store) => {
      const variation = await this.variations.find(workspace, agentId, variationId, store);
      const layer = await store.memoryLayers.findById(body.memoryLayerId);
      inWorkspace(layer?.record ?? null, workspace, 'memory layer', body.memoryLayerId);
      if (layer!.systemManaged) {
        throw new PermissionDeniedError(`memory layer ${body.memoryLayerId} is system-managed and cannot be assigned to a variation`);
      }
      const top = await store.memoryLayerAssignments.maxPosition(variation.id);
      const now = new Date();
      const record = await store.memoryLayerAssignments.insert({
        id: newId('memoryLayerAssignment'),
        accountId: workspace.accountId,
        workspaceId: workspace.id,
        variationId: variation.id,
        memoryLayerId: body.memoryLayerId,
        position: body.position ?? positionAbove(top),
        profileId: principal.profileId,
        createdAt: now,
        updatedAt: now,
      });
      return toMemoryLayerAssignment(record, new Map([[layer!.record.id, layer!.record]]));
    });
  }

  /** Moves a memory layer to another position of the stack. */
  async updateMemoryLayerAssignment(workspace: WorkspaceRef, agentId: string | undefined, variationId: string, id: string, body: UpdateMemoryLayerAssignmentBody, options: WriteOptions = {}): Promise<MemoryLayerAssignment> {
    const store = options.store ?? this.store;
    const record = await this.findMemoryLayerAssignment(workspace, agentId, variationId, id, store);
    const updated = (await store.memoryLayerAssignments.update(record.id, { position: body.position, updatedAt: new Date() })) ?? record;
    const [layer] = await store.memoryLayers.findByIds([record.memoryLayerId]);
    return toMemoryLayerAssignment(updated, new Map(layer ? [[layer.record.id, layer.record]] : []));
  }

  async deleteMemoryLayerAssignment(workspace: WorkspaceRef, agentId: string | undefined, variationId: string, id: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.findMemoryLayerAssignment(workspace, agentId, variationId, id, store);
    await store.memoryLayerAssignments.delete(record.id);
  }

  /** How many variations hold the memory layer (the memory area's force-delete check). */
  async countVariationAssignments(memoryLayerId: string, store: AgentsStore = this.store): Promise<number> {
    return store.memoryLayerAssignments.countByMemoryLayer(memoryLayerId);
  }

  private async findMemoryLayerAssignment(workspace: WorkspaceRef, agentId: string | undefined, variationId: string, id: string, store: AgentsStore): Promise<MemoryLayerAssignmentRecord> {
    const variation = await this.variations.find(workspace, agentId, variationId, store);
    const record = await store.memoryLayerAssignments.findById(id);
    if (!record || record.variationId !== variation.id) throw NotFoundError.resource('memory layer assignment', id);
    return record;
  }

  /** Checks the target exists in the workspace (and, for a sub-agent, forms no cycle); returns its name. */
  private async checkTarget(workspace: WorkspaceRef, ownerAgentId: string, body: CreateAssignmentBody, store: AgentsStore): Promise<string> {
    if (body.toolId) return inWorkspace(await store.tools.findById(body.toolId), workspace, 'tool', body.toolId).name;
    if (body.toolSetId) return inWorkspace(await store.toolSets.findById(body.toolSetId), workspace, 'tool set', body.toolSetId).name;
    const subAgent = inWorkspace(await store.agents.findById(body.agentId!), workspace, 'agent', body.agentId!);
    await store.assignments.lockSubAgentGraph(workspace.id);
    if (subAgent.id === ownerAgentId) throw new FailedPreconditionError(`agent ${ownerAgentId} cannot be its own sub-agent`);
    if (closesCycle(await store.assignments.subAgentEdges(workspace.id), ownerAgentId, subAgent.id)) {
      throw new FailedPreconditionError(`assigning agent ${subAgent.id} as a sub-agent of agent ${ownerAgentId} would create a cycle`);
    }
    return subAgent.name;
  }
}
