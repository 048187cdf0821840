// Configuration bundles (api-decisions.md "Search and bundles"): PUT applies a
// document declaratively in one transaction (create, update, delete so that the
// resources carrying the bundleKey match it), GET rebuilds the document, DELETE
// removes the bundle's resources. Resources of no bundle or another bundle are
// refused unless the caller adopts them. Schedules are checked and planned in
// that transaction but applied through their actors after it commits
// (apply-schedules.ts explains why and what a failure then means).
import type { Principal } from '../auth/principal';
import { scopeAllows } from '../auth/scopes';
import type { WorkspaceRef } from '../auth/workspace-access';
import { NotFoundError, PermissionDeniedError } from '../errors';
import type { BundleScope, BundleStore, BundleTransaction } from '../ports/bundle-store';
import type { BundleDocument, BundlePlan } from '../schemas/bundles.schema';
import { applyAgents, applyVariations } from './apply-agents';
import { applyMemoryLayers, refuseSystemManagedTakeover } from './apply-memory';
import { applyScheduleChanges, planScheduleArchives, planSchedules, withArchivesOfDeletedAgents, type ScheduleChangePlan } from './apply-schedules';
import { applyToolSets, applyTools, type NameTable } from './apply-tools';
import { checkDocument, documentNames } from './bundle-document';
import { exportBundle, type OwnedRows } from './bundle-export';
import type { ApplyContext, BundleServices } from './context';
import { matchDeclared, type Matching, type OwnedRow } from './ownership';
import { PlanRecorder } from './plan';

export interface ApplyOptions {
  /** Answer the plan and change nothing. */
  dryRun?: boolean;
  /** Take over same-named resources of no bundle or another bundle. */
  adopt?: boolean;
}

/** Thrown inside a dry run's transaction to roll it back, carrying the plan out. */
class DryRunRollback extends Error {
  constructor(readonly plan: BundlePlan) {
    super('dry run');
  }
}

/**
 * The other scopes a bundle needs besides agents:<verb> (the route's own):
 * tools:<verb> when it holds tools or tool sets, memory:<verb> when it holds memory layers.
 * @throws PermissionDeniedError naming the missing scope
 */
function requireScopes(principal: Principal, verb: 'read' | 'manage', holds: { tools: boolean; memory: boolean }): void {
  if (holds.tools && !scopeAllows(principal.scopes, `tools:${verb}`)) {
    throw new PermissionDeniedError(`this credential lacks the tools:${verb} scope (the bundle holds tools or tool sets)`);
  }
  if (holds.memory && !scopeAllows(principal.scopes, `memory:${verb}`)) {
    throw new PermissionDeniedError(`this credential lacks the memory:${verb} scope (the bundle holds memory layers)`);
  }
}

function table(declared: Map<string, string>, rows: readonly OwnedRow[], matching: Matching<OwnedRow>): NameTable {
  return { declared, rows, stale: new Set(matching.stale.map((row) => row.id)) };
}

export class BundleService {
  constructor(
    private readonly store: BundleStore,
    private readonly services: BundleServices,
  ) {}

  /**
   * Applies the document; answers the plan. Re-applying the same document
   * plans no change, touches no updatedAt and asks no schedule actor. Applies
   * of one bundle are serialised.
   *
   * Schedules are applied last, through their actors, once the transaction
   * holding every other change has committed (a dry run applies none). When
   * one of them fails then, the other resources stay committed, the schedule
   * changes before it are done, and the apply answers its error; applying the
   * same document again completes it (schedules are matched by name).
   * @throws InvalidArgumentError for a duplicate name, an unknown reference or a bad field (named with its document path)
   * @throws FailedPreconditionError naming a resource of no bundle or another bundle, unless `adopt`
   * @throws PermissionDeniedError without tools:manage or memory:manage when the bundle needs them
   * @throws UnavailableError after the commit, when the bundle changes schedules on a node without an actor runtime
   */
  async apply(principal: Principal, workspace: WorkspaceRef, bundleKey: string, document: BundleDocument, options: ApplyOptions = {}): Promise<BundlePlan> {
    checkDocument(document);
    try {
      return await this.store.serialised(
        workspace.id, bundleKey,
        async (tx) => {
          const applied = await this.applyIn(tx, principal, workspace, bundleKey, document, options);
          if (options.dryRun) throw new DryRunRollback(applied.plan);
          return applied;
        },
        async ({ plan, schedules }) => {
          await applyScheduleChanges({ principal, workspace, bundleKey, schedules: this.services.schedules }, schedules);
          return plan;
        },
      );
    } catch (error) {
      if (error instanceof DryRunRollback) return error.plan;
      throw error;
    }
  }

