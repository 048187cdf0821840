// The webhook endpoint actor's decisions (one actor per agent and webhook
// URL): take objective events as deliveries, send each lane's head as an
// effect, record every attempt, sleep on a durable reminder until a retry is
// due, and disable the endpoint on a 410 or after failing for too long.
// Pure: the HTTP POST, the signing secrets and the clock's randomness come
// from outside (the kind in actors/kinds binds them).
import { FailedPreconditionError, InvalidArgumentError } from '../errors';
import { idTime } from '../ids';
import { eraseEnvelopeText } from '../objectives/objective-erasure';
import type { ActorBehavior, ActorContext, ActorDecision, EffectOutcome, EffectRequest, FiredReminder, RunningEffect } from '../ports/actor-behavior';
import { traceparentField } from '../tracing/trace-context';
import { newDeliveryOf, type WebhookDeliveryChange, type WebhookDeliveryRecord, type WebhookDeliveryStatus } from './webhook-delivery';
import {
  applyToWebhookEndpointDraft, draftWebhookEndpoint, evolveWebhookEndpoint, evolveWebhookEndpointAll, findQueued, initialWebhookEndpointState, isErasedObjective,
  webhookEndpointStateFromSnapshot,
  type QueuedDelivery, type StoredWebhookEndpointState, type WebhookEndpointEvent, type WebhookEndpointState,
} from './webhook-endpoint-state';
import { WEBHOOK_ENDPOINT_KIND } from './webhook-endpoint-id';
import type { WebhookAttemptOutcome } from './webhook-sender';

export const DELIVER_WEBHOOK_EFFECT = 'webhook.deliver';
const RETRY_REMINDER_PREFIX = 'retry:';
const GAP_REMINDER = 'gap';

export type WebhookEndpointCommand =
  /**
   * An objective event for this endpoint (from the OBJECTIVE_EVENTS consumer): `body` is the envelope as published;
   * `traceparent`, the span that published it (its message's header), which its attempts continue.
   */
  | { type: 'event'; body: string; webhookUrl: string; traceparent?: string }
  /** A manual retry of a FAILED or DISABLED delivery (the API's retry endpoint); `traceparent`: the request's span. */
  | { type: 'retry'; delivery: WebhookDeliveryRecord; webhookUrl: string; body: string; traceparent?: string }
  /** Tenant or subject erasure (an erasure job): the bodies this endpoint holds for these objectives lose their content. */
  | { type: 'erase'; objectiveIds: string[] };

export type WebhookEndpointReply =
  | { deliveryId: string; status: WebhookDeliveryStatus; duplicate?: boolean }
  | WebhookDeliveryRecord
  | { erasedObjectiveIds: string[] };

/**
 * What the effect posts, but the body and the secrets: the body goes as the
 * run's transient input (DeliverWebhookTransientInput: the state holds it, so
 * the journal keeps it once, with the delivery, not again with every attempt
 * started), and the effect loads the secrets itself (they never enter the
 * journal).
 */
export interface DeliverWebhookInput {
  deliveryId: string;
  accountId: string;
  url: string;
  /** Only in the input of attempts started before the body became transient. */
  body?: string;
  /** The trace the attempt continues (the delivery's), when its event came traced. */
  traceparent?: string;
}

/** EffectRequest.transientInput of an attempt. */
export interface DeliverWebhookTransientInput {
  body: string;
}

/**
 * What an endpoint's turn tells the node's metrics (ActorDecision.observations):
 * each attempt's outcome (a 2xx, another HTTP status, or no response: a
 * network error, a time-out, a refused address), and each delivery reaching a
 * final status, with the time from its objective event's creation to the 2xx
 * for one delivered from the event's flow (not a manual retry).
 */
export type WebhookObservation =
  | { type: 'attempt'; result: 'delivered' | 'http_error' | 'no_response' }
  | { type: 'delivery_finished'; result: 'delivered' | 'failed' | 'disabled'; lagMs?: number };

