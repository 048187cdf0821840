// The schedule actor's decisions (one actor per schedule): it owns the
// schedule's row (configured through the API, counters kept here), sleeps on
// one durable reminder until the next fire time, and at each fire prepares an
// objective (an effect that resolves agent, variation, model and tools) and
// starts it with a transactional send. The objectives it started tell it when
// they end, so the SKIP overlap policy is decided here, at once. Pure: time
// comes from the context, the database through the prepare effect.
import { FailedPreconditionError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { ActorBehavior, ActorContext, ActorDecision, EffectOutcome, FiredReminder } from '../ports/actor-behavior';
import type { ScheduleConfiguration, ScheduleTriggerReply } from '../ports/schedule-commands';
import type { ObjectiveStart } from '../objectives/objective-state';
import { OBJECTIVE_KIND } from '../objectives/objective-state';
import { nextFireTime, upcomingFireTimes } from './fire-times';
import { parseScheduleDuration } from './schedule-duration';
import { initialScheduleInfo, SCHEDULE_KIND, type ScheduleChange, type ScheduleInfo, type ScheduleRecord } from './schedule-record';

export const PREPARE_SCHEDULED_OBJECTIVE_EFFECT = 'schedule.prepare_objective';
export const FIRE_REMINDER = 'fire';
/** Set this long before a fire: the objective is prepared ahead, so at the fire time only its start is left to do. */
export const PREPARE_REMINDER = 'prepare';
// 2.5 s, not 2: calendar rules fire on whole seconds, so preparing one fire half a
// second off them never lands on the instant other schedules fire (the prepare's
// read and the objective's activation then do not delay those starts).
export const PREPARE_LEAD_MS = 2500;
/** A prepare resolves a few rows; this is generous. */
const PREPARE_TIMEOUT_MS = 30_000;
/** Most missed fire times counted one by one after downtime; beyond it the count is a lower bound. */
const MAX_MISSED_COUNTED = 10_000;

export type ScheduleActorCommand =
  | { type: 'configure'; schedule: ScheduleConfiguration }
  | { type: 'trigger' }
  | { type: 'get' }
  /** From an objective this schedule started, when it ends (its first terminal state). */
  | { type: 'objective_finished'; objectiveId: string };

/** What the prepare effect resolves: an objective of the schedule's agent, under the id the actor drew. */
export interface PrepareScheduledObjectiveInput {
  scheduleId: string;
  accountId: string;
  workspaceId: string;
  agentId: string;
  /** The schedule's creator: the objective's profileId. */
  profileId: string;
  objectiveId: string;
  /** The nominal fire time (ISO): carried by the objective, and with the schedule id its unique key. */
  fireTime: string;
  initialMessage: string;
  data?: unknown;
  variationId?: string;
}

export interface ScheduleState {
  scheduleId: string;
  record: ScheduleRecord | null;
  /** Objectives started by this schedule and not ended yet. */
  running: string[];
  /** Prepare effects in flight: effect id → objective id. */
  preparing: Record<string, string>;
  /** Effect ids of the prepares whose objective will report its end. */
  tracked?: string[];
  /**
   * Prepares whose fire was counted when it fired (effect id → the
   * lastObjectiveId it replaced), so a failed prepare takes the count back.
   * Prepares absent here (journaled before fires counted at once) count when they succeed.
   */
  countedAtFire?: Record<string, string | null>;
  /** The objective of the next fire, prepared ahead and held until its fire time. */
  held?: HeldFire;
}

export interface HeldFire {
  effectId: string;
  objectiveId: string;
  fireTime: string;
  /** The resolved start, once the prepare is back. */
  start?: ObjectiveStart;
  /** Why the prepare failed, once it is back failed. */
  error?: string;
  /** The fire time came before the prepare was back: release it as soon as it is. */
  due?: boolean;
}

export type ScheduleEvent =
  /** The row as it is now (configured, or its counters changed). */
  | { type: 'record'; record: ScheduleRecord }
  /**
   * `tracked`: the objective will report when it ends (SKIP counts it as running until then).
   * `replacedObjectiveId`: set when the fire was counted at once; the lastObjectiveId it replaced.
   */
  | { type: 'preparing'; effectId: string; objectiveId: string; tracked?: boolean; replacedObjectiveId?: string | null }
  | { type: 'prepared'; effectId: string; started: boolean }
  | { type: 'finished'; objectiveId: string }
  | { type: 'held'; effectId: string; objectiveId: string; fireTime: string }
  | { type: 'held_prepared'; start?: ObjectiveStart; error?: string }
  | { type: 'held_due' }
  | { type: 'held_released'; started: boolean; tracked: boolean };

/**
 * What a schedule's turn tells the node's metrics (ActorDecision.observations):
 * a fire due at its time handled `latenessMs` after it (a trigger has no due time).
 */
export type ScheduleObservation = { type: 'fired'; latenessMs: number };

type Reply = ScheduleRecord | ScheduleTriggerReply | null;
type Decision = ActorDecision<ScheduleEvent, Reply, ScheduleChange>;
export type ScheduleBehavior = ActorBehavior<ScheduleState, ScheduleActorCommand, ScheduleEvent, Reply, ScheduleChange>;

export function evolveSchedule(state: ScheduleState, event: ScheduleEvent): ScheduleState {
  switch (event.type) {
    case 'record':
      return { ...state, record: event.record };
    case 'preparing':
      return {
        ...state, preparing: { ...state.preparing, [event.effectId]: event.objectiveId },
        ...(event.tracked ? { tracked: [...(state.tracked ?? []), event.effectId] } : {}),
        ...(event.replacedObjectiveId !== undefined ? { countedAtFire: { ...state.countedAtFire, [event.effectId]: event.replacedObjectiveId } } : {}),
      };
    case 'prepared': {
      const { [event.effectId]: objectiveId, ...preparing } = state.preparing;
      const tracked = (state.tracked ?? []).includes(event.effectId);
      const { [event.effectId]: _counted, ...countedAtFire } = state.countedAtFire ?? {};
      return {
        ...state, preparing, tracked: (state.tracked ?? []).filter((id) => id !== event.effectId),
        running: event.started && tracked && objectiveId ? [...state.running, objectiveId] : state.running,
        ...(state.countedAtFire ? { countedAtFire } : {}),
      };
    }
    case 'finished':
      return { ...state, running: state.running.filter((id) => id !== event.objectiveId) };
    case 'held':
      return { ...state, held: { effectId: event.effectId, objectiveId: event.objectiveId, fireTime: event.fireTime } };
    case 'held_prepared':
      return state.held ? { ...state, held: { ...state.held, ...(event.start ? { start: event.start } : {}), ...(event.error ? { error: event.error } : {}) } } : state;
    case 'held_due':
      return state.held ? { ...state, held: { ...state.held, due: true } } : state;
    case 'held_released': {
      const { held: released, ...rest } = state;
      return event.started && event.tracked && released ? { ...rest, running: [...state.running, released.objectiveId] } : rest;
    }
  }
}

/** A decision under construction: events are folded as they are added. */
class ScheduleTurn {
  readonly events: ScheduleEvent[] = [];
  readonly decision: Decision = {};
  /** The record's revision before this turn: a turn moves it on by one, however many updates it makes. */
  private readonly revisionBefore: number;

  constructor(public state: ScheduleState, readonly now: Date) {
    this.revisionBefore = state.record?.revision ?? 0;
  }

  apply(event: ScheduleEvent): void {
    // A 'record' event replaces the whole row, so only the turn's last one is journaled:
    // a fire updates its counters, then arms the next fire (the row twice over, otherwise).
    const earlier = event.type === 'record' ? this.events.findIndex((entry) => entry.type === 'record') : -1;
    if (earlier >= 0) this.events.splice(earlier, 1);
    this.events.push(event);
    this.state = evolveSchedule(this.state, event);
  }

  get record(): ScheduleRecord {
    if (!this.state.record) throw NotFoundError.resource('schedule', this.state.scheduleId);
    return this.state.record;
  }

  /** Records the row with changed info (and optionally other fields), projected in this turn. */
  update(info: Partial<ScheduleInfo>, fields: Partial<ScheduleRecord> = {}): ScheduleRecord {
    const previous = this.state.record;
    const base = previous ?? (fields as ScheduleRecord);
    const record: ScheduleRecord = {
      ...base, ...fields,
      info: { ...(previous?.info ?? initialScheduleInfo()), ...info },
      updatedAt: this.now.toISOString(),
      revision: this.revisionBefore + 1,
    };
    this.apply({ type: 'record', record });
    return record;
  }

  /**
   * Arms the next fire after `after`: a `prepare` reminder PREPARE_LEAD_MS
   * before it when there is time, else the `fire` reminder itself (or disarms
   * both when inactive or the rules never fire again).
   */
  arm(after: Date): void {
    const record = this.record;
    const next = record.spec.status === 'AGENT_SCHEDULE_STATUS_ACTIVE' ? nextFireTime(record.spec.schedule, after) : null;
    this.update({ nextFireAt: next?.toISOString() ?? null });
    if (!next) this.decision.reminders = { cancel: [FIRE_REMINDER, PREPARE_REMINDER] };
    else if (next.getTime() - this.now.getTime() > PREPARE_LEAD_MS) {
      this.decision.reminders = { set: [{ name: PREPARE_REMINDER, dueAt: new Date(next.getTime() - PREPARE_LEAD_MS) }], cancel: [FIRE_REMINDER] };
    } else this.decision.reminders = { set: [{ name: FIRE_REMINDER, dueAt: next }], cancel: [PREPARE_REMINDER] };
  }

  /** A fact for the node's metrics, counted once this turn has committed. */
  observe(observation: ScheduleObservation): void {
    (this.decision.observations ??= []).push(observation);
  }

  /** Drops the held fire (the schedule was reconfigured): its prepare, if still running, is aborted. */
  dropHeld(): void {
    const held = this.state.held;
    if (!held) return;
    if (!held.start && !held.error) this.decision.effects = { ...this.decision.effects, abort: [...(this.decision.effects?.abort ?? []), held.effectId] };
    this.apply({ type: 'held_released', started: false, tracked: false });
  }

  done(reply?: Reply): Decision {
    const last = [...this.events].reverse().find((event): event is Extract<ScheduleEvent, { type: 'record' }> => event.type === 'record');
    return {
      ...this.decision,
      events: this.events,
      project: last ? [{ type: 'schedule', schedule: last.record }] : [],
      ...(reply !== undefined ? { reply } : {}),
      // Between fires a schedule holds no memory: its reminder wakes it. A held fire keeps it, to start on time.
      ...(Object.keys(this.state.preparing).length === 0 && !this.state.held ? { passivate: true } : {}),
    };
  }
}

/**
 * One fire at `fireTime`: skipped under SKIP while an objective of the
 * schedule runs (or is being prepared), else an objective is prepared under a
 * new id. @returns the objective id, or undefined when skipped
 */
function fire(turn: ScheduleTurn, fireTime: Date): string | undefined {
  const record = turn.record;
  const busy = turn.state.running.length > 0 || Object.keys(turn.state.preparing).length > 0;
  if (record.spec.overlapPolicy === 'OVERLAP_POLICY_SKIP' && busy) {
    turn.update({ skipCount: record.info.skipCount + 1 });
    return undefined;
  }
  const objectiveId = newId('objective');
  const effectId = `prepare:${objectiveId}`;
  // Only SKIP needs to know when an objective ends: under ALLOW the objective does not report (a turn saved per fire).
  turn.apply({ type: 'preparing', effectId, objectiveId, ...(isSkip(record) ? { tracked: true } : {}), replacedObjectiveId: record.info.lastObjectiveId });
  // Counted now, so a trigger's answer (and the row) shows the fire; a prepare that fails takes it back.
  turn.update({ lastFiredAt: turn.now.toISOString(), lastObjectiveId: objectiveId, fireCount: record.info.fireCount + 1, lastError: null });
  startPrepare(turn, effectId, objectiveId, fireTime);
  return objectiveId;
}

const isSkip = (record: ScheduleRecord) => record.spec.overlapPolicy === 'OVERLAP_POLICY_SKIP';

function startPrepare(turn: ScheduleTurn, effectId: string, objectiveId: string, fireTime: Date): void {
  const record = turn.record;
  const input: PrepareScheduledObjectiveInput = {
    scheduleId: record.id, accountId: record.accountId, workspaceId: record.workspaceId, agentId: record.agentId, profileId: record.profileId,
    objectiveId, fireTime: fireTime.toISOString(), initialMessage: record.spec.initialMessage,
    ...(record.spec.data !== undefined ? { data: record.spec.data } : {}),
    ...(record.spec.variationId ? { variationId: record.spec.variationId } : {}),
  };
  turn.decision.effects = {
    ...turn.decision.effects,
    start: [...(turn.decision.effects?.start ?? []), { id: effectId, name: PREPARE_SCHEDULED_OBJECTIVE_EFFECT, input, timeoutMs: PREPARE_TIMEOUT_MS }],
  };
}

/** Prepares the next fire's objective ahead of its time and holds it; the fire reminder releases it. */
function prepareAhead(turn: ScheduleTurn, fireTime: Date): void {
  const objectiveId = newId('objective');
  const effectId = `prepare:${objectiveId}`;
  turn.apply({ type: 'held', effectId, objectiveId, fireTime: fireTime.toISOString() });
  startPrepare(turn, effectId, objectiveId, fireTime);
  turn.decision.reminders = { set: [{ name: FIRE_REMINDER, dueAt: fireTime }] };
}

/**
 * The held fire at its time: started (its createdAt the actual start), or
 * skipped under SKIP while another objective runs, or counted as skipped with
 * the prepare's error.
 */
function releaseHeld(turn: ScheduleTurn): void {
  const held = turn.state.held!;
  const record = turn.record;
  const busy = turn.state.running.length > 0 || Object.keys(turn.state.preparing).length > 0;
  if (held.error) {
    turn.apply({ type: 'held_released', started: false, tracked: false });
    turn.update({ skipCount: record.info.skipCount + 1, lastError: held.error, lastFiredAt: turn.now.toISOString() });
    return;
  }
  if (isSkip(record) && busy) {
    turn.apply({ type: 'held_released', started: false, tracked: false });
    turn.update({ skipCount: record.info.skipCount + 1 });
    return;
  }
  const at = turn.now.toISOString();
  const prepared = held.start!;
  const start: ObjectiveStart = {
    ...prepared,
    metadata: { ...prepared.metadata, objective: { ...prepared.metadata.objective, createdAt: at } },
    ...(isSkip(record) ? { reportsToSchedule: true } : {}),
  };
  turn.apply({ type: 'held_released', started: true, tracked: isSkip(record) });
  turn.update({ lastObjectiveId: held.objectiveId, fireCount: record.info.fireCount + 1, lastError: null, lastFiredAt: at });
  turn.decision.send = [{ kind: OBJECTIVE_KIND, id: held.objectiveId, command: { type: 'start', start }, first: true }];
}

/**
 * The fire times from `due` to now: the latest runs when it is within the
 * catch-up window, every other one counts as skipped (api-decisions.md: only
 * the latest missed fire within the window runs).
 */
function dueFires(record: ScheduleRecord, due: Date, now: Date): { run: Date | null; missed: number } {
  const windowMs = parseScheduleDuration(record.spec.catchupWindow, 'spec.catchupWindow') * 1000;
  // On time (the usual case): the next fire is after now, so `due` is the only one to consider.
  const following = nextFireTime(record.spec.schedule, due);
  if (!following || following.getTime() > now.getTime()) {
    return now.getTime() - due.getTime() <= windowMs ? { run: due, missed: 0 } : { run: null, missed: 1 };
  }
  const times: Date[] = [];
  let cursor = new Date(due.getTime() - 1000);
  let count = 0;
  while (count < MAX_MISSED_COUNTED) {
    const batch = upcomingFireTimes(record.spec.schedule, cursor, 100).filter((time) => time.getTime() <= now.getTime());
    if (batch.length === 0) break;
    count += batch.length;
    times.push(batch.at(-1)!);
    if (batch.length < 100) break;
    cursor = batch.at(-1)!;
  }
  const latest = times.at(-1) ?? null;
  if (latest && now.getTime() - latest.getTime() <= windowMs) return { run: latest, missed: count - 1 };
  return { run: null, missed: count };
}

/** The fire due at `due` (and any missed since): a held fire is released, else the objective is prepared now; then the next is armed. */
function fireDue(turn: ScheduleTurn, due: Date, now: Date): Decision {
  const record = turn.record;
  const { run, missed } = dueFires(record, due, now);
  if (missed > 0) turn.update({ skipCount: record.info.skipCount + missed });
  if (run) turn.observe({ type: 'fired', latenessMs: Math.max(0, now.getTime() - run.getTime()) });
  const held = turn.state.held;
  if (held && run && held.fireTime === run.toISOString()) {
    if (held.start || held.error) releaseHeld(turn);
    else turn.apply({ type: 'held_due' });
  } else {
    turn.dropHeld();
    if (run) fire(turn, run);
  }
  // Never before the fire just handled: a reminder handed over a little early must not arm the same time again.
  turn.arm(new Date(Math.max(now.getTime(), due.getTime())));
  return turn.done();
}

export const scheduleBehavior: ScheduleBehavior = {
  kind: SCHEDULE_KIND,
  initialState: (scheduleId) => ({ scheduleId, record: null, running: [], preparing: {} }),
  evolve: evolveSchedule,

  decide(state, command, context: ActorContext) {
    const turn = new ScheduleTurn(state, context.now);
    switch (command.type) {
      case 'configure': {
        const previous = state.record;
        turn.update(previous?.info ?? {}, { ...command.schedule, createdAt: previous?.createdAt ?? command.schedule.createdAt });
        turn.dropHeld();
        // A resume never fires retroactively: the next fire is after now.
        turn.arm(context.now);
        return turn.done(turn.record);
      }
      case 'trigger': {
        if (turn.record.spec.status === 'AGENT_SCHEDULE_STATUS_ARCHIVED') throw new FailedPreconditionError(`schedule ${state.scheduleId} is ARCHIVED`);
        const objectiveId = fire(turn, context.now);
        return turn.done({ schedule: turn.record, ...(objectiveId ? { objectiveId } : {}) });
      }
      case 'get':
        return turn.done(turn.record);
      case 'objective_finished':
        if (state.running.includes(command.objectiveId)) turn.apply({ type: 'finished', objectiveId: command.objectiveId });
        return turn.done(null);
    }
  },

  onReminder(state, reminder: FiredReminder, context: ActorContext) {
    const turn = new ScheduleTurn(state, context.now);
    const record = state.record;
    if (!record || record.spec.status !== 'AGENT_SCHEDULE_STATUS_ACTIVE') return turn.done();
    const nextFireAt = record.info.nextFireAt ? new Date(record.info.nextFireAt) : null;
    if (reminder.name === PREPARE_REMINDER) {
      if (!nextFireAt) return turn.done();
      // On time: prepare now, start at the fire time. Late (the node was down): fire as the fire reminder would.
      if (nextFireAt.getTime() > context.now.getTime()) {
        prepareAhead(turn, nextFireAt);
        return turn.done();
      }
      return fireDue(turn, nextFireAt, context.now);
    }
    if (reminder.name !== FIRE_REMINDER) return turn.done();
    return fireDue(turn, reminder.dueAt, context.now);
  },
  onEffectResult(state, outcome: EffectOutcome, context: ActorContext) {
    const turn = new ScheduleTurn(state, context.now);
    if (state.held && outcome.id === state.held.effectId && state.record) {
      turn.apply(outcome.ok ? { type: 'held_prepared', start: outcome.value as ObjectiveStart } : { type: 'held_prepared', error: outcome.error.message });
      if (state.held.due) releaseHeld(turn);
      return turn.done();
    }
    const objectiveId = state.preparing[outcome.id];
    if (!objectiveId || !state.record) return turn.done();
    const counted = state.countedAtFire !== undefined && outcome.id in state.countedAtFire;
    const info = state.record.info;
    if (outcome.ok) {
      const tracked = (state.tracked ?? []).includes(outcome.id);
      const start: ObjectiveStart = { ...(outcome.value as ObjectiveStart), ...(tracked ? { reportsToSchedule: true } : {}) };
      turn.apply({ type: 'prepared', effectId: outcome.id, started: true });
      if (!counted) turn.update({ lastObjectiveId: objectiveId, fireCount: info.fireCount + 1, lastError: null });
      turn.decision.send = [{ kind: OBJECTIVE_KIND, id: objectiveId, command: { type: 'start', start }, first: true }];
    } else {
      // The agent was archived, its model disabled…: this fire made no objective, and says why.
      const replaced = state.countedAtFire?.[outcome.id] ?? null;
      turn.apply({ type: 'prepared', effectId: outcome.id, started: false });
      turn.update({
        skipCount: info.skipCount + 1, lastError: outcome.error.message,
        // The count of the fire is taken back; a later fire's objective stays the last one.
        ...(counted ? { fireCount: info.fireCount - 1, ...(info.lastObjectiveId === objectiveId ? { lastObjectiveId: replaced } : {}) } : {}),
      });
    }
    return turn.done();
  },
};
