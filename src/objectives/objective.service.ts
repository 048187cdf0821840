// The objectives API (issue 9 item 1): resolves what an objective runs (agent,
// variation, model, tools, sub-agents, tenant and subject) into an
// ObjectiveStart, hands every state change to the objective's actor through
// the command port, and reads the projected rows back. It never writes the
// objectives tables itself: the actor's projector does, in the actor's turn,
// so what this service reads is what the actor decided.
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FeedbackService } from '../agents/feedback.service';
import { AgentStatus, type AgentRecord, type AssignmentRecord, type VariationRecord } from '../agents/records';
import { selectAgentVariation, type RandomSource } from '../agents/variation-selection';
import { inWorkspace } from '../agents/write-options';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { ObjectiveMemoryResolver } from '../memory/objective-memory';
import { ModelStatus, type ModelRecord } from '../models/records';
import type { AgentRunConfiguration, AgentsStore } from '../ports/agents-store';
import type { ObjectiveCommandPort } from '../ports/objective-commands';
import type { ObjectiveListFilter, ObjectiveRecord, ObjectivesStore } from '../ports/objectives-store';
import { toResourceMetadata } from '../resource/metadata';
import { encodeCursor, toPage, type Page, type PageRequest } from '../resource/pagination';
import type { Feedback } from '../schemas/agents.schema';
import type { CreateObjectiveBody, Objective, ObjectiveEventView, ObjectiveFeedbackBody } from '../schemas/objectives.schema';
import type { TenantService } from '../tenants/tenant.service';
import { schemaViolations } from '../tools/tool-arguments';
import type { ToolRecord } from '../tools/records';
import { modelToolName, uniqueModelToolNames } from '../tools/tool-name';
import { objectiveEventBody, type ObjectiveEventsAddress } from './objective-events';
import { startedObjective, toObjective } from './objective-mappers';
import { objectiveToolOf } from './objective-tool';
import { discoveryOf } from './objective-discovery';
import type { ObjectiveCommand } from './objective.behavior';
import type { PrepareChildInput } from './objective-children';
import { DEFAULT_OBJECTIVE_MAX_TOKENS } from './objective-budgets';
import { DEFAULT_MAX_OBJECTIVE_DEPTH } from './objective-limits';
import { DEFAULT_MODEL_RETRY_BUDGET_MS } from './objective-retries';
import type { ObjectiveStart, ObjectiveTool } from './objective-state';
import type { EpisodicMemoryPort } from '../memory/episodic-memory';
import { compactionOf } from './objective-compaction';
import type { WidgetSessionPrincipal } from '../ports/widget-sessions';
import { widgetAgentDeleted } from '../widgets/widget.service';
import { activeTraceparentField } from '../tracing/tracing';


export interface ObjectiveServiceOptions {
  /** @default DEFAULT_MAX_OBJECTIVE_DEPTH */
  maxDepth?: number;
  /** Deadline of one model call; the behaviour's default when absent. */
  modelCallTimeoutMs?: number;
  /** Longest stretch an objective may run (RUNNING) without finishing or waiting for approval; 0 or absent: no limit. */
  turnTimeoutMs?: number;
  /** How long a model call's retryable failures are retried when the variation sets no `modelRetryBudgetSeconds`. @default DEFAULT_MODEL_RETRY_BUDGET_MS */
  modelRetryBudgetMs?: number;
  /** Token cap of an objective whose variation sets no `maxTokens`; 0: none. @default DEFAULT_OBJECTIVE_MAX_TOKENS */
  defaultMaxTokens?: number;
  /** Test nodes: the model call retries' waits and budget run at this fraction of real time. @default 1 */
  modelRetryTimeScale?: number;
  /** @default Math.random */
  random?: RandomSource;
  /**
   * Creates or refreshes an objective's episodic layer when it is created, so
   * clients see it at once. Absent: the layer appears at the first memory_write.
   */
  episodicMemory?: Pick<EpisodicMemoryPort, 'ensureLayer'>;
}

/** What a new objective asks for, from the API body, a schedule or a parent's sub-agent call. */
export interface ObjectiveRequest {
  agentId: string;
  data?: unknown;
  initialMessage?: string;
  variationId?: string;
  episodicKey?: string;
  memoryLayerIds?: string[];
  tenantId?: string | null;
  subjectId?: string | null;
  parentObjectiveId?: string | null;
  parentToolCallId?: string | null;
  scheduleId?: string | null;
  /** With scheduleId: the nominal fire time (ISO). */
  scheduleFireTime?: string;
  externalId?: string;
  labels?: Record<string, string>;
  /** 0 for the API and schedules. */
  depth?: number;
  /** Given by a parent (its journal holds it) so a re-run resolves the same child. */
  objectiveId?: string;
  startKey?: string | null;
}

