// Agent schedules (spec 2.15, api-decisions.md "Schedules"): validates creates
// and updates field by field, then hands the whole configuration to the
// schedule actor through the command port; reads come from the read model the
// actor projects. It never writes the table, and never computes info: the
// actor owns the row, its timer and its counters.
import { AgentStatus, type AgentRecord } from '../agents/records';
import { inWorkspace, updatePaths } from '../agents/write-options';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import { newId } from '../ids';
import { startKeyOf } from '../objectives/objective.service';
import type { AgentScheduleArchive } from '../ports/agent-schedules';
import type { AgentsStore } from '../ports/agents-store';
import type { ScheduleCommandPort, ScheduleConfiguration } from '../ports/schedule-commands';
import type { ScheduleListFilter, SchedulesStore } from '../ports/schedules-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { getPath, touches } from '../resource/update-mask';
import {
  DEFAULT_UPCOMING, type AgentSchedule, type CreateScheduleBody, type TriggerScheduleResponse, type UpcomingFireTimes, type UpdateScheduleBody,
} from '../schemas/schedules.schema';
import { upcomingFireTimes } from './fire-times';
import { checkCatchupWindow, checkData, checkInitialMessage, checkOverlapPolicy, checkRules, checkStatus } from './schedule-input';
import { toAgentSchedule, toFireTime } from './schedule-mappers';
import type { ScheduleRecord, ScheduleSpec, ScheduleStatus } from './schedule-record';

const ARCHIVED: ScheduleStatus = 'AGENT_SCHEDULE_STATUS_ARCHIVED';

/** The list's filters as the API takes them: an UNSPECIFIED status lists every one. */
export interface ScheduleListQuery extends Omit<ScheduleListFilter, 'status'> {
  status?: ScheduleStatus | 'AGENT_SCHEDULE_STATUS_UNSPECIFIED';
}

export interface ScheduleServiceOptions {
  /** The clock of `upcoming` without `from`. @default () => new Date() */
  now?: () => Date;
}

/** The spec paths a PATCH may name; `spec` names them all. */
const SPEC_PATHS = [
  'spec.initialMessage', 'spec.schedule', 'spec.data', 'spec.overlapPolicy', 'spec.status', 'spec.variationId', 'spec.catchupWindow',
] as const;
const UPDATE_LEAVES = [...METADATA_UPDATE_PATHS, ...SPEC_PATHS];

type SpecInput = Partial<Record<keyof ScheduleSpec, unknown>>;

/** Where `spec.variationId` is looked up: the service's store, or a bundle's transaction. */
type VariationLookup = Pick<AgentsStore['variations'], 'findById'>;

/** A schedule a bundle declares, checked and in canonical form: what its apply hands to the actor. */
export interface DeclaredSchedule {
  name: string;
  externalId: string | null;
  labels: Record<string, string>;
  spec: ScheduleSpec;
}

function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

export class ScheduleService implements AgentScheduleArchive {
  private readonly now: () => Date;