  /**
   * The bundle's document as it stands.
   * @throws NotFoundError when no resource carries the bundleKey
   */
  async get(principal: Principal, workspace: WorkspaceRef, bundleKey: string): Promise<BundleDocument> {
    const schedules = await this.services.schedules.ofBundle(workspace.id, bundleKey);
    return this.store.transaction(async (tx) => {
      const rows = await this.ownedRows(tx, workspace, bundleKey, schedules.length > 0);
      requireScopes(principal, 'read', { tools: rows.tools.length + rows.toolSets.length > 0, memory: rows.memoryLayers.length > 0 });
      return exportBundle(tx, rows, bundleKey, schedules);
    });
  }

  /**
   * Deletes every resource carrying the bundleKey, in one transaction; then
   * archives its schedules through their actors (as apply does: a failure
   * there leaves the rest deleted; deleting again archives what is left).
   * @throws NotFoundError when no resource carries it
   */
  async delete(principal: Principal, workspace: WorkspaceRef, bundleKey: string): Promise<void> {
    await this.store.serialised(
      workspace.id, bundleKey,
      async (tx) => {
        const context = this.context(tx, principal, workspace, bundleKey, false, new PlanRecorder(false));
        const schedules = await planScheduleArchives(context);
        const rows = await this.ownedRows(tx, workspace, bundleKey, schedules.length > 0);
        requireScopes(principal, 'manage', { tools: rows.tools.length + rows.toolSets.length > 0, memory: rows.memoryLayers.length > 0 });
        await this.deleteRows(context, rows);
        return withArchivesOfDeletedAgents(context, rows.agents.map((agent) => agent.id), schedules);
      },
      (schedules) => applyScheduleChanges({ principal, workspace, bundleKey, schedules: this.services.schedules }, schedules),
    );
  }