/** Who sends a command and its `Idempotency-Key`, when it has one. */
export interface ObjectiveCommandRequest {
  principal?: Pick<Principal, 'profileId'>;
  idempotencyKey?: string;
}

/** The single `prompt` string a sub-agent without an inputDataSchema takes. */
export const PROMPT_ONLY_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: { prompt: { type: 'string', description: 'What the sub-agent should do' } },
  required: ['prompt'],
};

/**
 * The actor's command id for a command sent with an Idempotency-Key: scoped by
 * the caller, and by the command itself, so the same key sent again with
 * another command after the API forgot it (24 h) is a new command, as the API
 * treats it.
 */
function commandIdOf(principal: Pick<Principal, 'profileId'>, idempotencyKey: string, command: ObjectiveCommand): string {
  return `${command.type}:${createHash('sha256').update(`${principal.profileId}\n${idempotencyKey}\n${JSON.stringify(command)}`).digest('base64url')}`;
}

/** The scoped key under which a creating request's Idempotency-Key is kept on the row. */
export function startKeyOf(principal: Pick<Principal, 'profileId'>, idempotencyKey: string): string {
  return createHash('sha256').update(`${principal.profileId}\n${idempotencyKey}`).digest('base64url');
}

export class ObjectiveService {
  private readonly random: RandomSource;

  constructor(
    private readonly agents: AgentsStore,
    private readonly tenants: TenantService,
    private readonly objectives: ObjectivesStore,
    private readonly commands: ObjectiveCommandPort,
    private readonly feedback: FeedbackService,
    private readonly memory: ObjectiveMemoryResolver,
    private readonly options: ObjectiveServiceOptions = {},
  ) {
    this.random = options.random ?? Math.random;
  }

  /**
   * Creates and starts an objective (POST /objectives).
   * @throws InvalidArgumentError naming `data.<field>` when data breaks the agent's inputDataSchema,
   *   naming `memoryLayerIds[i]` for a layer named twice or a system-managed one
   * @throws NotFoundError for an unknown agent or variation, naming `memoryLayerIds[i]` for an unknown layer or another workspace's
   * @throws FailedPreconditionError for an ARCHIVED agent, one without variations, or a DISABLED model
   */
  async create(workspace: WorkspaceRef, principal: Principal, body: CreateObjectiveBody, options: { idempotencyKey?: string } = {}): Promise<Objective> {
    const startKey = options.idempotencyKey ? startKeyOf(principal, options.idempotencyKey) : null;
    if (startKey) {
      // A retry after a crash that lost the idempotency record: the row tells what the first try created.
      const existing = await this.objectives.findByStartKey(workspace.id, startKey);
      if (existing) return toObjective(existing);
    }
    if (body.variationId && body.variation_id && body.variationId !== body.variation_id) {
      throw InvalidArgumentError.forField('variation_id', 'names a different variation than variationId; send one of them');
    }
    // Checked before the tenant and subject are upserted, so a refused request leaves nothing behind.
    const resolved = await this.resolve(workspace, principal.profileId, {
      agentId: body.agentId,
      data: body.data,
      initialMessage: body.initialMessage,
      variationId: body.variationId ?? body.variation_id,
      episodicKey: body.episodicKey,
      memoryLayerIds: body.memoryLayerIds,
      externalId: body.metadata?.externalId,
      labels: body.metadata?.labels,
      startKey,
    });
    const { tenant, subject } = await this.tenants.assert(workspace, { tenant: body.tenant, subject: body.subject }, { profileId: principal.profileId });
    resolved.spec.tenantId = tenant?.id ?? null;
    resolved.spec.subjectId = subject?.id ?? null;
    // The episodic layer's first use (issue 25 item 3): created, or its expiry moved, once the request is valid.
    const episodic = resolved.memory?.episodic;
    if (episodic) await this.options.episodicMemory?.ensureLayer(workspace, episodic);
    // resolve() made the objective's id up just now: nothing was stored for its actor.
    return this.start(resolved, { newObjective: true });
  }