// The observations without a lag, made once: a turn of the busiest actor hands them over without allocating.
const ATTEMPT_DELIVERED: WebhookObservation = Object.freeze({ type: 'attempt', result: 'delivered' });
const ATTEMPT_HTTP_ERROR: WebhookObservation = Object.freeze({ type: 'attempt', result: 'http_error' });
const ATTEMPT_NO_RESPONSE: WebhookObservation = Object.freeze({ type: 'attempt', result: 'no_response' });
const DELIVERED_WITHOUT_LAG: WebhookObservation = Object.freeze({ type: 'delivery_finished', result: 'delivered' });
const DELIVERY_FAILED: WebhookObservation = Object.freeze({ type: 'delivery_finished', result: 'failed' });
const DELIVERY_DISABLED: WebhookObservation = Object.freeze({ type: 'delivery_finished', result: 'disabled' });

/** The outcome of one attempt, as the sender reports it. */
export type DeliveryAttemptOutcome = WebhookAttemptOutcome;

export interface WebhookEndpointOptions {
  /** The delay before the next attempt after `failedAttempts` failures of this round, or null when the schedule is spent. */
  retryDelayMs(failedAttempts: number, retryAfterMs: number | undefined): number | null;
  /** Failing this long without a success disables the endpoint. @default 5 days */
  disableAfterMs?: number;
  /** Attempts in flight at once per endpoint (the heads of as many objectives). @default 64 */
  maxInFlight?: number;
  /**
   * How long a head waits for a missing earlier event of its objective: events
   * reach the endpoint out of order when a node holding one stops (it comes
   * back after the intake's ack wait, WEBHOOK_INTAKE_ACK_WAIT_MS), so the
   * default is longer than that wait. @default DEFAULT_GAP_HOLD_MS
   */
  gapHoldMs?: number;
  /** The effect's deadline: the sender's own deadline plus a margin. @default 20000 */
  attemptTimeoutMs?: number;
}

const FIVE_DAYS_MS = 5 * 24 * 3600 * 1000;

/** The effect id of a delivery's attempt: `<deliveryId>.<attempt number>` (the number counts from 1). */
function attemptEffectId(deliveryId: string, attempt: number): string {
  return `${deliveryId}.${attempt}`;
}

/** The attempt number an attempt's effect id names (attemptEffectId). */
export function attemptNumberOf(effectId: string): number {
  return Number(effectId.slice(effectId.lastIndexOf('.') + 1));
}
/** Above the intake's ack wait (10 s), so an event a stopped node held comes back within the hold. */
export const DEFAULT_GAP_HOLD_MS = 15_000;

type Decision = ActorDecision<WebhookEndpointEvent, WebhookEndpointReply, WebhookDeliveryChange, WebhookEndpointState>;
export type WebhookEndpointBehavior = ActorBehavior<WebhookEndpointState, WebhookEndpointCommand, WebhookEndpointEvent, WebhookEndpointReply, WebhookDeliveryChange>;

/** A decision under construction: events are applied to `state` as they are added, so later steps see them. */
class EndpointTurn {
  readonly events: WebhookEndpointEvent[] = [];
  readonly changes: WebhookDeliveryChange[] = [];
  readonly effects: EffectRequest[] = [];
  readonly abort: string[] = [];
  readonly setReminders: Array<{ name: string; dueAt: Date }> = [];
  readonly cancelReminders: string[] = [];
  /** For the node's metrics; made at the first one. */
  private observations: WebhookObservation[] | undefined;

  /** Whether `state` is this turn's own draft yet (made at the first event). */
  private drafted = false;

  constructor(public state: WebhookEndpointState, readonly now: Date) {}

  apply(event: WebhookEndpointEvent): void {
    this.events.push(event);
    if (!this.drafted) {
      this.state = draftWebhookEndpoint(this.state);
      this.drafted = true;
    }
    applyToWebhookEndpointDraft(this.state, event);
  }

