// Bundle steps for agent schedules. A schedule's row belongs to its schedule
// actor (it projects the row and keeps the timer in one turn), never to the
// bundle's database transaction. So an apply works in two phases:
//
//   1. inside the transaction, planSchedules checks every declared schedule
//      (fields named by their document path), matches it by name within its
//      agent under the same ownership and adopt rules as every other resource,
//      and records it in the plan: created, updated, unchanged, or deleted for
//      the bundle's schedules the document no longer declares;
//   2. once the transaction has committed (never in a dry run),
//      applyScheduleChanges hands each change to the schedule's actor through
//      the schedule service: archives first, then creates and updates, in
//      document order.
//
// If a change fails in phase 2, the bundle's other resources stay committed
// and the apply answers that error; the changes before it are done. Applying
// the document again completes it: schedules are matched by name, so a done
// change plans as unchanged and only what is missing is asked of an actor.
import { AgentStatus, type AgentRecord } from '../agents/records';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { FailedPreconditionError } from '../errors';
import { newId } from '../ids';
import type { BundleAgent } from '../schemas/bundles.schema';
import type { DeclaredSchedule, ScheduleService } from '../schedules/schedule.service';
import type { ScheduleRecord } from '../schedules/schedule-record';
import { atField, type ApplyContext } from './context';
import { matchDeclared } from './ownership';
import { sameConfiguration } from './plan';

/** One change to hand to a schedule actor once the bundle's transaction has committed. */
export type ScheduleChangePlan =
  | { kind: 'create'; agentId: string; id: string; declared: DeclaredSchedule }
  | { kind: 'update'; record: ScheduleRecord; declared: DeclaredSchedule }
  | { kind: 'archive'; record: ScheduleRecord };

/** What the after-commit phase needs: no transaction. */
export interface ScheduleApplyContext {
  principal: Principal;
  workspace: WorkspaceRef;
  bundleKey: string;
  schedules: ScheduleService;
}

/** True when the declaration leaves the row's metadata and spec as they are. */
function unchanged(record: ScheduleRecord, declared: DeclaredSchedule): boolean {
  const metadata = (fields: { name: string; externalId: string | null; labels: Record<string, string> }) =>
    ({ name: fields.name, externalId: fields.externalId, labels: fields.labels ?? {} });
  return sameConfiguration({ metadata: metadata(record), spec: record.spec }, { metadata: metadata(declared), spec: declared.spec });
}

/**
 * Phase 1 (inside the transaction, after agents and variations are applied):
 * checks and plans the declared schedules of each agent; changes nothing.
 * @param agentIds the id of each document agent, by name
 * @param agentNames names of the agents the bundle had (for the plan of a deleted agent's schedules)
 * @returns the changes to apply once the transaction has committed, archives first
 * @throws InvalidArgumentError naming the document path (`agents[0].schedules[1].spec.schedule.timezone`)
 * @throws FailedPreconditionError for a same-named schedule of no bundle or another bundle without `adopt`,
 *   or a new schedule of an ARCHIVED agent
 */