  private async applyIn(
    tx: BundleTransaction, principal: Principal, workspace: WorkspaceRef, bundleKey: string, document: BundleDocument, options: ApplyOptions,
  ): Promise<{ plan: BundlePlan; schedules: ScheduleChangePlan[] }> {
    const names = documentNames(document);
    const scope = (kindNames: string[]): BundleScope => ({ workspaceId: workspace.id, bundleKey, names: kindNames });
    // Read (and so locked, see BundleStore.serialised) before any write, in the
    // order ownedRows reads too: an apply and a delete sharing rows then lock
    // them in one order, and one waits for the other instead of deadlocking.
    const rows: OwnedRows = {
      tools: await tx.findTools(scope(names.tools)),
      toolSets: await tx.findToolSets(scope(names.toolSets)),
      memoryLayers: await tx.findMemoryLayers(scope(names.memoryLayers)),
      agents: await tx.findAgents(scope(names.agents)),
    };
    const owns = (list: Array<{ bundleKey: string | null }>) => list.some((row) => row.bundleKey === bundleKey);
    requireScopes(principal, 'manage', {
      tools: !!(document.tools?.length || document.toolSets?.length) || owns(rows.tools) || owns(rows.toolSets),
      memory: !!document.memoryLayers?.length || owns(rows.memoryLayers),
    });
    const adopt = options.adopt ?? false;
    const declared = <T extends { metadata: { name: string } }>(items: T[] | undefined) => (items ?? []).map((item) => item.metadata.name);
    refuseSystemManagedTakeover(declared(document.memoryLayers), rows.memoryLayers, bundleKey);
    const matching = {
      tools: matchDeclared('tool', declared(document.tools), rows.tools, bundleKey, adopt),
      toolSets: matchDeclared('toolSet', declared(document.toolSets), rows.toolSets, bundleKey, adopt),
      memoryLayers: matchDeclared('memoryLayer', declared(document.memoryLayers), rows.memoryLayers, bundleKey, adopt),
      agents: matchDeclared('agent', declared(document.agents), rows.agents, bundleKey, adopt),
    };
    const context = this.context(tx, principal, workspace, bundleKey, adopt, new PlanRecorder(options.dryRun ?? false));
    await this.deleteRows(context, { tools: matching.tools.stale, toolSets: matching.toolSets.stale, memoryLayers: [], agents: matching.agents.stale });
    const toolIds = await applyTools(context, document.tools ?? [], matching.tools);
    const tools = table(toolIds, rows.tools, matching.tools);
    const toolSets = table(await applyToolSets(context, document.toolSets ?? [], matching.toolSets, tools), rows.toolSets, matching.toolSets);
    const memoryLayers = table(await applyMemoryLayers(context, document.memoryLayers ?? [], matching.memoryLayers), rows.memoryLayers, matching.memoryLayers);
    const agentIds = await applyAgents(context, document.agents ?? [], matching.agents);
    await applyVariations(context, document.agents ?? [], agentIds, { tools, toolSets, memoryLayers, agents: table(agentIds, rows.agents, matching.agents) });
    // Layers go last: a layer may be deleted only once no variation's stack holds it.
    await this.deleteRows(context, { tools: [], toolSets: [], memoryLayers: matching.memoryLayers.stale, agents: [] });
    // Checked and planned here, against the agents and variations as they now are; applied after the commit.
    const planned = await planSchedules(context, document.agents ?? [], agentIds, new Map(rows.agents.map((agent) => [agent.id, agent.name])));
    const schedules = await withArchivesOfDeletedAgents(context, matching.agents.stale.map((agent) => agent.id), planned);
    return { plan: context.plan.result(bundleKey), schedules };
  }

  /** Deletes rows, dependants first: agents (with their variations), tool sets, tools, memory layers. */
  private async deleteRows(context: ApplyContext, rows: OwnedRows): Promise<void> {
    const { principal, workspace, services, tx, plan, memory } = context;
    const options = { store: tx.agents };
    for (const agent of rows.agents) {
      await services.agents.delete(workspace, agent.id, false, options);
      plan.record('deleted', 'agent', agent.name, agent.id);
    }
    for (const toolSet of rows.toolSets) {
      await services.toolSets.delete(principal, workspace, toolSet.id, options);
      plan.record('deleted', 'toolSet', toolSet.name, toolSet.id);
    }
    for (const tool of rows.tools) {
      await services.tools.delete(principal, workspace, tool.id, options);
      plan.record('deleted', 'tool', tool.name, tool.id);
    }
    for (const layer of rows.memoryLayers) {
      await memory.layers.delete(workspace, layer.id, false);
      plan.record('deleted', 'memoryLayer', layer.name, layer.id);
    }
  }

  /**
   * The bundle's rows, read (and locked) in applyIn's order: tools, tool sets, memory layers, agents.
   * @param ownsSchedules the bundle owns schedules (it exists even when they are all it owns)
   */
  private async ownedRows(tx: BundleTransaction, workspace: WorkspaceRef, bundleKey: string, ownsSchedules = false): Promise<OwnedRows> {
    const scope: BundleScope = { workspaceId: workspace.id, bundleKey, names: [] };
    const rows: OwnedRows = {
      tools: await tx.findTools(scope),
      toolSets: await tx.findToolSets(scope),
      memoryLayers: await tx.findMemoryLayers(scope),
      agents: await tx.findAgents(scope),
    };
    if (!ownsSchedules && !Object.values(rows).some((list) => list.length)) throw new NotFoundError(`bundle "${bundleKey}" not found`);
    return rows;
  }

  private context(tx: BundleTransaction, principal: Principal, workspace: WorkspaceRef, bundleKey: string, adopt: boolean, plan: PlanRecorder): ApplyContext {
    return { principal, workspace, bundleKey, adopt, tx, services: this.services, memory: this.services.memoryOn(tx.memory), plan };
  }
}
