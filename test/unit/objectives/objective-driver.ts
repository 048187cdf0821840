// A tiny stand-in for the actor runtime, for driving the objective behaviour
// directly: it decides, folds the decision's events with `evolve`, keeps the
// effects the decisions started (and drops aborted ones), the reminders set
// and the durable commands sent to other actors, collects what was published
// and projected, and feeds effect outcomes, interruptions and fired reminders
// back the way the runtime does. It also replays the whole journal from the
// initial state, so every test checks that `evolve` alone rebuilds the state.
import assert from 'node:assert/strict';
import type { ActorContext, ActorDecision, ActorSend, EffectError, OutgoingEvent, ReminderRequest, RunningEffect } from '../../../src/ports/actor-behavior';
import type { ChatRequest, ChatResponse } from '../../../src/objectives/chat-model-types';
import type { ObjectiveChange } from '../../../src/objectives/objective-events';
import type { ModelCallEffectInput } from '../../../src/objectives/objective-loop';
import type { ObjectiveObservation } from '../../../src/objectives/objective-observations';
import { objectiveBehavior, type ObjectiveCommand, type ObjectiveReply } from '../../../src/objectives/objective.behavior';
import type { ObjectiveEvent, ObjectiveStart, ObjectiveState, ObjectiveTool } from '../../../src/objectives/objective-state';
import type { ExecutableTool, ToolCallOutcome } from '../../../src/tools/tool-call-outcome';

const CONTEXT_TIME = new Date('2026-11-23T12:00:00.000Z');

/** An HTTP tool (its `executable` always set). */
export function lookupTool(overrides: Partial<ObjectiveTool> = {}): ObjectiveTool & { executable: ExecutableTool } {
  return {
    name: 'lookup',
    description: 'Looks a thing up',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    requiresApproval: false,
    effectTimeoutMs: 35_000,
    executable: {
      id: 'tool_1', name: 'lookup', workspaceId: 'ws_1', kind: 'http', inputSchema: null,
      httpUrl: 'https://tools.example.com/lookup', httpMethod: 'POST', httpHeaders: null, httpTimeoutMs: 30_000, mcpServerUrl: null, mcpToolName: null,
    },
    ...overrides,
  };
}