  /**
   * A widget session's objective (the widget host's POST /api/objectives): the
   * widget's agent, the session's tenant and subject (asserted when the session
   * was minted), the session named on the row and in every tool call.
   * @throws FailedPreconditionError when the widget's agent was deleted (widgetAgentDeleted), or as create (an ARCHIVED or unrunnable agent)
   */
  async createForSession(session: WidgetSessionPrincipal, initialMessage: string): Promise<Objective> {
    const workspace = { id: session.workspaceId, accountId: session.accountId };
    const resolved = await this.resolve(workspace, session.profileId, {
      agentId: session.agentId, initialMessage, tenantId: session.tenantId, subjectId: session.subjectId,
    }, { agentMissing: () => widgetAgentDeleted() });
    return this.start({ ...resolved, widgetSessionId: session.sessionId }, { newObjective: true });
  }

  /**
   * An objective as its widget session may see it.
   * @throws NotFoundError unless `session` created it (another session's is as unknown as a missing one)
   */
  async findForSession(session: WidgetSessionPrincipal, id: string): Promise<ObjectiveRecord> {
    const record = await this.objectives.findById(id);
    if (!record || record.widgetSessionId !== session.sessionId || record.workspaceId !== session.workspaceId) throw NotFoundError.resource('objective', id);
    return record;
  }

  /**
   * Readies the actor of an objective that a transactional send will start
   * shortly (a schedule prepares its fire ahead): the start then finds the
   * actor's recovery read done.
   */
  warm(objectiveId: string): void {
    this.commands.warm?.(objectiveId);
  }

  /** Starts a resolved objective and returns its row; used by create and by schedules. */
  async start(start: ObjectiveStart, options: { newObjective?: boolean } = {}): Promise<Objective> {
    const reply = await this.commands.send(start.objectiveId, { type: 'start', start }, { commandId: `start:${start.objectiveId}`, ...options });
    // The turn that wrote the row answered with its info: the row need not be read back.
    return startedObjective(start, reply.info);
  }

