// What a webhook endpoint actor remembers, and the events that change it.
// Deliveries wait in one lane per objective, sorted by event sequence: only a
// lane's head is ever sent, so a later event of an objective never leaves
// before an earlier one has completed or finally failed, while the heads of
// different lanes go out side by side. A delivery leaves its lane once it is
// COMPLETED, FAILED or DISABLED; the read model keeps it from then on.
// The lanes are persistent maps (immutable's OrderedMap): a turn that
// changes one lane copies a path of a map, not a record of every objective in
// flight. Lanes with deliveries queued keep the order they got them (dispatch
// starts the heads in that order); an emptied lane leaves for idleLanes, where
// only its next sequence stays, so a turn walks the queued lanes alone. A
// snapshot stores the maps as plain objects (their toJSON, keys in order),
// which webhookEndpointStateFromSnapshot makes maps again. Objectives erased
// through the endpoint keep a dated mark (a persistent map too, oldest first)
// for as long as a late event of theirs may still arrive: each event looks
// its objective up in it, and marks past ERASED_MARK_HOLD_MS whose lane holds
// no delivery are forgotten, so the marks do not grow with every erasure ever.
import { OrderedMap as PersistentMap } from 'immutable';
import { eraseEnvelopeText } from '../objectives/objective-erasure';
import type { WebhookDeliveryRecord } from './webhook-delivery';

export const FINALIZED_EVENT_TYPE = 'OBJECTIVE_EVENT_TYPE_FINALIZED';

/**
 * How long the endpoint remembers an erased objective once it holds no
 * delivery of it. A late event of its comes from the intake: one it took from
 * OBJECTIVE_EVENTS before the erasure purged the stream (the purge comes
 * before the endpoints' erase, and a purged message is never handed out
 * again) and was still handing over (an ask, bounded by AGENTRT_ASK_TIMEOUT_MS,
 * within the intake's ack wait): seconds, far below this.
 */
export const ERASED_MARK_HOLD_MS = 3_600_000;

/** A delivery not finished yet, with what it takes to send it again. */
export interface QueuedDelivery {
  delivery: WebhookDeliveryRecord;
  /** The bytes to send (the event's webhook envelope as published). */
  body: string;
  /** When the endpoint took it: a head held back by a gap in the sequence waits from here. */
  receivedAt: string;
  /** attemptCount when this round of attempts began (a manual retry starts a new round of the schedule). */
  roundStartAttempt: number;
  /** A manual retry: sent as soon as a slot is free, whatever the lane's order. */
  manual?: boolean;
  /** The effect id of the attempt running now. */
  runningEffectId?: string;
  /** The trace its attempts continue (the span that published its event, or that asked for the retry), when traced. */
  traceparent?: string;
}

/** The deliveries of one objective through this endpoint. */
export interface ObjectiveLane {
  /** The sequence expected next; 0 until a delivery of this objective has left the lane. */
  nextSequence: number;
  queue: QueuedDelivery[];
}

export interface WebhookEndpointState {
  endpointId: string;
  /** Set by a 410 or by the failure rule; a new URL is a new endpoint, so nothing clears it. */
  disabled: { at: string; reason: string } | null;
  /** The first failed attempt since the last success (the disable clock). */
  failingSince: string | null;
  /** The lanes with deliveries queued, by objective id, in the order they got them: what a turn walks. */
  lanes: Lanes;
  /**
   * The next sequence of each objective whose lane is empty, until its last
   * event has left. An endpoint may keep thousands of them (objectives that
   * run for days), and no turn walks them.
   */
  idleLanes: PersistentMap<string, number>;
  /**
   * Objectives erased with their tenant or subject, by id, with when the mark
   * was made (ISO; '' for a mark from a snapshot that kept no date, dated at
   * the next event), oldest first: an event of theirs that still arrives (a
   * consumer held it while the stream was purged) is queued with its content
   * erased. Forgotten past ERASED_MARK_HOLD_MS once their lane holds nothing.
   */
  erasedObjectives: PersistentMap<string, string>;
}

export type Lanes = PersistentMap<string, ObjectiveLane>;

/**
 * The state as a snapshot stores it (JSON): the maps as plain objects. A
 * snapshot from before idleLanes has every lane in `lanes`, empty ones too;
 * one from before the dated marks has the erased objectives as a list
 * (`erasedObjectiveIds`), one from before erasure neither.
 */
export type StoredWebhookEndpointState = Omit<WebhookEndpointState, 'lanes' | 'idleLanes' | 'erasedObjectives'> & {
  lanes: Record<string, ObjectiveLane>;
  idleLanes?: Record<string, number>;
  erasedObjectives?: Record<string, string>;
  erasedObjectiveIds?: string[];
};