export function startOf(overrides: Partial<ObjectiveStart> = {}): ObjectiveStart {
  const metadata = { accountId: 'acc_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: '2026-11-23T11:00:00.000Z' };
  return {
    accountId: 'acc_1',
    workspaceId: 'ws_1',
    agentId: 'agent_1',
    objectiveId: 'obj_1',
    variationId: 'agentvar_1',
    metadata: {
      objective: { ...metadata, id: 'obj_1', externalId: 'ext-1' },
      agent: { ...metadata, id: 'agent_1', name: 'helper' },
      agentVariation: { ...metadata, id: 'agentvar_1', name: 'v1' },
    },
    systemPrompt: 'You help.',
    modelId: 'builtin/scripted',
    tools: [lookupTool()],
    limits: { maxToolCalls: 0, maxSubObjectives: 0 },
    initialMessage: 'hello',
    outputDefinition: null,
    spec: {
      agentId: 'agent_1', variationId: 'agentvar_1', data: null, initialMessage: 'hello', episodicKey: null, memoryLayerIds: [],
      tenantId: null, subjectId: null, parentObjectiveId: null, scheduleId: null,
    },
    ...overrides,
  };
}

export function toolSuccess(toolCallId: string, content: string): ToolCallOutcome {
  return { ok: true, toolCallId, toolId: 'tool_1', kind: 'http', content, truncated: false, status: 200, durationMs: 5 };
}

export class ObjectiveDriver {
  state: ObjectiveState;
  readonly journal: ObjectiveEvent[] = [];
  readonly published: OutgoingEvent[] = [];
  readonly projected: ObjectiveChange[] = [];
  /** The decisions' observations (what the node's metrics count), in order. */
  readonly observed: ObjectiveObservation[] = [];
  readonly aborted: string[] = [];
  /** Effects started and neither reported nor aborted, by id. */
  readonly running = new Map<string, RunningEffect>();
  /** Every effect start, in order (a re-run included). */
  readonly starts: RunningEffect[] = [];
  /** Every durable command sent to another actor, in order. */
  readonly sent: ActorSend[] = [];
  private delivered = 0;
  /** Reminders set and neither fired nor cancelled, by name. */
  readonly reminders = new Map<string, ReminderRequest>();
  /** The context's clock. */
  now = CONTEXT_TIME;
  lastDecision: ActorDecision<ObjectiveEvent, ObjectiveReply | undefined, ObjectiveChange, ObjectiveState> = {};

  constructor(readonly objectiveId = 'obj_1', readonly behavior = objectiveBehavior) {
    this.state = behavior.initialState(objectiveId);
  }

  private get context(): ActorContext {
    return { kind: 'objective', id: this.objectiveId, now: this.now };
  }

  private apply(decision: ActorDecision<ObjectiveEvent, ObjectiveReply | undefined, ObjectiveChange, ObjectiveState>, attempt = 1): void {
    this.lastDecision = decision;
    for (const event of decision.events ?? []) {
      this.journal.push(event);
      this.state = this.behavior.evolve(this.state, event);
    }
    this.published.push(...(decision.publish ?? []));
    this.projected.push(...(decision.project ?? []));
    this.observed.push(...((decision.observations ?? []) as ObjectiveObservation[]));
    for (const id of decision.effects?.abort ?? []) {
      this.aborted.push(id);
      this.running.delete(id);
    }
    for (const request of decision.effects?.start ?? []) {
      const effect: RunningEffect = {
        id: request.id!, name: request.name, input: request.input, timeoutMs: request.timeoutMs, attempt,
        ...(request.transientInput === undefined ? {} : { transientInput: request.transientInput }),
      };
      assert.ok(!this.running.has(effect.id), `effect ${effect.id} started twice`);
      this.running.set(effect.id, effect);
      this.starts.push(effect);
    }
    this.sent.push(...(decision.send ?? []));
    // As the runtime folds them: cancels first, then sets.
    for (const name of decision.reminders?.cancel ?? []) this.reminders.delete(name);
    for (const reminder of decision.reminders?.set ?? []) this.reminders.set(reminder.name, reminder);
    // evolve alone must rebuild the state from the journal.
    assert.deepEqual(this.journal.reduce((state, event) => this.behavior.evolve(state, event), this.behavior.initialState(this.objectiveId)), this.state);
  }

  async send(command: ObjectiveCommand): Promise<ObjectiveReply | undefined> {
    const decision = await this.behavior.decide(this.state, command, this.context);
    this.apply(decision);
    return decision.reply;
  }

  start(overrides: Partial<ObjectiveStart> = {}): Promise<ObjectiveReply | undefined> {
    return this.send({ type: 'start', start: startOf(overrides) });
  }

  private take(effectId: string): RunningEffect {
    const effect = this.running.get(effectId);
    assert.ok(effect, `effect ${effectId} is not running (running: ${[...this.running.keys()].join(', ')})`);
    this.running.delete(effectId);
    return effect;
  }

  async succeed(effectId: string, value: unknown): Promise<void> {
    const effect = this.take(effectId);
    this.apply(await this.behavior.onEffectResult!(this.state, { ...effect, ok: true, value }, this.context));
  }

  async fail(effectId: string, error: EffectError): Promise<void> {
    const effect = this.take(effectId);
    this.apply(await this.behavior.onEffectResult!(this.state, { ...effect, ok: false, error }, this.context));
  }

  /** The model call now running answers `response`. */
  async modelAnswers(response: ChatResponse): Promise<void> {
    await this.succeed(this.runningModelCall().id, response);
  }

  /** The effect's run was lost: handed back as the runtime does after a takeover, without its transient input. */
  async interrupt(effectId: string): Promise<void> {
    const { transientInput: _lost, ...journaled } = this.take(effectId);
    this.apply(await this.behavior.onEffectInterrupted!(this.state, journaled, this.context), journaled.attempt + 1);
  }

  /** Fires a reminder that is set, as the runtime does at its due time. */
  async fireReminder(name: string): Promise<void> {
    const reminder = this.reminders.get(name);
    assert.ok(reminder, `reminder ${name} is not set`);
    this.reminders.delete(name);
    this.apply(await this.behavior.onReminder!(this.state, { name, dueAt: reminder.dueAt, payload: reminder.payload ?? null }, this.context));
  }

  /** The commands sent since the last call (each handed out once, like a delivery). */
  takeSent(): ActorSend[] {
    const fresh = this.sent.slice(this.delivered);
    this.delivered = this.sent.length;
    return fresh;
  }

  /** The service's ids (`toolcall_…`) of every call the model gave `providerId`, in order. */
  callIds(providerId: string): string[] {
    const ids: string[] = [];
    let asked: string[] = [];
    for (const event of this.journal) {
      if (event.type === 'recorded' && event.record.type === 'ASSISTANT_MESSAGE') asked = event.assistant?.toolCallIds ?? [];
      if (event.type === 'tool_calls_received') event.calls.forEach((call, index) => asked[index] === providerId && ids.push(call.id));
    }
    return ids;
  }

  /** The service's id of the latest call the model gave `providerId` (the id approve, deny, the events and the tool use). */
  callId(providerId: string): string {
    const id = this.callIds(providerId).at(-1);
    assert.ok(id, `the model made no call ${providerId}`);
    return id;
  }

  runningModelCall(): RunningEffect {
    const calls = [...this.running.values()].filter((effect) => effect.name === 'model.call');
    assert.equal(calls.length, 1, 'exactly one model call runs');
    return calls[0];
  }

  /** The running model call's request: its transient input (the journal keeps only the workspace). */
  modelRequest(): ChatRequest {
    const effect = this.runningModelCall();
    assert.deepEqual(effect.input, { workspaceId: (this.state.config?.workspaceId ?? '') } satisfies ModelCallEffectInput);
    return effect.transientInput as ChatRequest;
  }

  /** The published webhook types, without the `objective_event.` prefix. */
  kinds(): string[] {
    return this.published.map((event) => event.type.replace('objective_event.', ''));
  }

  sequences(): number[] {
    return this.published.map((event) => ((event.payload as { data: { objectiveEvent: { sequence: number } } }).data.objectiveEvent.sequence));
  }
}