  /**
   * What an objective of `request.agentId` runs, resolved from the database now:
   * the variation (explicit or by the agent's mode), its model, prompt and limits,
   * its tools (direct, through tool sets) and sub-agents, its memory stack
   * (ObjectiveMemoryResolver: the variation's layers, then `memoryLayerIds`).
   * `options.agentMissing`: the error for an agent that no longer exists, when
   * the caller did not name it itself (a widget's); else NOT_FOUND.
   */
  async resolve(
    workspace: Pick<WorkspaceRef, 'id' | 'accountId'>, profileId: string, request: ObjectiveRequest, options: { agentMissing?: () => Error } = {},
  ): Promise<ObjectiveStart> {
    const configuration = await this.agents.agents.runConfiguration(request.agentId);
    if (!configuration && options.agentMissing) throw options.agentMissing();
    const agent = inWorkspace(configuration?.agent ?? null, workspace as WorkspaceRef, 'agent', request.agentId);
    if (agent.status === AgentStatus.ARCHIVED) throw new FailedPreconditionError(`agent ${agent.id} is ARCHIVED; objectives run on DRAFT and PUBLISHED agents`);
    if (agent.inputDataSchema && request.data !== undefined) {
      const violations = schemaViolations(request.data, agent.inputDataSchema, 'data');
      if (violations.length) throw new InvalidArgumentError(`data does not satisfy the agent's inputDataSchema: ${violations[0].field} ${violations[0].description}`, violations);
    } else if (agent.inputDataSchema && request.initialMessage === undefined) {
      const violations = schemaViolations({}, agent.inputDataSchema, 'data');
      if (violations.length) throw new InvalidArgumentError(`data is required by the agent's inputDataSchema: ${violations[0].field} ${violations[0].description}`, violations);
    }
    if (request.data === undefined && request.initialMessage === undefined) {
      throw InvalidArgumentError.forField('initialMessage', 'is required when no data is given (the first user message is initialMessage, else data rendered as JSON)');
    }
    const variation = await selectAgentVariation(agent.id, configuration!.variations, { mode: agent.variationSelectionMode, explicitId: request.variationId, random: this.random }, this.feedback);
    const modelId = checkModel(variation, configuration!.models);
    const tools = toolsOf(variation, configuration!);
    const memory = await this.memory.resolve({
      workspace,
      variation: {
        layers: configuration!.memoryLayers.filter((layer) => layer.variationId === variation.id),
        enableEpisodicMemory: variation.enableEpisodicMemory,
        episodicMemoryTtl: variation.episodicMemoryTtl,
      },
      memoryLayerIds: request.memoryLayerIds,
      episodicKey: request.episodicKey,
    });
    const objectiveId = request.objectiveId ?? newId('objective');
    const now = new Date().toISOString();
    const objectiveMetadata = {
      id: objectiveId, accountId: workspace.accountId, workspaceId: workspace.id, profileId, createdAt: now,
      ...(request.externalId !== undefined ? { externalId: request.externalId } : {}),
      ...(request.labels && Object.keys(request.labels).length ? { labels: request.labels } : {}),
    };
    return {
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      agentId: agent.id,
      objectiveId,
      variationId: variation.id,
      metadata: {
        objective: objectiveMetadata,
        agent: toResourceMetadata(agent, workspace.id),
        agentVariation: toResourceMetadata(variation, workspace.id),
      },
      systemPrompt: variation.prompt,
      modelId,
      ...(variation.temperature === null ? {} : { temperature: variation.temperature }),
      tools,
      ...discoveryOf(variation),
      ...(memory ? { memory } : {}),
      limits: {
        maxToolCalls: variation.maxToolCalls ?? 0,
        maxSubObjectives: variation.maxSubObjectives ?? 0,
        maxDepth: this.options.maxDepth ?? DEFAULT_MAX_OBJECTIVE_DEPTH,
        ...(variation.maxModelTurns === null ? {} : { maxModelTurns: variation.maxModelTurns }),
        maxTokens: variation.maxTokens ?? this.options.defaultMaxTokens ?? DEFAULT_OBJECTIVE_MAX_TOKENS,
        ...(variation.maxCostCents ? { maxCostCents: variation.maxCostCents } : {}),
        // A budget the variation sets holds for the whole tree: its sub-agent calls run one at a time.
        ...(variation.maxCostCents || variation.maxTokens ? { sequentialSubAgents: true as const } : {}),
        modelRetryBudgetMs: variation.modelRetryBudgetSeconds === null ? this.options.modelRetryBudgetMs ?? DEFAULT_MODEL_RETRY_BUDGET_MS : variation.modelRetryBudgetSeconds * 1000,
        ...(this.options.modelRetryTimeScale && this.options.modelRetryTimeScale !== 1 ? { modelRetryTimeScale: this.options.modelRetryTimeScale } : {}),
      },
      initialMessage: request.initialMessage ?? JSON.stringify(request.data ?? null),
      outputDefinition: agent.outputDefinition,
      ...(this.options.modelCallTimeoutMs ? { modelCallTimeoutMs: this.options.modelCallTimeoutMs } : {}),
      ...(this.options.turnTimeoutMs ? { turnTimeoutMs: this.options.turnTimeoutMs } : {}),
      spec: {
        agentId: agent.id,
        variationId: variation.id,
        data: request.data ?? null,
        initialMessage: request.initialMessage ?? null,
        episodicKey: request.episodicKey ?? null,
        memoryLayerIds: request.memoryLayerIds ?? [],
        tenantId: request.tenantId ?? null,
        subjectId: request.subjectId ?? null,
        parentObjectiveId: request.parentObjectiveId ?? null,
        scheduleId: request.scheduleId ?? null,
        ...(request.scheduleFireTime ? { scheduleFireTime: request.scheduleFireTime } : {}),
      },
      startKey: request.startKey ?? null,
      depth: request.depth ?? 0,
      parentToolCallId: request.parentToolCallId ?? null,
      ...compactionOf(variation, configuration!.models),
      // The span this runs in (the request, the schedule's fire, the parent's sub-objective), when tracing is on: the objective's trace.
      ...activeTraceparentField(),
    };
  }

  /**
   * The `objective.prepare_child` effect: the start of a sub-agent's child
   * objective, resolved now under the id the parent drew (so a re-run of the
   * effect resolves the same child). The child's own start turn projects its row.
   */
  async prepareChild(input: PrepareChildInput): Promise<ObjectiveStart> {
    const start = await this.resolve({ id: input.workspaceId, accountId: input.accountId }, input.profileId, {
      agentId: input.agentId,
      data: input.data,
      // Absent, not null: the first message is then `data` rendered as JSON.
      initialMessage: input.initialMessage ?? undefined,
      tenantId: input.tenantId,
      subjectId: input.subjectId,
      parentObjectiveId: input.parentObjectiveId,
      parentToolCallId: input.parentToolCallId,
      depth: input.depth,
      objectiveId: input.childObjectiveId,
    });
    return input.widgetSessionId ? { ...start, widgetSessionId: input.widgetSessionId } : start;
  }