export type WebhookEndpointEvent =
  /** A delivery created (PENDING, or DISABLED when the endpoint is), or re-queued by a manual retry. */
  | { type: 'delivery_queued'; delivery: WebhookDeliveryRecord; body: string; at: string; manual?: boolean; traceparent?: string }
  | { type: 'attempt_started'; deliveryId: string; objectiveId: string; effectId: string }
  /** An attempt's outcome: the delivery row as it is now (PENDING with nextAttemptAt, or final). */
  | { type: 'attempt_finished'; delivery: WebhookDeliveryRecord; ok: boolean; at: string }
  /** A 410 or the failure rule: every queued delivery is DISABLED, and so is every later one. */
  | { type: 'endpoint_disabled'; at: string; reason: string }
  /** Tenant or subject erasure: the queued bodies of these objectives lose their content, and so will later ones. */
  | { type: 'objectives_erased'; objectiveIds: string[]; at: string };

export function initialWebhookEndpointState(endpointId: string): WebhookEndpointState {
  return { endpointId, disabled: null, failingSince: null, lanes: PersistentMap(), idleLanes: PersistentMap(), erasedObjectives: PersistentMap() };
}

/** The state a snapshot stored (its JSON, parsed), with its lanes and marks as maps. */
export function webhookEndpointStateFromSnapshot(stored: StoredWebhookEndpointState): WebhookEndpointState {
  const { lanes, idleLanes, erasedObjectives, erasedObjectiveIds, ...rest } = stored;
  const marks = erasedObjectives
    ? PersistentMap(erasedObjectives)
    : PersistentMap<string, string>((erasedObjectiveIds ?? []).map((objectiveId): [string, string] => [objectiveId, '']));
  const all = PersistentMap(lanes);
  if (idleLanes) return { ...rest, lanes: all, idleLanes: PersistentMap(idleLanes), erasedObjectives: marks };
  return {
    ...rest,
    lanes: all.filter((lane) => lane.queue.length > 0),
    idleLanes: all.filter((lane) => lane.queue.length === 0).map((lane) => lane.nextSequence),
    erasedObjectives: marks,
  };
}

/** Whether events of this objective are queued erased. */
export function isErasedObjective(state: WebhookEndpointState, objectiveId: string): boolean {
  return state.erasedObjectives.has(objectiveId);
}

/**
 * Forgets the marks past their hold whose lane holds no delivery, from the
 * oldest, stopping at the first one still held (usually the first one: no
 * walk). A mark past its hold whose lane still holds deliveries, or of no
 * date, is dated `at` and moves to the end.
 */
function forgetOldErasures(draft: WebhookEndpointState, at: string): void {
  if (draft.erasedObjectives.size === 0) return;
  const now = Date.parse(at);
  let marks = draft.erasedObjectives;
  const kept: string[] = [];
  for (const [objectiveId, markedAt] of draft.erasedObjectives) {
    if (markedAt && Date.parse(markedAt) + ERASED_MARK_HOLD_MS > now) break;
    marks = marks.delete(objectiveId);
    if (!markedAt || draft.lanes.has(objectiveId)) kept.push(objectiveId);
  }
  for (const objectiveId of kept) marks = marks.set(objectiveId, at);
  draft.erasedObjectives = marks;
}

export function isFinal(delivery: WebhookDeliveryRecord): boolean {
  return delivery.status !== 'WEBHOOK_DELIVERY_STATUS_PENDING';
}

/** The queued delivery with this id, and its lane. */
export function findQueued(state: WebhookEndpointState, objectiveId: string, deliveryId: string): { lane: ObjectiveLane; queued: QueuedDelivery } | undefined {
  const lane = state.lanes.get(objectiveId);
  const queued = lane?.queue.find((entry) => entry.delivery.id === deliveryId);
  return lane && queued ? { lane, queued } : undefined;
}

/**
 * Replaces (or removes: null) one lane of a draft, moving it between `lanes`
 * and `idleLanes` as its queue fills or empties; the lanes themselves are
 * never changed in place.
 */
