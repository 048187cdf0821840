// What every step of a bundle apply works with: the caller, the workspace, the
// transaction, the services (bound to it through WriteOptions or built on its
// stores) and the plan being recorded.
import { InvalidArgumentError } from '../errors';
import type { AgentService } from '../agents/agent.service';
import type { AssignmentService } from '../agents/assignment.service';
import type { VariationService } from '../agents/variation.service';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { MemoryEntryService } from '../memory/memory-entry.service';
import type { MemoryLayerService } from '../memory/memory-layer.service';
import type { BundleTransaction } from '../ports/bundle-store';
import type { MemoryStore } from '../ports/memory-store';
import type { ScheduleService } from '../schedules/schedule.service';
import type { ToolSetService } from '../tools/tool-set.service';
import type { ToolService } from '../tools/tool.service';
import { sameConfiguration, type PlanRecorder } from './plan';

/** Memory services over one MemoryStore (the memory area's services take no transaction option). */
export interface MemoryServices {
  layers: MemoryLayerService;
  entries: MemoryEntryService;
}

/** The services a bundle drives; agents and tools join a transaction through WriteOptions. */
export interface BundleServices {
  agents: AgentService;
  variations: VariationService;
  assignments: AssignmentService;
  tools: ToolService;
  toolSets: ToolSetService;
  /** Schedules are applied through their actors once the transaction has committed (apply-schedules.ts). */
  schedules: ScheduleService;
  /** Memory services built on a store bound to the apply's transaction. */
  memoryOn(store: MemoryStore): MemoryServices;
}

export interface ApplyContext {
  principal: Principal;
  workspace: WorkspaceRef;
  bundleKey: string;
  adopt: boolean;
  tx: BundleTransaction;
  services: BundleServices;
  memory: MemoryServices;
  plan: PlanRecorder;
}

/** The write options that bind an agents/tools service call to the apply. */
export function owned(context: ApplyContext): { store: BundleTransaction['agents']; bundleKey: string } {
  return { store: context.tx.agents, bundleKey: context.bundleKey };
}

export const FULL_METADATA_MASK = 'metadata.name,metadata.externalId,metadata.labels';

/**
 * Creates the resource when there is no row, else updates it tentatively: an
 * update that leaves the configuration as it was is undone, so re-applying a
 * document touches no updatedAt.
 * @returns the resource id
 */
export async function applyOne<W extends { metadata: { id: string } }>(
  context: ApplyContext,
  type: Parameters<PlanRecorder['record']>[1],
  name: string,
  step: { row: { id: string } | undefined; before: () => W; create: () => Promise<W>; update: (id: string) => Promise<W> },
): Promise<string> {
  if (!step.row) {
    const created = await step.create();
    context.plan.record('created', type, name, created.metadata.id);
    return created.metadata.id;
  }
  const id = step.row.id;
  const changed = await context.tx.tentatively(async () => {
    const keep = !sameConfiguration(step.before(), await step.update(id));
    return { value: keep, keep };
  });
  context.plan.record(changed ? 'updated' : 'unchanged', type, name, id);
  return id;
}

/**
 * Runs one step of the document's item at `field` (e.g. `tools[2]`), so that a
 * field problem reported by a resource service names the document's field.
 * @throws InvalidArgumentError with every field prefixed by `field`
 */
export async function atField<T>(field: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const violations = error.fieldViolations.map((violation) => ({ ...violation, field: `${field}.${violation.field}` }));
    const message = violations.length ? `${violations[0].field}: ${violations[0].description}` : `${field}: ${error.message}`;
    throw new InvalidArgumentError(message, violations, { cause: error });
  }
}