  async get(workspace: WorkspaceRef, id: string): Promise<Objective> {
    return toObjective(await this.find(workspace, id));
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ObjectiveListFilter): Promise<Page<Objective>> {
    return toPage(await this.objectives.list(workspace.id, page, filter), page, toObjective);
  }

  /** A follow-up user message: taken at the next turn, or a new run after COMPLETED. */
  async sendMessage(workspace: WorkspaceRef, id: string, content: string, options: ObjectiveCommandRequest = {}): Promise<Objective> {
    return this.command(workspace, id, { type: 'message', content }, options);
  }

  async cancel(workspace: WorkspaceRef, id: string, reason?: string, options: ObjectiveCommandRequest = {}): Promise<Objective> {
    return this.command(workspace, id, { type: 'cancel', ...(reason ? { reason } : {}) }, options);
  }

  async approve(workspace: WorkspaceRef, id: string, toolCallId: string, options: ObjectiveCommandRequest = {}): Promise<Objective> {
    return this.command(workspace, id, { type: 'approve', toolCallId }, options);
  }

  async deny(workspace: WorkspaceRef, id: string, toolCallId: string, memo?: string, options: ObjectiveCommandRequest = {}): Promise<Objective> {
    return this.command(workspace, id, { type: 'deny', toolCallId, ...(memo ? { memo } : {}) }, options);
  }

  /** Feedback on the objective's variation (its Beta score moves). */
  async recordFeedback(workspace: WorkspaceRef, principal: Principal, id: string, body: ObjectiveFeedbackBody): Promise<Feedback> {
    const record = await this.find(workspace, id);
    return this.feedback.recordFeedback(
      workspace,
      { agentId: record.spec.agentId, variationId: record.spec.variationId, objectiveId: record.id, rating: body.rating, ...(body.comment ? { comment: body.comment } : {}) },
      { profileId: principal.profileId },
    );
  }

  /**
   * Events ascending by sequence. The cursor is the last sequence returned
   * (sequences, not ids, order an objective's events: ids come from the clock of
   * whichever node ran the turn).
   */
  async listEvents(workspace: WorkspaceRef, id: string, page: PageRequest): Promise<Page<ObjectiveEventView>> {
    if (page.sortOrder !== 'asc') throw InvalidArgumentError.forField('sortOrder', 'events are listed ascending by sequence');
    const record = await this.find(workspace, id);
    const after = page.after === undefined ? 0 : Number(page.after);
    if (!Number.isSafeInteger(after) || after < 0) throw InvalidArgumentError.forField('cursor', 'is not a cursor returned by this list');
    const rows = await this.objectives.listEvents(record.id, after, page.limit + 1);
    const items = rows.slice(0, page.limit);
    const last = items[items.length - 1];
    return {
      items: items.map((row) => objectiveEventBody(record.metadata, row) as ObjectiveEventView),
      pagination: { nextCursor: rows.length > page.limit && last ? encodeCursor(String(last.sequence), 'asc') : '' },
    };
  }

  /** For the SSE stream: events after `afterSequence`, and whether the objective is finalized. */
  async eventsAfter(workspace: WorkspaceRef, id: string, afterSequence: number, limit: number): Promise<{ events: ObjectiveEventView[]; finalized: boolean }> {
    const record = await this.find(workspace, id);
    const rows = await this.objectives.listEvents(record.id, afterSequence, limit);
    return {
      events: rows.map((row) => objectiveEventBody(record.metadata, row) as ObjectiveEventView),
      finalized: rows.some((row) => row.type === 'FINALIZED'),
    };
  }

  /**
   * Tenant and subject erasure (ObjectiveErasure): each objective naming them
   * erases its own content through its actor (stopping it when it runs), so
   * the actor's state, the rows and the events all say `[erased]`. Run by
   * an erasure job (src/tenants/erasure-run.ts), one batch at a time: the
   * objectives after `page.after` in id order, at most `page.limit`. The job
   * goes on with what this answers: where the objectives' events were published.
   */
  async eraseObjectivesOf(
    target: { workspaceId: string; tenantId?: string; subjectIds: readonly string[] },
    page: { after: string | null; limit: number },
  ): Promise<ObjectiveEventsAddress[]> {
    const objectives = await this.objectives.namedBy(target, page);
    for (const { objectiveId } of objectives) await this.commands.send(objectiveId, { type: 'erase' }, { commandId: `erase:${objectiveId}` });
    return objectives;
  }