function changeLane(draft: WebhookEndpointState, objectiveId: string, change: (lane: ObjectiveLane) => ObjectiveLane | null): void {
  const queued = draft.lanes.get(objectiveId);
  const idleNext = queued ? undefined : draft.idleLanes.get(objectiveId);
  const next = change(queued ?? { nextSequence: idleNext ?? 0, queue: [] });
  if (next && next.queue.length > 0) {
    draft.lanes = draft.lanes.set(objectiveId, next);
    if (idleNext !== undefined) draft.idleLanes = draft.idleLanes.delete(objectiveId);
    return;
  }
  if (queued) draft.lanes = draft.lanes.delete(objectiveId);
  if (next) draft.idleLanes = draft.idleLanes.set(objectiveId, next.nextSequence);
  else if (idleNext !== undefined) draft.idleLanes = draft.idleLanes.delete(objectiveId);
}

function replaceQueued(lane: ObjectiveLane, deliveryId: string, change: (queued: QueuedDelivery) => QueuedDelivery): ObjectiveLane {
  return { ...lane, queue: lane.queue.map((queued) => (queued.delivery.id === deliveryId ? change(queued) : queued)) };
}

/**
 * A copy of `state` that applyToWebhookEndpointDraft may change: its own
 * top-level object, sharing the lanes (a persistent map: a change makes a new
 * one). A turn drafts once and applies all its events to the draft.
 */
export function draftWebhookEndpoint(state: WebhookEndpointState): WebhookEndpointState {
  return { ...state };
}

/** Applies an event to a draft (draftWebhookEndpoint); states the draft was made from are untouched. */
export function applyToWebhookEndpointDraft(draft: WebhookEndpointState, event: WebhookEndpointEvent): void {
  switch (event.type) {
    case 'delivery_queued': {
      forgetOldErasures(draft, event.at);
      if (isFinal(event.delivery)) return;
      const queued: QueuedDelivery = {
        delivery: event.delivery, body: event.body, receivedAt: event.at, roundStartAttempt: event.delivery.attemptCount, ...(event.manual ? { manual: true } : {}),
        ...(event.traceparent ? { traceparent: event.traceparent } : {}),
      };
      changeLane(draft, event.delivery.objectiveId, (lane) => {
        const queue = lane.queue.filter((entry) => entry.delivery.id !== event.delivery.id);
        const at = queue.findIndex((entry) => entry.delivery.sequence > event.delivery.sequence);
        queue.splice(at < 0 ? queue.length : at, 0, queued);
        return { ...lane, queue };
      });
      return;
    }
    case 'attempt_started':
      changeLane(draft, event.objectiveId, (lane) => replaceQueued(lane, event.deliveryId, (queued) => ({ ...queued, runningEffectId: event.effectId })));
      return;
    case 'attempt_finished': {
      const { delivery } = event;
      draft.failingSince = event.ok ? null : (draft.failingSince ?? event.at);
      changeLane(draft, delivery.objectiveId, (lane) => {
        if (!isFinal(delivery)) {
          return replaceQueued(lane, delivery.id, (queued) => {
            const { runningEffectId: _finished, ...rest } = queued;
            return { ...rest, delivery };
          });
        }
        const queue = lane.queue.filter((entry) => entry.delivery.id !== delivery.id);
        // The objective's last event has left: nothing more comes through this lane.
        if (queue.length === 0 && delivery.eventType === FINALIZED_EVENT_TYPE) return null;
        return { nextSequence: Math.max(lane.nextSequence, delivery.sequence + 1), queue };
      });
      return;
    }
    case 'endpoint_disabled':
      draft.disabled = { at: event.at, reason: event.reason };
      draft.lanes = PersistentMap();
      draft.idleLanes = PersistentMap();
      return;
    case 'objectives_erased': {
      forgetOldErasures(draft, event.at);
      let marks = draft.erasedObjectives;
      for (const objectiveId of event.objectiveIds) {
        // Erased again (another erasure naming it): dated anew, at the end.
        marks = marks.delete(objectiveId).set(objectiveId, event.at);
        if (!draft.lanes.has(objectiveId)) continue;
        changeLane(draft, objectiveId, (lane) => ({ ...lane, queue: lane.queue.map((queued) => ({ ...queued, body: eraseEnvelopeText(queued.body) })) }));
      }
      draft.erasedObjectives = marks;
      return;
    }
  }
}

export function evolveWebhookEndpoint(state: WebhookEndpointState, event: WebhookEndpointEvent): WebhookEndpointState {
  return evolveWebhookEndpointAll(state, [event]);
}

/** Several events on one draft: an activation's replay makes one copy of the state for its whole journal tail. */
export function evolveWebhookEndpointAll(state: WebhookEndpointState, events: readonly WebhookEndpointEvent[]): WebhookEndpointState {
  const draft = draftWebhookEndpoint(state);
  for (const event of events) applyToWebhookEndpointDraft(draft, event);
  return draft;
}