  project(delivery: WebhookDeliveryRecord): void {
    const previous = this.changes.findIndex((change) => change.delivery.id === delivery.id);
    if (previous >= 0) this.changes.splice(previous, 1);
    this.changes.push({ type: 'webhook_delivery', delivery });
  }

  /** A fact for the node's metrics, counted once this turn has committed. */
  observe(observation: WebhookObservation): void {
    (this.observations ??= []).push(observation);
  }

  decision(reply?: WebhookEndpointReply): Decision {
    const { running, queued } = attempts(this.state);
    return {
      events: this.events,
      ...(this.drafted ? { evolvedState: this.state } : {}),
      project: this.changes,
      ...(reply !== undefined ? { reply } : {}),
      ...(this.effects.length || this.abort.length ? { effects: { start: this.effects, abort: this.abort } } : {}),
      ...(this.setReminders.length || this.cancelReminders.length ? { reminders: { set: this.setReminders, cancel: this.cancelReminders } } : {}),
      // Deliveries queued and none in flight: they wait on reminders (a retry, a gap's hold), and the actor holds
      // no memory meanwhile. With nothing queued it stays for the next event until the runtime's idle passivation:
      // stopping it at once made every event of a steady flow activate it again, reading its journal tail back.
      ...(!running && queued ? { passivate: true } : {}),
      ...(this.observations ? { observations: this.observations } : {}),
    };
  }
}

// The loops over lanes below run in every turn: they walk the lanes with deliveries queued (an emptied
// lane waits in idleLanes), with the map's forEach and index loops, no arrays of entries made per lane.

/** Whether an attempt is in flight, and whether any delivery is queued at all (every lane in `lanes` has one). */
function attempts(state: WebhookEndpointState): { running: boolean; queued: boolean } {
  let running = false;
  // forEach stops at the first callback that returns false.
  state.lanes.forEach((lane) => {
    running = lane.queue.some((delivery) => delivery.runningEffectId !== undefined);
    return !running;
  });
  return { running, queued: state.lanes.size > 0 };
}

function changed(delivery: WebhookDeliveryRecord, now: Date, fields: Partial<WebhookDeliveryRecord>): WebhookDeliveryRecord {
  return { ...delivery, ...fields, updatedAt: now.toISOString(), revision: delivery.revision + 1 };
}

