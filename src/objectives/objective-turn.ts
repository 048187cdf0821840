// One decision of the objective actor under construction. Each journal event
// is folded into a working state the moment it is added, so the later steps
// of the same decision (the loop deciding what comes next) see its effect,
// exactly as `evolve` will on replay. A public event also gets its sequence
// here, its outbox message and its objective_events row, so the three can
// never disagree; the objective row is written once, with the final state,
// after what the turn adds to the usage roll-ups (its own model calls' usage,
// and the objective itself when the turn created it).
import { newId } from '../ids';
import type { ActorContext, ActorDecision, ActorSend, EffectRequest, ReminderRequest } from '../ports/actor-behavior';
import {
  objectiveInfoOf, outgoingObjectiveEvent, webhookEnvelope, webhookTypeOf, type ObjectiveChange,
} from './objective-events';
import {
  addUsage, dataKeyOf, evolveObjective, isTerminal, ObjectiveStatus, ownUsageOf, type ObjectiveEvent, type ObjectiveEventType, type ObjectiveStart,
  type ObjectiveState, type ObjectiveUsage, type RecordedAssistant,
} from './objective-state';
import { addsToRollups, type UsageDelta } from '../usage/usage-rollup';
import type { ObjectiveObservation, ToolCallOutcomeLabel } from './objective-observations';
import { toolCallKindOf } from './objective-service-tools';

export class ObjectiveTurn {
  private readonly events: ObjectiveEvent[] = [];
  private readonly changes: ObjectiveChange[] = [];
  private readonly published: NonNullable<ActorDecision<unknown, unknown>['publish']> = [];
  private readonly started: EffectRequest[] = [];
  private readonly aborted: string[] = [];
  private snapshotRequested = false;
  private readonly sends: ActorSend[] = [];
  /** Reminders by name: the last decision about each wins (a request to set, or null to cancel). */
  private readonly reminders = new Map<string, ReminderRequest | null>();
  /** The usage of the objective's own model calls this turn took in (ownUsageOf). */
  private ownUsage: ObjectiveUsage = { promptTokens: 0, completionTokens: 0, costCents: 0 };
  /** This turn created the objective: it counts in the roll-ups' objectiveCount. */
  private created = false;
  /** For the node's metrics; made at the first one (most turns have none). */
  private observations: ObjectiveObservation[] | undefined;

  constructor(
    public state: ObjectiveState,
    private readonly context: ActorContext,
  ) {}

  get now(): string {
    return this.context.now.toISOString();
  }

  /** The started objective's configuration (every command but `start` needs one). */
  get config(): ObjectiveStart {
    if (!this.state.config) throw new Error(`objective ${this.state.objectiveId} has no configuration`);
    return this.state.config;
  }

  apply(event: ObjectiveEvent): void {
    this.events.push(event);
    this.state = evolveObjective(this.state, event);
    this.ownUsage = addUsage(this.ownUsage, ownUsageOf(event));
    if (event.type === 'created') this.created = true;
  }

  /** Records one public event: the next sequence, the outbox message and the objective_events row. */
  record(
    type: ObjectiveEventType,
    fields: Record<string, unknown>,
    extra: { modelResult?: string; assistant?: RecordedAssistant } = {},
  ): void {
    const config = this.config;
    const record = {
      id: newId('objectiveEvent'),
      objectiveId: config.objectiveId,
      sequence: this.state.sequence + 1,
      type,
      createdAt: this.now,
      data: { [dataKeyOf(type)]: fields },
      ...(this.state.contextWindow ? { contextWindowId: this.state.contextWindow.id } : {}),
    };
    // A result the model gets as it is shown is journaled once (evolve reads it from the record).
    const { modelResult, ...rest } = extra;
    const kept = modelResult === undefined || (type === 'TOOL_RESULT' && modelResult === fields.content) ? rest : extra;
    this.apply({ type: 'recorded', record, ...kept });
    // One envelope object for the outbox row and the objective_events row.
    const envelope = webhookEnvelope(config, record);
    this.published.push(outgoingObjectiveEvent(config, record, envelope));
    this.changes.push({
      type: 'objective_event',
      objectiveId: config.objectiveId,
      workspaceId: config.workspaceId,
      record,
      webhookType: webhookTypeOf(type),
      envelope,
    });
  }