  /** The objective when it belongs to the workspace. @throws NotFoundError otherwise */
  async find(workspace: WorkspaceRef, id: string): Promise<ObjectiveRecord> {
    const record = await this.objectives.findById(id);
    if (!record || record.workspaceId !== workspace.id || record.accountId !== workspace.accountId) throw NotFoundError.resource('objective', id);
    return record;
  }

  private async command(workspace: WorkspaceRef, id: string, command: ObjectiveCommand, options: ObjectiveCommandRequest): Promise<Objective> {
    await this.find(workspace, id);
    // The key (with the command it sent) as the command id: the actor applies a retried
    // command once, even when the API's record of the first answer was lost (a crash in between).
    const commandId = options.idempotencyKey && options.principal ? commandIdOf(options.principal, options.idempotencyKey, command) : undefined;
    await this.commands.send(id, command, commandId ? { commandId } : {});
    return this.read(id);
  }

  /** The row after a command: the actor's turn has committed, so its projection is there. */
  private async read(id: string): Promise<Objective> {
    const record = await this.objectives.findById(id);
    if (!record) throw NotFoundError.resource('objective', id);
    return toObjective(record);
  }
}

/** @returns the variation's model id. @throws FailedPreconditionError when it has none, or it is absent or DISABLED */
function checkModel(variation: VariationRecord, models: readonly ModelRecord[]): string {
  if (!variation.modelId) throw new FailedPreconditionError(`variation ${variation.id} has no model (set spec.modelConfig.modelId)`);
  const model = models.find((candidate) => candidate.name === variation.modelId);
  if (!model) throw new FailedPreconditionError(`model ${variation.modelId} of variation ${variation.id} no longer exists in this workspace`);
  if (model.status === ModelStatus.DISABLED) throw new FailedPreconditionError(`model ${variation.modelId} is DISABLED in this workspace`);
  return variation.modelId;
}

/**
 * The tools the variation offers the model: tools assigned directly, the tools
 * of assigned tool sets, and one tool per assigned sub-agent. A tool reached
 * twice is offered once; the direct assignment's `requiresApproval` wins.
 * Names are made unique in that order (uniqueModelToolNames).
 */
function toolsOf(variation: VariationRecord, configuration: AgentRunConfiguration): ObjectiveTool[] {
  const assignments = configuration.assignments.filter((row) => row.variationId === variation.id);
  const { tools: direct, toolSetTools: bySet, subAgents } = configuration;
  const tools = new Map<string, ObjectiveTool>();
  const add = (tool: ToolRecord, assignment: AssignmentRecord) => {
    if (tools.has(tool.id)) return;
    tools.set(tool.id, objectiveToolOf(tool, assignment.requiresApproval ?? tool.requiresApproval));
  };
  const toolById = new Map(direct.map((tool) => [tool.id, tool]));
  for (const assignment of assignments) {
    if (assignment.toolId && toolById.has(assignment.toolId)) add(toolById.get(assignment.toolId)!, assignment);
  }
  for (const assignment of assignments) {
    for (const tool of assignment.toolSetId ? bySet.get(assignment.toolSetId) ?? [] : []) add(tool, assignment);
  }
  const offered = [...tools.values()];
  const agentById = new Map(subAgents.map((agent) => [agent.id, agent]));
  for (const assignment of assignments) {
    const subAgent = assignment.agentId ? agentById.get(assignment.agentId) : undefined;
    if (subAgent) offered.push(subAgentTool(subAgent, assignment));
  }
  const names = uniqueModelToolNames(offered.map((tool) => tool.name));
  return offered.map((tool, index) => (tool.name === names[index] ? tool : { ...tool, name: names[index] }));
}

function subAgentTool(agent: AgentRecord, assignment: AssignmentRecord): ObjectiveTool {
  return {
    name: modelToolName(agent.name),
    description: agent.description ?? `Delegates to the agent ${agent.name}`,
    inputSchema: agent.inputDataSchema ?? PROMPT_ONLY_SCHEMA,
    requiresApproval: assignment.requiresApproval ?? false,
    // A sub-agent's call waits for its child objective, not for a deadline.
    effectTimeoutMs: 0,
    subAgent: { agentId: agent.id, promptOnly: agent.inputDataSchema === null },
    metadata: toResourceMetadata(agent, agent.workspaceId),
  };
}