export function createWebhookEndpointBehavior(options: WebhookEndpointOptions): WebhookEndpointBehavior {
  const disableAfterMs = options.disableAfterMs ?? FIVE_DAYS_MS;
  const maxInFlight = options.maxInFlight ?? 64;
  const gapHoldMs = options.gapHoldMs ?? DEFAULT_GAP_HOLD_MS;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 20_000;

  /** Whether a queued delivery may be sent now (it is its lane's head, in order or held long enough, and due). */
  function sendable(turn: EndpointTurn, laneNextSequence: number, queued: QueuedDelivery, isHead: boolean): boolean | 'gap' {
    if (queued.runningEffectId) return false;
    if (queued.delivery.nextAttemptAt && Date.parse(queued.delivery.nextAttemptAt) > turn.now.getTime()) return false;
    if (queued.manual) return true;
    if (!isHead) return false;
    const expected = laneNextSequence === 0 ? 1 : laneNextSequence;
    if (queued.delivery.sequence <= expected) return true;
    return Date.parse(queued.receivedAt) + gapHoldMs <= turn.now.getTime() ? true : 'gap';
  }

  /** Starts attempts for every sendable delivery while slots are free; sets the gap reminder for heads held back. */
  function dispatch(turn: EndpointTurn): void {
    if (turn.state.disabled) return;
    // One pass over the queues: the attempts running, and the deliveries that may go (lane heads, manual retries),
    // in lane then queue order. Starting one replaces its lane in the draft, so they are started after the pass.
    let running = 0;
    const candidates: Array<{ objectiveId: string; nextSequence: number; queued: QueuedDelivery; isHead: boolean }> = [];
    turn.state.lanes.forEach(({ queue, nextSequence }, objectiveId) => {
      for (let index = 0; index < queue.length; index++) {
        const queued = queue[index];
        if (queued.runningEffectId) running += 1;
        else if (index === 0 || queued.manual) candidates.push({ objectiveId, nextSequence, queued, isHead: index === 0 });
      }
    });
    let gapDue: number | undefined;
    for (const { objectiveId, nextSequence, queued, isHead } of candidates) {
      if (running >= maxInFlight) break;
      const verdict = sendable(turn, nextSequence, queued, isHead);
      if (verdict === 'gap') gapDue = Math.min(gapDue ?? Infinity, Date.parse(queued.receivedAt) + gapHoldMs);
      if (verdict !== true) continue;
      const effectId = attemptEffectId(queued.delivery.id, queued.delivery.attemptCount + 1);
      turn.apply({ type: 'attempt_started', deliveryId: queued.delivery.id, objectiveId, effectId });
      turn.effects.push(attemptRequest(effectId, queued));
      running += 1;
    }
    if (gapDue !== undefined) turn.setReminders.push({ name: GAP_REMINDER, dueAt: new Date(gapDue) });
  }

  /**
   * The run of one attempt. Not stored as a command: lost with its node, the
   * attempt is simply made again under the same webhook-id.
   */
  function attemptRequest(effectId: string, queued: QueuedDelivery): EffectRequest {
    const input: DeliverWebhookInput = {
      deliveryId: queued.delivery.id, accountId: queued.delivery.accountId, url: queued.delivery.webhookUrl, ...(queued.traceparent ? { traceparent: queued.traceparent } : {}),
    };
    const transientInput: DeliverWebhookTransientInput = { body: queued.body };
    return { id: effectId, name: DELIVER_WEBHOOK_EFFECT, input, transientInput, timeoutMs: attemptTimeoutMs, durableResult: false };
  }

  /** Every queued delivery becomes DISABLED, and so will every later one. */
  function disable(turn: EndpointTurn, reason: string): void {
    const at = turn.now.toISOString();
    for (const lane of turn.state.lanes.values()) {
      for (const queued of lane.queue) {
        if (queued.runningEffectId) turn.abort.push(queued.runningEffectId);
        else if (queued.delivery.nextAttemptAt) turn.cancelReminders.push(`${RETRY_REMINDER_PREFIX}${queued.delivery.id}`);
        turn.project(changed(queued.delivery, turn.now, { status: 'WEBHOOK_DELIVERY_STATUS_DISABLED', nextAttemptAt: null, errorMessage: queued.delivery.errorMessage ?? disabledMessage(reason) }));
        turn.observe(DELIVERY_DISABLED);
      }
    }
    turn.apply({ type: 'endpoint_disabled', at, reason });
  }

  function disabledMessage(reason: string): string {
    return `endpoint disabled (${reason}) until the agent's webhookEventsUrl changes`;
  }

  function acceptEvent(turn: EndpointTurn, command: Extract<WebhookEndpointCommand, { type: 'event' }>): Decision {
    let delivery: WebhookDeliveryRecord;
    try {
      delivery = newDeliveryOf(command.body, { endpointId: turn.state.endpointId, webhookUrl: command.webhookUrl }, turn.now);
    } catch (error) {
      throw InvalidArgumentError.forField('body', (error as Error).message);
    }
    const lane = turn.state.lanes.get(delivery.objectiveId);
    const known = lane?.queue.find((queued) => queued.delivery.id === delivery.id);
    if (known) return turn.decision({ deliveryId: delivery.id, status: known.delivery.status, duplicate: true });
    // An event below the lane's next sequence and not queued came late (a paused node gave it back after
    // the hold ran out), or again (a redelivery beyond the runtime's dedupe window, which knows the
    // command id): either way it is queued under its one id. Dropping it could lose an event.
    const queued = turn.state.disabled
      ? { ...delivery, status: 'WEBHOOK_DELIVERY_STATUS_DISABLED' as const, errorMessage: disabledMessage(turn.state.disabled.reason) }
      : delivery;
    // An event of an erased objective that was on its way while the erasure ran goes out with its content erased.
    const body = isErasedObjective(turn.state, delivery.objectiveId) ? eraseEnvelopeText(command.body) : command.body;
    turn.apply({ type: 'delivery_queued', delivery: queued, body, at: turn.now.toISOString(), ...traceparentField(command.traceparent) });
    turn.project(queued);
    if (turn.state.disabled) turn.observe(DELIVERY_DISABLED);
    dispatch(turn);
    return turn.decision({ deliveryId: queued.id, status: queued.status });
  }

  /**
   * Erases the bodies of the objectives' queued deliveries (an attempt already
   * under way sends what it holds), and of later events of theirs; the
   * snapshot lets retention purge the journal entries that still hold them.
   */
  function erase(turn: EndpointTurn, command: Extract<WebhookEndpointCommand, { type: 'erase' }>): Decision {
    turn.apply({ type: 'objectives_erased', objectiveIds: command.objectiveIds, at: turn.now.toISOString() });
    return { ...turn.decision({ erasedObjectiveIds: command.objectiveIds }), snapshot: true };
  }

  function acceptRetry(turn: EndpointTurn, command: Extract<WebhookEndpointCommand, { type: 'retry' }>): Decision {
    if (turn.state.disabled) {
      throw new FailedPreconditionError(`the webhook endpoint is disabled (${turn.state.disabled.reason}) until the agent's webhookEventsUrl changes`);
    }
    const current = findQueued(turn.state, command.delivery.objectiveId, command.delivery.id);
    if (current) return turn.decision(current.queued.delivery);
    const delivery = changed(command.delivery, turn.now, {
      endpointId: turn.state.endpointId, webhookUrl: command.webhookUrl, status: 'WEBHOOK_DELIVERY_STATUS_PENDING', nextAttemptAt: null,
    });
    turn.apply({ type: 'delivery_queued', delivery, body: command.body, at: turn.now.toISOString(), manual: true, ...traceparentField(command.traceparent) });
    turn.project(delivery);
    dispatch(turn);
    return turn.decision(findQueued(turn.state, delivery.objectiveId, delivery.id)?.queued.delivery ?? delivery);
  }

  function recordAttempt(turn: EndpointTurn, queued: QueuedDelivery, outcome: DeliveryAttemptOutcome): void {
    const at = turn.now.toISOString();
    const attemptCount = queued.delivery.attemptCount + 1;
    const attempt = {
      attemptCount, lastAttemptAt: at, latencyMs: Math.round(outcome.latencyMs), httpStatusCode: outcome.httpStatusCode,
      responseContentLength: outcome.responseContentLength, responseHeaders: outcome.responseHeaders, errorMessage: outcome.errorMessage ?? null,
    };
    turn.observe(outcome.ok ? ATTEMPT_DELIVERED : outcome.httpStatusCode > 0 ? ATTEMPT_HTTP_ERROR : ATTEMPT_NO_RESPONSE);
    if (outcome.ok) {
      const delivery = changed(queued.delivery, turn.now, { ...attempt, status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', nextAttemptAt: null, errorMessage: null });
      turn.apply({ type: 'attempt_finished', delivery, ok: true, at });
      turn.project(delivery);
      turn.observe(delivered(turn, queued));
      return;
    }
    const failingSince = turn.state.failingSince ?? at;
    if (outcome.gone || Date.parse(failingSince) + disableAfterMs <= turn.now.getTime()) {
      const reason = outcome.gone ? 'GONE' : 'FAILING';
      const delivery = changed(queued.delivery, turn.now, { ...attempt, status: 'WEBHOOK_DELIVERY_STATUS_DISABLED', nextAttemptAt: null });
      turn.apply({ type: 'attempt_finished', delivery, ok: false, at });
      turn.project(delivery);
      turn.observe(DELIVERY_DISABLED);
      disable(turn, reason);
      return;
    }
    const delay = options.retryDelayMs(attemptCount - queued.roundStartAttempt, outcome.retryAfterMs);
    const nextAttemptAt = delay === null ? null : new Date(turn.now.getTime() + delay);
    const delivery = changed(queued.delivery, turn.now, {
      ...attempt, status: nextAttemptAt ? 'WEBHOOK_DELIVERY_STATUS_PENDING' : 'WEBHOOK_DELIVERY_STATUS_FAILED', nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
    });
    turn.apply({ type: 'attempt_finished', delivery, ok: false, at });
    turn.project(delivery);
    if (!nextAttemptAt) turn.observe(DELIVERY_FAILED);
    if (nextAttemptAt) turn.setReminders.push({ name: `${RETRY_REMINDER_PREFIX}${delivery.id}`, dueAt: nextAttemptAt });
  }

  /** A delivery's 2xx, with its lag from the objective event's creation (its id's time); none for a manual retry, which a person started later. */
  function delivered(turn: EndpointTurn, queued: QueuedDelivery): WebhookObservation {
    const createdAt = queued.manual ? undefined : idTime(queued.delivery.objectiveEventId);
    return createdAt === undefined ? DELIVERED_WITHOUT_LAG : { type: 'delivery_finished', result: 'delivered', lagMs: Math.max(0, turn.now.getTime() - createdAt) };
  }

  /** The queued delivery whose attempt ran as `effectId`. */
  function queuedByEffect(state: WebhookEndpointState, effectId: string): QueuedDelivery | undefined {
    let found: QueuedDelivery | undefined;
    state.lanes.forEach((lane) => {
      found = lane.queue.find((queued) => queued.runningEffectId === effectId);
      return found === undefined;
    });
    return found;
  }

  return {
    kind: WEBHOOK_ENDPOINT_KIND,
    initialState: initialWebhookEndpointState,
    fromSnapshot: (stored) => webhookEndpointStateFromSnapshot(stored as StoredWebhookEndpointState),
    evolve: evolveWebhookEndpoint,
    evolveAll: evolveWebhookEndpointAll,

    decide(state, command, context: ActorContext) {
      const turn = new EndpointTurn(state, context.now);
      switch (command.type) {
        case 'event':
          return acceptEvent(turn, command);
        case 'retry':
          return acceptRetry(turn, command);
        case 'erase':
          return erase(turn, command);
      }
    },

    onEffectResult(state, outcome: EffectOutcome, context: ActorContext) {
      const turn = new EndpointTurn(state, context.now);
      const queued = queuedByEffect(state, outcome.id);
      // An attempt of a delivery no longer queued (the endpoint was disabled meanwhile) has nothing to record.
      if (!queued) return turn.decision();
      const attempt: DeliveryAttemptOutcome = outcome.ok
        ? (outcome.value as DeliveryAttemptOutcome)
        : { ok: false, httpStatusCode: 0, latencyMs: 0, responseContentLength: null, responseHeaders: null, gone: false, errorMessage: outcome.error.message };
      recordAttempt(turn, queued, attempt);
      dispatch(turn);
      return turn.decision();
    },

    /** An attempt whose run was lost (its node stopped): made again under the same id, with the body from the state. */
    onEffectInterrupted(state, effect: RunningEffect, context: ActorContext) {
      const turn = new EndpointTurn(state, context.now);
      const queued = queuedByEffect(state, effect.id);
      // No longer queued (the endpoint was disabled meanwhile): nothing to send; the runtime ends the effect.
      if (queued) turn.effects.push(attemptRequest(effect.id, queued));
      return turn.decision();
    },

    onReminder(state, _reminder: FiredReminder, context: ActorContext) {
      // A retry falling due and a gap hold running out both come down to: send what may go now.
      const turn = new EndpointTurn(state, context.now);
      dispatch(turn);
      return turn.decision();
    },
  };
}