  /** Adds a read-model change of its own (the row's creation, say) before the turn's final row write. */
  project(change: ObjectiveChange): void {
    this.changes.push(change);
  }

  startEffect(effect: EffectRequest): void {
    this.started.push(effect);
  }

  abortEffect(id: string): void {
    this.aborted.push(id);
  }

  /** A durable command to another actor (a child objective, the parent), written with this turn; `first`: see ActorSend.first. */
  send(kind: string, id: string, command: unknown, options: { first?: boolean } = {}): void {
    this.sends.push({ kind, id, command, ...(options.first ? { first: true } : {}) });
  }

  setReminder(reminder: ReminderRequest): void {
    this.reminders.set(reminder.name, reminder);
  }

  cancelReminder(name: string): void {
    this.reminders.set(name, null);
  }

  /** A fact for the node's metrics, counted once this turn has committed (objective-observations.ts). */
  observe(observation: ObjectiveObservation): void {
    (this.observations ??= []).push(observation);
  }

  /** A tool call of the current turn ended with `outcome`: counted by the kind of tool it went to. */
  observeToolCall(toolCallId: string, outcome: ToolCallOutcomeLabel): void {
    const name = this.state.turnCalls.find((call) => call.id === toolCallId)?.name ?? '';
    this.observe({ type: 'tool_call_finished', kind: toolCallKindOf(this.state, name), outcome });
  }

  /** Asks the runtime for a snapshot right after this turn (an erasure: the journal before it may then be purged). */
  requestSnapshot(): void {
    this.snapshotRequested = true;
  }

  /**
   * What this turn adds to the usage roll-ups, in the buckets of the
   * objective's creation (a turn with usage comes after the created event, so
   * createdAt is set); null when nothing.
   */
  private usageDelta(config: ObjectiveStart): UsageDelta | null {
    const delta: UsageDelta = {
      createdAt: this.state.createdAt ?? this.now, agentId: config.agentId, variationId: config.variationId, tenantId: config.spec.tenantId, modelId: config.modelId,
      ...this.ownUsage, objectives: this.created ? 1 : 0,
    };
    return addsToRollups(delta) ? delta : null;
  }

  decision<Reply>(reply?: Reply): ActorDecision<ObjectiveEvent, Reply, ObjectiveChange> {
    const decision: ActorDecision<ObjectiveEvent, Reply, ObjectiveChange> = {};
    if (reply !== undefined) decision.reply = reply;
    if (this.snapshotRequested) decision.snapshot = true;
    if (this.events.length) {
      decision.events = this.events;
      // Now waiting for a person, or finished: nothing happens until a message comes, so hold no memory.
      const { status } = this.state;
      if (status === ObjectiveStatus.AWAITING_APPROVAL || isTerminal(status)) decision.passivate = true;
      const config = this.config;
      const usage = this.usageDelta(config);
      decision.project = [
        ...this.changes,
        ...(usage ? [{ type: 'objective_usage' as const, objectiveId: config.objectiveId, workspaceId: config.workspaceId, delta: usage }] : []),
        { type: 'objective', objectiveId: config.objectiveId, workspaceId: config.workspaceId, info: objectiveInfoOf(this.state) },
      ];
    }
    if (this.published.length) decision.publish = this.published;
    if (this.started.length || this.aborted.length) {
      decision.effects = {};
      if (this.started.length) decision.effects.start = this.started;
      if (this.aborted.length) decision.effects.abort = this.aborted;
    }
    if (this.sends.length) decision.send = this.sends;
    if (this.observations) decision.observations = this.observations;
    if (this.reminders.size) {
      const set = [...this.reminders.values()].filter((reminder): reminder is ReminderRequest => reminder !== null);
      const cancel = [...this.reminders].filter(([, reminder]) => reminder === null).map(([name]) => name);
      decision.reminders = { ...(set.length ? { set } : {}), ...(cancel.length ? { cancel } : {}) };
    }
    return decision;
  }
}