  constructor(
    private readonly agents: Pick<AgentsStore, 'agents' | 'variations'>,
    private readonly schedules: SchedulesStore,
    private readonly commands: ScheduleCommandPort,
    options: ScheduleServiceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Creates a schedule of the agent through its actor, which projects it and sets its timer.
   * @param options.idempotencyKey the request's Idempotency-Key: the actor applies the command once
   * @throws NotFoundError for an agent that is not the workspace's
   * @throws FailedPreconditionError for an ARCHIVED agent
   * @throws InvalidArgumentError naming the first offending field
   * @throws UnavailableError from the port when this node runs no actor runtime
   */
  async create(
    principal: Principal, workspace: WorkspaceRef, agentId: string, body: CreateScheduleBody,
    options: { idempotencyKey?: string; bundleKey?: string | null } = {},
  ): Promise<AgentSchedule> {
    const agent = await this.findAgent(workspace, agentId);
    if (agent.status === AgentStatus.ARCHIVED) throw new FailedPreconditionError(`agent ${agent.id} is ARCHIVED; schedules run DRAFT and PUBLISHED agents`);
    const metadata = newMetadataFields(body.metadata);
    const spec = await this.checkSpec(agent, body.spec, SPEC_PATHS, null);
    const now = this.now().toISOString();
    const configuration: ScheduleConfiguration = {
      id: newId('schedule'), accountId: workspace.accountId, workspaceId: workspace.id, agentId: agent.id, profileId: principal.profileId,
      ...metadata, bundleKey: options.bundleKey ?? null, spec, createdAt: now, updatedAt: now,
    };
    const commandId = options.idempotencyKey ? `create:${startKeyOf(principal, options.idempotencyKey)}` : undefined;
    return toAgentSchedule(await this.commands.configure(configuration, commandId ? { commandId } : {}));
  }

  /** @throws NotFoundError for an agent or schedule that is not the workspace's */
  async get(workspace: WorkspaceRef, agentId: string, id: string): Promise<AgentSchedule> {
    await this.findAgent(workspace, agentId);
    return toAgentSchedule(await this.find(workspace, agentId, id));
  }

  /** The agent's schedules, in id (creation) order, archived ones included unless filtered. */
  async list(workspace: WorkspaceRef, agentId: string, page: PageRequest, query: ScheduleListQuery): Promise<Page<AgentSchedule>> {
    await this.findAgent(workspace, agentId);
    const filter: ScheduleListFilter = { ...query, status: query.status === 'AGENT_SCHEDULE_STATUS_UNSPECIFIED' ? undefined : query.status };
    return toPage(await this.schedules.list(workspace.id, agentId, filter, page), page, toAgentSchedule);
  }

  /**
   * Applies a PATCH (updateMask semantics as for variations; a masked field absent from the
   * body returns to its default) and hands the result to the actor.
   * @throws FailedPreconditionError for an ARCHIVED schedule
   * @throws AbortedError when If-Match does not match `updatedAt`
   * @throws InvalidArgumentError naming the first offending field
   */
  async update(workspace: WorkspaceRef, agentId: string, id: string, body: UpdateScheduleBody, ifMatch?: string): Promise<AgentSchedule> {
    const agent = await this.findAgent(workspace, agentId);
    const record = await this.find(workspace, agentId, id);
    this.checkNotArchived(record, 'changed');
    checkIfMatch(ifMatch, { updatedAt: new Date(record.updatedAt) });
    const { updateMask, ...fields } = body;
    const paths = updatePaths(fields, updateMask, UPDATE_LEAVES, ['spec']);
    const touched = SPEC_PATHS.filter((path) => touches(paths, path));
    const spec = await this.checkSpec(agent, fields.spec ?? {}, touched, record.spec);
    const { name, externalId, labels } = metadataChanges(body.metadata, paths);
    return this.configure(record, { ...definedOnly({ name, externalId, labels }), spec });
  }

  /** Archives the schedule (DELETE); an archived one is answered as it is. */
  async archive(workspace: WorkspaceRef, agentId: string, id: string): Promise<AgentSchedule> {
    await this.findAgent(workspace, agentId);
    const record = await this.find(workspace, agentId, id);
    if (record.spec.status === ARCHIVED) return toAgentSchedule(record);
    return this.configure(record, { spec: { ...record.spec, status: ARCHIVED } });
  }

  /**
   * Fires once now, honouring the overlap policy; a PAUSED schedule may be triggered
   * (pausing stops the timer, not a manual run).
   * @throws FailedPreconditionError for an ARCHIVED schedule or agent
   * @throws UnavailableError from the port when this node runs no actor runtime
   */
  async trigger(principal: Principal, workspace: WorkspaceRef, agentId: string, id: string, options: { idempotencyKey?: string } = {}): Promise<TriggerScheduleResponse> {
    const agent = await this.findAgent(workspace, agentId);
    const record = await this.find(workspace, agentId, id);
    this.checkNotArchived(record, 'triggered');
    if (agent.status === AgentStatus.ARCHIVED) throw new FailedPreconditionError(`agent ${agent.id} is ARCHIVED; objectives run on DRAFT and PUBLISHED agents`);
    const commandId = options.idempotencyKey ? `trigger:${startKeyOf(principal, options.idempotencyKey)}` : undefined;
    const reply = await this.commands.trigger(record.id, commandId ? { commandId } : {});
    return { schedule: toAgentSchedule(reply.schedule), ...(reply.objectiveId ? { objectiveId: reply.objectiveId } : {}) };
  }

  /**
   * The next `count` fire times strictly after `from` (default now), from the rules alone:
   * a PAUSED or ARCHIVED schedule answers what its rules would fire.
   */
  async upcoming(workspace: WorkspaceRef, agentId: string, id: string, query: { count?: number; from?: string }): Promise<UpcomingFireTimes> {
    await this.findAgent(workspace, agentId);
    const record = await this.find(workspace, agentId, id);
    const from = query.from === undefined ? this.now() : new Date(query.from);
    if (Number.isNaN(from.getTime())) throw InvalidArgumentError.forField('from', 'must be a date-time such as 2027-03-14T07:00:00Z');
    return { fireTimes: upcomingFireTimes(record.spec.schedule, from, query.count ?? DEFAULT_UPCOMING).map(toFireTime) };
  }

  // Configuration bundles (src/bundles) declare schedules: they are checked
  // inside the bundle's transaction and handed to the actors after it commits.

  /**
   * Checks a schedule a bundle declares as create checks it, against the agent
   * and its variations as the bundle's transaction sees them (fields named from
   * `metadata` and `spec`; the bundle prefixes its document path).
   * @throws InvalidArgumentError naming the first offending field
   */
  async checkDeclared(agent: AgentRecord, body: CreateScheduleBody, variations: VariationLookup): Promise<DeclaredSchedule> {
    const metadata = newMetadataFields(body.metadata);
    return { ...metadata, spec: await this.checkSpec(agent, body.spec, SPEC_PATHS, null, variations) };
  }

  /** Creates a schedule a bundle declared, under the id its plan drew, carrying the bundleKey. */
  async createDeclared(principal: Principal, workspace: WorkspaceRef, agentId: string, id: string, declared: DeclaredSchedule, bundleKey: string): Promise<AgentSchedule> {
    const now = this.now().toISOString();
    return toAgentSchedule(await this.commands.configure({
      id, accountId: workspace.accountId, workspaceId: workspace.id, agentId, profileId: principal.profileId,
      ...declared, bundleKey, createdAt: now, updatedAt: now,
    }));
  }

  /** Replaces a schedule's metadata and spec with a bundle's declaration, and gives it the bundleKey (adopting takes it over). */
  replaceDeclared(record: ScheduleRecord, declared: DeclaredSchedule, bundleKey: string): Promise<AgentSchedule> {
    return this.configure(record, { ...declared, bundleKey });
  }

  /** Archives a schedule its bundle no longer declares; its agent may be gone already (deleted by the bundle). */
  archiveRecord(record: ScheduleRecord): Promise<AgentSchedule> {
    if (record.spec.status === ARCHIVED) return Promise.resolve(toAgentSchedule(record));
    return this.configure(record, { spec: { ...record.spec, status: ARCHIVED } });
  }

  /**
   * Archives every schedule of the agent that is not ARCHIVED, in creation order, as
   * DELETE of each does (AgentScheduleArchive: deleting the agent, src/agents).
   * @throws the first error of a schedule's actor; the ones before it stay archived, and calling again archives the rest
   */
  async archiveSchedulesOf(workspaceId: string, agentId: string): Promise<void> {
    for (const record of await this.liveOfAgent(workspaceId, agentId)) await this.archiveRecord(record);
  }

  /** The agent's schedules, ARCHIVED ones left out, in creation order. */
  liveOfAgent(workspaceId: string, agentId: string): Promise<ScheduleRecord[]> {
    return this.schedules.listLiveOfAgent(workspaceId, agentId);
  }

  /** The workspace's schedules carrying the bundleKey, ARCHIVED ones left out, in creation order. */
  ofBundle(workspaceId: string, bundleKey: string): Promise<ScheduleRecord[]> {
    return this.schedules.listOfBundle(workspaceId, bundleKey);
  }

  /** The schedules of these agents named one of `names`, ARCHIVED ones left out, whatever their bundle. */
  named(workspaceId: string, agentIds: readonly string[], names: readonly string[]): Promise<ScheduleRecord[]> {
    return this.schedules.listNamed(workspaceId, agentIds, names);
  }

  /**
   * The spec with the `paths` fields taken from `input` (checked, defaults applied)
   * and the others kept from `stored` (null on create: every field is checked).
   */
  private async checkSpec(
    agent: AgentRecord, input: SpecInput, paths: readonly string[], stored: ScheduleSpec | null, variations: VariationLookup = this.agents.variations,
  ): Promise<ScheduleSpec> {
    const given = (path: (typeof SPEC_PATHS)[number]) => stored === null || paths.includes(path);
    const value = (path: string) => getPath({ spec: input }, path);
    const spec: ScheduleSpec = stored ? structuredClone(stored) : ({} as ScheduleSpec);
    if (given('spec.initialMessage')) spec.initialMessage = checkInitialMessage(value('spec.initialMessage') as string | undefined);
    if (given('spec.schedule')) spec.schedule = checkRules(value('spec.schedule'));
    if (given('spec.overlapPolicy')) spec.overlapPolicy = checkOverlapPolicy(value('spec.overlapPolicy') as string | undefined);
    if (given('spec.status')) spec.status = checkStatus(value('spec.status') as string | undefined);
    if (given('spec.catchupWindow')) spec.catchupWindow = checkCatchupWindow(value('spec.catchupWindow') as string | undefined);
    if (given('spec.data')) {
      const data = value('spec.data');
      checkData(data, agent);
      if (data === undefined) delete spec.data;
      else spec.data = data;
    }
    if (given('spec.variationId')) {
      const variationId = value('spec.variationId') as string | undefined;
      if (variationId !== undefined) await this.checkVariation(agent, variationId, variations);
      if (variationId === undefined) delete spec.variationId;
      else spec.variationId = variationId;
    }
    return spec;
  }

  /** @throws InvalidArgumentError naming `spec.variationId` when it is not a variation of the agent (another workspace's alike) */
  private async checkVariation(agent: AgentRecord, variationId: string, variations: VariationLookup): Promise<void> {
    const variation = await variations.findById(variationId);
    if (!variation || variation.agentId !== agent.id || variation.workspaceId !== agent.workspaceId) {
      throw InvalidArgumentError.forField('spec.variationId', `${variationId} is not a variation of agent ${agent.id}`);
    }
  }

  /** Hands the stored configuration with `changes` to the actor, as updated now. */
  private async configure(record: ScheduleRecord, changes: Partial<ScheduleConfiguration>): Promise<AgentSchedule> {
    const { info: _info, revision: _revision, ...configuration } = record;
    const updated: ScheduleConfiguration = { ...configuration, ...changes, updatedAt: this.now().toISOString() };
    return toAgentSchedule(await this.commands.configure(updated));
  }

  private checkNotArchived(record: ScheduleRecord, what: string): void {
    if (record.spec.status === ARCHIVED) throw new FailedPreconditionError(`schedule ${record.id} is ARCHIVED and cannot be ${what}`);
  }

  private async find(workspace: WorkspaceRef, agentId: string, id: string): Promise<ScheduleRecord> {
    const record = await this.schedules.get(workspace.id, agentId, id);
    if (!record) throw NotFoundError.resource('schedule', id);
    return record;
  }

  /** @throws NotFoundError unless the agent is one of the workspace's */
  private async findAgent(workspace: WorkspaceRef, agentId: string): Promise<AgentRecord> {
    return inWorkspace(await this.agents.agents.findById(agentId), workspace, 'agent', agentId);
  }
}