export async function planSchedules(
  context: ApplyContext, agents: readonly BundleAgent[], agentIds: ReadonlyMap<string, string>, agentNames: ReadonlyMap<string, string>,
): Promise<ScheduleChangePlan[]> {
  const { workspace, bundleKey, adopt, services, tx, plan } = context;
  const names = [...new Set(agents.flatMap((agent) => (agent.schedules ?? []).map((schedule) => schedule.metadata.name)))];
  // Outside the transaction: the actors write these rows, the transaction never does.
  const owned = await services.schedules.ofBundle(workspace.id, bundleKey);
  const named = await services.schedules.named(workspace.id, [...agentIds.values()], names);
  const rows = [...new Map([...owned, ...named].map((row) => [row.id, row])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const kept = new Set<string>();
  const changes: ScheduleChangePlan[] = [];
  for (const [index, agent] of agents.entries()) {
    const declared = agent.schedules ?? [];
    if (!declared.length) continue;
    const agentId = agentIds.get(agent.metadata.name)!;
    const matching = matchDeclared('schedule', declared.map((schedule) => schedule.metadata.name), rows.filter((row) => row.agentId === agentId), bundleKey, adopt);
    for (const row of matching.existing.values()) kept.add(row.id);
    const record = (await tx.agents.agents.findById(agentId)) as AgentRecord;
    for (const [position, schedule] of declared.entries()) {
      const field = `agents[${index}].schedules[${position}]`;
      const name = `${agent.metadata.name}/${schedule.metadata.name}`;
      const checked = await atField(field, () => services.schedules.checkDeclared(record, schedule, tx.agents.variations));
      const row = matching.existing.get(schedule.metadata.name);
      if (!row) {
        if (record.status === AgentStatus.ARCHIVED) {
          throw new FailedPreconditionError(`${field}: agent "${agent.metadata.name}" (${agentId}) is ARCHIVED; schedules run DRAFT and PUBLISHED agents`);
        }
        const id = newId('schedule');
        plan.record('created', 'schedule', name, id);
        changes.push({ kind: 'create', agentId, id, declared: checked });
      } else if (row.bundleKey === bundleKey && unchanged(row, checked)) {
        plan.record('unchanged', 'schedule', name, row.id);
      } else {
        plan.record('updated', 'schedule', name, row.id);
        changes.push({ kind: 'update', record: row, declared: checked });
      }
    }
  }
  const archives: ScheduleChangePlan[] = [];
  for (const row of rows.filter((candidate) => candidate.bundleKey === bundleKey && !kept.has(candidate.id))) {
    const agentName = agentNames.get(row.agentId) ?? (await tx.agents.agents.findById(row.agentId))?.name ?? row.agentId;
    plan.record('deleted', 'schedule', `${agentName}/${row.name}`, row.id);
    archives.push({ kind: 'archive', record: row });
  }
  return [...archives, ...changes];
}

/**
 * Phase 2 (after the commit): hands each change to its schedule's actor, in
 * order, and stops at the first failure (re-applying the document completes it).
 * @throws the first error of the schedule service or its actor (UNAVAILABLE on a node without an actor runtime)
 */
export async function applyScheduleChanges(context: ScheduleApplyContext, changes: readonly ScheduleChangePlan[]): Promise<void> {
  const { principal, workspace, bundleKey, schedules } = context;
  for (const change of changes) {
    if (change.kind === 'archive') await schedules.archiveRecord(change.record);
    else if (change.kind === 'update') await schedules.replaceDeclared(change.record, change.declared, bundleKey);
    else await schedules.createDeclared(principal, workspace, change.agentId, change.id, change.declared, bundleKey);
  }
}

/** The changes DELETE of a bundle applies after its commit: every schedule of the bundle archived. */
export async function planScheduleArchives(context: ApplyContext): Promise<ScheduleChangePlan[]> {
  const rows = await context.services.schedules.ofBundle(context.workspace.id, context.bundleKey);
  return rows.map((record) => ({ kind: 'archive', record }));
}

/**
 * `planned` with archives added for the live schedules of the agents the
 * bundle deletes that it does not already archive: the ones created through
 * the API, as deleting such an agent on its own archives them. Once the agent
 * is gone no call reaches them, and their fires would only fail. They are not
 * in the bundle's plan (they are no resource of the bundle). Archived after
 * the commit like the others: should an actor fail then, that schedule's
 * fires fail (info.lastError) as before.
 */
export async function withArchivesOfDeletedAgents(context: ApplyContext, agentIds: readonly string[], planned: ScheduleChangePlan[]): Promise<ScheduleChangePlan[]> {
  if (!agentIds.length) return planned;
  const archived = new Set(planned.flatMap((change) => (change.kind === 'archive' ? [change.record.id] : [])));
  const extra: ScheduleChangePlan[] = [];
  for (const agentId of agentIds) {
    for (const record of await context.services.schedules.liveOfAgent(context.workspace.id, agentId)) {
      if (!archived.has(record.id)) extra.push({ kind: 'archive', record });
    }
  }
  return [...planned, ...extra];
}
