// One sharded, event-sourced actor: runs a behaviour's decisions one input at
// a time inside a nact actor. A turn is short: decide, write everything the
// decision produced in one fenced transaction (TurnWriter), fold, reply, then
// hand new effects to the EffectRunner, which runs them outside the turn so
// the mailbox keeps taking messages. Effect results come back as durable
// commands (or in memory). The asks, tells and in-memory effect outcomes
// queued behind a message are decided with it, one after another, and
// written as one group (handleGroup). On activation the actor recovers its
// state (snapshot + journal tail), applies its pending durable commands in
// write order, then the effect outcomes this node handed over in memory that
// no committed turn applied yet (the actor stopped before, or with a failed
// turn), and hands the effects it had started but whose runs were lost back to
// the behaviour.
import { ApiError, toApiError } from '../../src/errors';
import { newId, newUlid } from '../../src/ids';
import type { ActorContext, ActorDecision, ActorKind, AnyActorBehavior, EffectOutcome, FiredReminder, RunningEffect } from '../../src/ports/actor-behavior';
import { shardOf } from '../../src/sharding/fnv1a32';
import { DuplicateCommandError, isRetryable, ShardFencedError, ShardMovedError } from '../../src/sharding/sharding.errors';
import type { ActorCommandRepository, PendingCommand } from '../../persistence/runtime/actor-command.repository';
import type { OutboxEvent } from '../../persistence/runtime/actor-outbox.repository';
import type { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import type { ActorReminderRepository } from '../../persistence/runtime/actor-reminder.repository';
import type { CommandInsert, Fence, OutboxInsert, ReminderUpsert, TurnWrite, TurnWriter } from '../../persistence/runtime/turn-writer';
import { runtimeMetrics } from '../metrics';
import { stopActor, takeQueued, type ActorFunction, type ActorRef } from '../nact/nact';
import { withoutTransientInput, type EffectRunner } from './effect-runner';
import type { RuntimeLogger } from './runtime-logger';
import { copyDictionary } from '../../src/dictionary';
import { tracingEnabled, type OpenSpan } from '../../src/tracing/tracing';
import { openTurnSpan, type TurnCause } from './turn-tracing';

/** The outcome of a command, as handed back to the asker. */
export type EntityReply = { ok: true; value: unknown } | { ok: false; error: ApiError };

/** Messages an entity accepts. */
export type EntityMessage =
  /** An ask or a tell (not stored): applied once per command id. */
  /** `newActor`: the caller promises nothing was ever stored for this actor (WireRequest.newActor). */
  /** `traceparent`: the span the command was sent from (WireRequest.traceparent). */
  | { type: 'command'; cid: string; command: unknown; reply?: (reply: EntityReply) => void; newActor?: boolean; traceparent?: string }
  /**
   * A stored command arrived (or may have): apply the pending ones in write
   * order. With `command` (an effect result this node just stored): apply that
   * one without reading the pending list back; it answers to no other command's
   * order, and any other pending command has its own notification or poll.
   */
  | { type: 'stored'; command?: PendingCommand; done?: () => void }
  | { type: 'reminder'; reminder: FiredReminder & { attempts: number }; done: () => void }
  /** Activate (recovery after a takeover, a poll that found pending work). */
  | { type: 'wake'; done: () => void }
  | { type: 'barrier'; done: (error?: unknown) => void };

/** The persisted shape of an entity: the behaviour's state plus the runtime's bookkeeping. */
export interface Envelope {
  state: unknown;
  /** Sequence number of the last journal entry folded in. */
  seq: number;
  /** Sequence number covered by the latest snapshot. */
  snapshotSeq: number;
  /** Replies of the latest commands by id: a retried command is answered, not applied again. */
  recent: Array<[string, unknown]>;
  /** Sequence number of the last event this actor published (gapless). */
  eventSeq: number;
  /** Effects started and not finished, by id. */
  effects: Record<string, RunningEffect>;
  /** Reminders set and not fired or cancelled: name → due time (ms). */
  reminders: Record<string, number>;
  /** JSON size of the journal entries this activation wrote since the latest snapshot (periodicSnapshot). */
  journalBytes?: number;
  /** JSON size of the latest snapshot this activation wrote. */
  snapshotBytes?: number;
}

/** One journal entry: what a turn decided, including the runtime's bookkeeping. */
export interface EntryPayload {
  cid: string | null;
  events: unknown[];
  reply: unknown;
  eventSeq?: number;
  effectsStarted?: RunningEffect[];
  effectsEnded?: string[];
  remindersSet?: Record<string, number>;
  remindersCancelled?: string[];
  reminderFired?: string;
}

const RECENT_REPLIES = 64;
/**
 * A periodic snapshot also waits until the journal written since the latest
 * one holds this many times that snapshot's size. A state that grows with its
 * journal (an objective's conversation) is then written in full a bounded
 * number of times per byte of journal, not once every snapshotEvery entries
 * (which costs the square of the conversation); a small state is snapshotted
 * every snapshotEvery entries as before.
 */
const SNAPSHOT_JOURNAL_RATIO = 2;
/** Marks a stored command carrying an effect's outcome. */
const EFFECT_OUTCOME = 'effectOutcome';
const MAX_REMINDER_RETRY_MS = 5 * 60_000;

/** Everything an entity needs, fixed for one activation. */
export interface EntityDeps {
  kind: ActorKind;
  id: string;
  key: string;
  fence: Fence;
  journal: ActorJournalRepository;
  commands: ActorCommandRepository;
  reminders: ActorReminderRepository;
  writer: TurnWriter;
  effects: EffectRunner;
  snapshotEvery: number;
  /** How long this activation remembers the replies of the commands it applied (a caller's whole retry budget). */
  retryWindowMs: number;
  shardCount: number;
  eventSubject: string;
  reminderPollMs: number;
  /** This node (the turn spans say where a turn ran). */
  nodeId: string;
  logger: RuntimeLogger;
  /** The outbox rows a turn committed, in write order (the relay publishes them without reading them back). */
  onPublished: (rows: OutboxEvent[]) => void;
  /** The turn wrote durable commands for other actors (deliver them now). */
  onSent: (sends: CommandInsert[]) => void;
  /** A write was refused by the fence: this node lost the shard. */
  onFenced: (shard: number) => void;
}

/**
 * Replies of the commands this activation applied within the retry window:
 * under load a caller's retry can come later than the 64 replies the envelope
 * keeps (the journal's command id index still catches it, at a higher cost).
 */
class AppliedCommands {
  private readonly replies = new Map<string, { reply: unknown; at: number }>();

  constructor(private readonly windowMs: number) {}

  find(cid: string): { reply: unknown } | undefined {
    return this.replies.get(cid);
  }

  add(cid: string, reply: unknown): void {
    const now = Date.now();
    this.replies.set(cid, { reply, at: now });
    for (const [key, entry] of this.replies) {
      if (now - entry.at <= this.windowMs) break;
      this.replies.delete(key);
    }
  }
}

interface Activation extends EntityDeps {
  behavior: AnyActorBehavior;
  applied: AppliedCommands;
  /** Set by a committed turn whose decision asked to passivate; the entity function stops the actor after its message. */
  passivateRequested: boolean;
  /** Set while the turns of several queued messages are decided to be written together (see handleGroup). */
  group?: TurnGroup;
}

type Decision = ActorDecision<unknown, unknown, unknown, unknown>;

/** What a turn applies besides the decision. */
interface TurnInput {
  cid: string | null;
  /** Write an entry even when the decision writes nothing (durable inputs: their consumption must be recorded). */
  persist: boolean;
  processed: string[];
  fired?: FiredReminder;
  /** Effects this input finishes. */
  ended?: string[];
  /** The in-memory outcome this input applies: the runner forgets its run once the turn committed. */
  settles?: { id: string; attempt: number };
  reply?: (reply: EntityReply) => void;
  /** The traceparent the command came with (a command sent from a traced span). */
  traceparent?: string;
}

/** The envelope of a new actor. */
export function initialEnvelope(behavior: AnyActorBehavior, id: string): Envelope {
  return { state: behavior.initialState(id), seq: 0, snapshotSeq: 0, recent: [], eventSeq: 0, effects: {}, reminders: {} };
}

/**
 * The record with `removed` taken out and `added` put in. The first change
 * copies it into a dictionary the envelope owns (src/dictionary.ts); later
 * changes change that one in place. Nobody else holds it: nact hands an actor
 * one message at a time, a turn awaits its write and its snapshot before the
 * next, and a turn whose write failed is not folded. Copying it every turn was
 * the largest cost left of a webhook endpoint with 64 attempts in flight.
 */
function changedRecord<T>(record: Record<string, T>, removed: readonly string[], added: ReadonlyArray<readonly [string, T]>): Record<string, T> {
  if (!added.length && !removed.some((key) => key in record)) return record;
  const owned = Object.getPrototypeOf(record) === null ? record : copyDictionary(record);
  for (const key of removed) delete owned[key];
  for (const [key, value] of added) owned[key] = value;
  return owned;
}

function fold(behavior: AnyActorBehavior, envelope: Envelope, entry: EntryPayload, sequenceNr: number, evolvedState?: unknown, entryBytes = 0): Envelope {
  const state = evolvedState !== undefined ? evolvedState : entry.events.reduce((current: unknown, event) => behavior.evolve(current, event), envelope.state);
  const recent = entry.cid ? [...envelope.recent.slice(1 - RECENT_REPLIES), [entry.cid, entry.reply] as [string, unknown]] : envelope.recent;
  // One copy of each record per turn at most: an actor with many effects running (a webhook endpoint) folds often.
  const started = entry.effectsStarted?.map((effect) => [effect.id, effect] as const) ?? [];
  const effects = changedRecord(envelope.effects, entry.effectsEnded ?? [], started);
  const cancelled = entry.reminderFired !== undefined ? [...(entry.remindersCancelled ?? []), entry.reminderFired] : entry.remindersCancelled ?? [];
  const reminders = changedRecord(envelope.reminders, cancelled, entry.remindersSet ? Object.entries(entry.remindersSet) : []);
  const journalBytes = entryBytes ? { journalBytes: (envelope.journalBytes ?? 0) + entryBytes } : {};
  return { ...envelope, state, seq: sequenceNr, recent, eventSeq: entry.eventSeq ?? envelope.eventSeq, effects, reminders, ...journalBytes };
}

/** The envelope a snapshot stored, its state made the behaviour's own (fromSnapshot); one written by an earlier version of the runtime lacks the newer bookkeeping. */
function normalize(behavior: AnyActorBehavior, payload: unknown): Envelope {
  const envelope = payload as Partial<Envelope> & Pick<Envelope, 'state' | 'seq'>;
  const state = behavior.fromSnapshot ? behavior.fromSnapshot(envelope.state) : envelope.state;
  return { snapshotSeq: envelope.seq, recent: [], eventSeq: 0, effects: {}, reminders: {}, ...envelope, state };
}

function context(act: Activation): ActorContext {
  return { kind: act.behavior.kind, id: act.id, now: new Date() };
}

function recordedReply(act: Activation, envelope: Envelope, cid: string): { reply: unknown } | undefined {
  const recent = envelope.recent.find(([id]) => id === cid);
  return recent ? { reply: recent[1] } : act.applied.find(cid);
}

function outboxRows(act: Activation, decision: Decision, firstSeq: number, traceparent: string | undefined): OutboxInsert[] {
  // Only a kind that can give a payload back may leave it out of the outbox (OutgoingEvent.payloadProjected).
  const projectable = act.kind.projectedPayloads !== undefined;
  return (decision.publish ?? []).map((event, index) => {
    const id = event.id ?? newId('event');
    const actorSeq = firstSeq + index;
    const payload = event.payload ?? { id, type: event.type, kind: act.behavior.kind, actorId: act.id, sequence: actorSeq, data: event.data, occurredAt: new Date().toISOString() };
    const headers: Record<string, string> = { 'Agentrt-Actor-Key': act.key, 'Agentrt-Actor-Sequence': String(actorSeq) };
    // A traced turn's events carry its span (W3C Trace Context over NATS): their consumers, the webhook intake first, continue it.
    if (traceparent) headers.traceparent = traceparent;
    return {
      id, subject: event.subject ?? act.eventSubject, payload, actorSeq, headers,
      ...(projectable && event.payloadProjected ? { payloadProjected: true as const } : {}),
    };
  });
}

function startedEffects(envelope: Envelope, decision: Decision): RunningEffect[] {
  return (decision.effects?.start ?? []).map((request) => {
    const id = request.id ?? newUlid();
    const prior = envelope.effects[id];
    return {
      id, name: request.name, input: request.input ?? null, timeoutMs: request.timeoutMs, attempt: prior ? prior.attempt + 1 : 1,
      ...(request.durableResult === false ? { durableResult: false as const } : {}),
      ...(request.transientInput !== undefined ? { transientInput: request.transientInput } : {}),
    };
  });
}

/** Builds the write of one turn and the journal entry it carries. */
function buildTurn(act: Activation, envelope: Envelope, decision: Decision, input: TurnInput, traceparent: string | undefined) {
  const started = startedEffects(envelope, decision);
  const aborted = (decision.effects?.abort ?? []).filter((id) => envelope.effects[id] && !started.some((effect) => effect.id === id));
  const ended = [...new Set([...(input.ended ?? []), ...aborted])].filter((id) => envelope.effects[id]);
  const before = Object.keys(envelope.effects).length;
  const leaving = new Set([...ended, ...started.map((effect) => effect.id)]);
  let after = started.length;
  for (const id in envelope.effects) if (!leaving.has(id)) after++;
  const outbox = outboxRows(act, decision, envelope.eventSeq + 1, traceparent);
  const sends: CommandInsert[] = (decision.send ?? []).map((send) => ({
    id: newUlid(), shard: shardOf(send.id, act.shardCount), kind: send.kind, actorId: send.id, payload: send.command, ...(send.first ? { first: true as const } : {}),
  }));
  const remindersSet = decision.reminders?.set ?? [];
  const entry: EntryPayload = {
    cid: input.cid,
    events: decision.events ?? [],
    reply: decision.reply ?? null,
    ...(outbox.length ? { eventSeq: envelope.eventSeq + outbox.length } : {}),
    ...(started.length ? { effectsStarted: started.map(withoutTransientInput) } : {}),
    ...(ended.length ? { effectsEnded: ended } : {}),
    ...(remindersSet.length ? { remindersSet: Object.fromEntries(remindersSet.map((reminder) => [reminder.name, reminder.dueAt.getTime()])) } : {}),
    ...(decision.reminders?.cancel?.length ? { remindersCancelled: decision.reminders.cancel } : {}),
    ...(input.fired ? { reminderFired: input.fired.name } : {}),
  };
  const write: TurnWrite = {
    fence: act.fence,
    kind: act.behavior.kind,
    actorId: act.id,
    key: act.key,
    entry: { sequenceNr: envelope.seq + 1, commandId: input.cid, payload: entry },
    outbox,
    remindersSet: remindersSet.map((reminder) => ({ name: reminder.name, dueAt: reminder.dueAt, payload: reminder.payload ?? null })),
    remindersCancelled: decision.reminders?.cancel ?? [],
    reminderFired: input.fired ? { name: input.fired.name, dueAt: input.fired.dueAt } : undefined,
    processedCommandIds: input.processed,
    sends,
    work: before === 0 && after > 0 ? 'enter' : before > 0 && after === 0 ? 'leave' : undefined,
    changes: decision.project ?? [],
  };
  const writes =
    input.persist ||
    entry.events.length > 0 ||
    outbox.length > 0 ||
    decision.reminders !== undefined ||
    started.length > 0 ||
    ended.length > 0 ||
    sends.length > 0 ||
    write.changes.length > 0;
  let entryBytes = 0;
  if (writes) {
    // Serialized once: the writer sends this text, and its length weighs the entry (SNAPSHOT_JOURNAL_RATIO).
    const payloadJson = JSON.stringify(entry);
    write.entry = { ...write.entry!, payloadJson };
    entryBytes = payloadJson.length;
  }
  return { write, entry, entryBytes, started, aborted, sends, writes };
}

/** A turn built from a decision, before its write. */
interface BuiltTurn extends ReturnType<typeof buildTurn> {
  decision: Decision;
  input: TurnInput;
  startedAt: number;
  /** The turn's span (tracing on, and the turn belongs to a trace): ended once the turn committed or failed. */
  span?: OpenSpan;
}

function turnCause(input: TurnInput): TurnCause {
  if (input.fired) return 'reminder';
  if (input.ended?.length) return input.cid?.startsWith('interrupted:') ? 'effect_interrupted' : 'effect_result';
  return input.persist ? 'stored_command' : 'command';
}

/** The turn's span, while tracing is on (src/tracing/tracing.ts); one boolean check while it is off. */
function turnSpan(act: Activation, envelope: Envelope, decision: Decision, input: TurnInput): OpenSpan | undefined {
  if (!tracingEnabled()) return undefined;
  return openTurnSpan({
    behavior: act.behavior, actorId: act.id, nodeId: act.nodeId, shard: act.fence.shard,
    state: envelope.state, events: decision.events ?? [], incoming: input.traceparent, cause: turnCause(input),
  });
}

/** What a committed turn does after its write: remember and send its reply, start and abort effects, deliver its sends, wake the relay. */
function afterCommit(act: Activation, built: BuiltTurn): void {
  const { entry, input, aborted, started, sends, write, decision } = built;
  if (input.cid) act.applied.add(input.cid, entry.reply);
  input.reply?.({ ok: true, value: entry.reply });
  if (input.settles) act.effects.settle(act.key, input.settles.id, input.settles.attempt);
  for (const id of aborted) act.effects.abandon(act.key, id);
  for (const effect of started) act.effects.start({ kind: act.behavior.kind, actorId: act.id, key: act.key, fence: act.fence, effect, traceparent: built.span?.traceparent });
  if (sends.length) act.onSent(sends);
  if (write.outbox.length) {
    const committedAt = new Date();
    act.onPublished(write.outbox.map((row) => ({ ...row, shard: act.fence.shard, actorKey: act.key, createdAt: committedAt })));
  }
  if (decision.passivate) act.passivateRequested = true;
  if (decision.observations) observeCommitted(act, decision.observations);
}

/** Hands a committed turn's observations to its kind's metrics; a failure there never fails the turn. */
function observeCommitted(act: Activation, observations: readonly unknown[]): void {
  try {
    act.kind.observe?.(observations);
  } catch (error) {
    act.logger.error({ err: error, key: act.key }, 'counting a turn into the metrics failed');
  }
}

/**
 * Runs one turn: writes what the decision produced (when it produced
 * anything), folds it, replies, then starts and aborts effects, delivers the
 * sends and wakes the relay. A refused write is answered and rethrown, so nact
 * stops the actor (a duplicate command is answered from its record instead).
 * In a group (handleGroup) the turn is folded now and written with the group.
 */
async function turn(act: Activation, envelope: Envelope, decision: Decision, input: TurnInput): Promise<Envelope> {
  const span = turnSpan(act, envelope, decision, input);
  const built: BuiltTurn = { ...buildTurn(act, envelope, decision, input, span?.traceparent), decision, input, startedAt: performance.now(), span };
  if (act.group) {
    act.group.turns.push(built);
    return built.writes ? fold(act.behavior, envelope, built.entry, envelope.seq + 1, decision.evolvedState, built.entryBytes) : envelope;
  }
  if (!built.writes) {
    span?.end();
    input.reply?.({ ok: true, value: decision.reply ?? null });
    return envelope;
  }
  try {
    await act.writer.write(built.write);
  } catch (error) {
    span?.end(error instanceof DuplicateCommandError ? undefined : error);
    if (error instanceof DuplicateCommandError) {
      if (input.processed.length) await act.commands.markProcessed(input.processed);
      if (input.settles) act.effects.settle(act.key, input.settles.id, input.settles.attempt);
      input.reply?.({ ok: true, value: error.reply });
      return envelope;
    }
    input.reply?.({ ok: false, error: toApiError(error) });
    noteFenced(act, error);
    throw error;
  }
  runtimeMetrics.turnDuration.observe({ kind: act.behavior.kind }, (performance.now() - built.startedAt) / 1000);
  const next = fold(act.behavior, envelope, built.entry, envelope.seq + 1, decision.evolvedState, built.entryBytes);
  afterCommit(act, built);
  span?.end();
  return decision.snapshot ? requestedSnapshot(act, next) : periodicSnapshot(act, next);
}

function noteFenced(act: Activation, error: unknown): void {
  if (error instanceof ShardFencedError) {
    runtimeMetrics.fencedWrites.inc();
    act.onFenced(act.fence.shard);
  }
}

/** Most messages one group of turns takes. */
const MAX_GROUP = 64;

/**
 * Messages whose turns may be written with the turns of the messages queued
 * before them: asks and tells, and effect outcomes handed over in memory.
 * Their decisions need nothing from the database, so a group is decided in
 * memory, in mailbox order, and written at once. (Stored commands must be
 * marked processed, and reminders are checked against their rows: they keep
 * a turn of their own.)
 */
function groupable(message: EntityMessage): boolean {
  return message.type === 'command' || (message.type === 'stored' && message.command?.unstored === true && message.done === undefined);
}

/**
 * The turns of one group: each folded into the envelope the next one
 * decides on, their writes merged into one (one statement with the other
 * actors' turns), their replies held until it commits.
 */
class TurnGroup {
  readonly turns: BuiltTurn[] = [];
  private readonly replies: Array<() => void> = [];
  /** Effects running before the group's first turn (the work index moves on the group's net change). */
  readonly effectsBefore: number;

  constructor(envelope: Envelope) {
    this.effectsBefore = Object.keys(envelope.effects).length;
  }

  /** The message with its reply held until the group's write commits (a reply must not reveal a turn that may still fail). */
  holdReply(message: EntityMessage): EntityMessage {
    if (message.type !== 'command' || !message.reply) return message;
    const reply = message.reply;
    return { ...message, reply: (value) => this.replies.push(() => reply(value)) };
  }

  releaseReplies(): void {
    for (const reply of this.replies.splice(0)) reply();
  }

  /** One write for every turn that writes: the journal entries in order, the rest merged (the last change of a reminder wins). */
  mergedWrite(effectsAfter: number): TurnWrite | null {
    const writing = this.turns.filter((built) => built.writes).map((built) => built.write);
    if (writing.length === 0) return null;
    // One writing turn: its own write is the group's (the others change no effect, so its work index move is the group's).
    if (writing.length === 1) return writing[0];
    const reminders = new Map<string, ReminderUpsert | null>();
    for (const write of writing) {
      for (const name of write.remindersCancelled) reminders.set(name, null);
      for (const reminder of write.remindersSet) reminders.set(reminder.name, reminder);
    }
    const [first, ...rest] = writing;
    return {
      fence: first.fence,
      kind: first.kind,
      actorId: first.actorId,
      key: first.key,
      entry: first.entry,
      followingEntries: rest.flatMap((write) => (write.entry ? [write.entry] : [])),
      outbox: writing.flatMap((write) => write.outbox),
      remindersSet: [...reminders.values()].filter((reminder): reminder is ReminderUpsert => reminder !== null),
      remindersCancelled: [...reminders].filter(([, reminder]) => reminder === null).map(([name]) => name),
      processedCommandIds: writing.flatMap((write) => write.processedCommandIds),
      sends: writing.flatMap((write) => write.sends),
      work: this.effectsBefore === 0 && effectsAfter > 0 ? 'enter' : this.effectsBefore > 0 && effectsAfter === 0 ? 'leave' : undefined,
      changes: writing.flatMap((write) => write.changes),
    };
  }
}

/**
 * Handles `messages` (the one nact handed over and those taken from behind it
 * in the mailbox) as one group: decided one after another on the envelope
 * each leaves, written at once, then answered. An actor whose turns wait
 * on their commit one at a time (a webhook endpoint with many deliveries in
 * flight) writes as many turns per commit as messages queued meanwhile.
 * A failed write fails every message of the group and stops the actor (its
 * envelope holds the folded turns): asks are answered with the error (a
 * duplicate command with a retryable one, so its caller reaches the next
 * activation, which knows it); effect outcomes handed over in memory stay
 * with the EffectRunner until a committed turn applied them, so the next
 * activation applies them (the host wakes the actor for them).
 */
async function handleGroup(act: Activation, envelope: Envelope, messages: EntityMessage[]): Promise<Envelope> {
  const group = new TurnGroup(envelope);
  let current = envelope;
  act.group = group;
  try {
    for (const message of messages) current = await handle(act, current, group.holdReply(message));
    const write = group.mergedWrite(Object.keys(current.effects).length);
    if (write) await act.writer.write(write);
  } catch (error) {
    for (const built of group.turns) built.span?.end(error);
    const status = toApiError(error instanceof DuplicateCommandError ? new ShardMovedError(act.fence.shard) : error);
    for (const message of messages) if (message.type === 'command') message.reply?.({ ok: false, error: status });
    noteFenced(act, error);
    throw error;
  } finally {
    act.group = undefined;
  }
  const committedAt = performance.now();
  for (const built of group.turns) {
    if (!built.writes) {
      // As a turn alone that writes nothing: answered, nothing remembered.
      built.span?.end();
      built.input.reply?.({ ok: true, value: built.decision.reply ?? null });
      continue;
    }
    runtimeMetrics.turnDuration.observe({ kind: act.behavior.kind }, (committedAt - built.startedAt) / 1000);
    afterCommit(act, built);
    built.span?.end();
  }
  group.releaseReplies();
  return group.turns.some((built) => built.decision.snapshot) ? requestedSnapshot(act, current) : periodicSnapshot(act, current);
}

/** A snapshot the decision asked for; a failure is logged and the next turn goes on (the periodic one catches up). */
async function requestedSnapshot(act: Activation, envelope: Envelope): Promise<Envelope> {
  try {
    return await snapshot(act, envelope);
  } catch (error) {
    act.logger.warn({ err: error, key: act.key }, 'the snapshot a decision asked for failed; the next periodic snapshot covers it');
    return envelope;
  }
}

async function snapshot(act: Activation, envelope: Envelope): Promise<Envelope> {
  if (envelope.seq === envelope.snapshotSeq) return envelope;
  const { journalBytes: _written, snapshotBytes: _previous, ...kept } = envelope;
  const next = { ...kept, snapshotSeq: envelope.seq };
  const snapshotBytes = await act.journal.saveSnapshotFenced({ key: act.key, sequenceNr: next.seq, payload: next }, act.fence);
  return { ...next, snapshotBytes };
}

/** The periodic snapshot is an optimisation: a failure is logged and retried after the next entry. */
async function periodicSnapshot(act: Activation, envelope: Envelope): Promise<Envelope> {
  if (envelope.seq - envelope.snapshotSeq < act.snapshotEvery) return envelope;
  if ((envelope.journalBytes ?? 0) < SNAPSHOT_JOURNAL_RATIO * (envelope.snapshotBytes ?? 0)) return envelope;
  try {
    return await snapshot(act, envelope);
  } catch (error) {
    act.logger.warn({ err: error, key: act.key }, 'snapshot failed');
    return envelope;
  }
}

/** Runs a behaviour callback; an error is logged (a bug or a refusal worth seeing) and returned. */
async function decideSafely(act: Activation, what: string, run: () => Decision | Promise<Decision>): Promise<{ decision: Decision } | { error: unknown }> {
  try {
    return { decision: await run() };
  } catch (error) {
    const status = toApiError(error);
    const fields = { err: error, key: act.key, code: status.code };
    if (status.code === 'INTERNAL') act.logger.error(fields, `${what} of ${act.behavior.kind} failed`);
    else act.logger.info(fields, `${what} of ${act.behavior.kind} refused`);
    return { error };
  }
}

async function handleCommand(act: Activation, envelope: Envelope, message: Extract<EntityMessage, { type: 'command' }>): Promise<Envelope> {
  const previous = recordedReply(act, envelope, message.cid);
  if (previous) {
    message.reply?.({ ok: true, value: previous.reply });
    return envelope;
  }
  const outcome = await decideSafely(act, 'decide', () => act.behavior.decide(envelope.state, message.command, context(act)));
  if ('error' in outcome) {
    message.reply?.({ ok: false, error: toApiError(outcome.error) });
    return envelope;
  }
  return turn(act, envelope, outcome.decision, { cid: message.cid, persist: false, processed: [], reply: message.reply, traceparent: message.traceparent });
}

function effectOutcomeOf(command: PendingCommand): EffectOutcome | undefined {
  const payload = command.payload as Record<string, unknown> | null;
  return command.id.startsWith('fx:') && payload && typeof payload === 'object' ? (payload[EFFECT_OUTCOME] as EffectOutcome) : undefined;
}

/** The stored command carrying an effect's outcome. */
export function effectOutcomeCommand(key: string, outcome: EffectOutcome): { id: string; payload: unknown } {
  return { id: `fx:${key}:${outcome.id}:${outcome.attempt}`, payload: { [EFFECT_OUTCOME]: outcome } };
}

/** Applies an effect's outcome once: a result of a run the actor no longer waits for is only marked processed. */
async function applyEffectOutcome(act: Activation, envelope: Envelope, command: PendingCommand, outcome: EffectOutcome): Promise<Envelope> {
  const running = envelope.effects[outcome.id];
  const processed = command.unstored ? [] : [command.id];
  const settles = command.unstored ? { id: outcome.id, attempt: outcome.attempt } : undefined;
  if (!running || running.attempt !== outcome.attempt) {
    if (processed.length) await act.commands.markProcessed(processed);
    if (settles) act.effects.settle(act.key, settles.id, settles.attempt);
    return envelope;
  }
  const handler = act.behavior.onEffectResult;
  const result = handler ? await decideSafely(act, 'onEffectResult', () => handler.call(act.behavior, envelope.state, outcome, context(act))) : { decision: {} };
  if ('error' in result && isRetryable(result.error)) {
    // Not applied: a durable outcome stays pending; one held in memory is dropped and the next activation finds its effect interrupted.
    if (settles) act.effects.settle(act.key, settles.id, settles.attempt);
    return envelope;
  }
  return turn(act, envelope, 'decision' in result ? result.decision : {}, { cid: command.id, persist: true, processed, ended: [outcome.id], ...(settles ? { settles } : {}) });
}

/** Applies the outcomes this node handed over in memory that no committed turn has applied yet (before any effect is taken for lost). */
async function applyHeldOutcomes(act: Activation, envelope: Envelope): Promise<Envelope> {
  let current = envelope;
  for (const outcome of act.effects.heldOutcomes(act.key)) {
    const { id, payload } = effectOutcomeCommand(act.key, outcome);
    current = await applyEffectOutcome(act, current, { id, kind: act.behavior.kind, actorId: act.id, payload, unstored: true }, outcome);
  }
  return current;
}

/**
 * Applies one stored command. @returns stop=true when it must be retried later
 * (a retryable failure): the commands after it wait, to keep send order.
 */
async function applyStored(act: Activation, envelope: Envelope, command: PendingCommand): Promise<{ envelope: Envelope; stop: boolean }> {
  if (recordedReply(act, envelope, command.id)) {
    // Applied before but delivered again: only its processed mark was missing.
    if (!command.unstored) await act.commands.markProcessed([command.id]);
    return { envelope, stop: false };
  }
  const outcome = effectOutcomeOf(command);
  if (outcome) return { envelope: await applyEffectOutcome(act, envelope, command, outcome), stop: false };
  const result = await decideSafely(act, 'decide', () => act.behavior.decide(envelope.state, command.payload, context(act)));
  if ('error' in result) {
    if (isRetryable(result.error)) return { envelope, stop: true };
    act.logger.warn({ key: act.key, cid: command.id }, 'durable command refused by its actor; consumed');
  }
  const decision = 'decision' in result ? result.decision : {};
  return { envelope: await turn(act, envelope, decision, { cid: command.id, persist: true, processed: [command.id] }), stop: false };
}

async function applyPending(act: Activation, envelope: Envelope): Promise<Envelope> {
  return applyCommands(act, envelope, await act.commands.listPending(act.behavior.kind, act.id, act.fence.shard));
}

/** Applies stored commands in order; stops at one that must be retried later (send order holds). */
async function applyCommands(act: Activation, envelope: Envelope, commands: readonly PendingCommand[]): Promise<Envelope> {
  let current = envelope;
  for (const command of commands) {
    const applied = await applyStored(act, current, command);
    current = applied.envelope;
    if (applied.stop) break;
  }
  return current;
}

async function handleReminder(act: Activation, envelope: Envelope, reminder: FiredReminder & { attempts: number }): Promise<Envelope> {
  // Cancelled or moved by a turn queued before this delivery: the delivery is stale.
  if (envelope.reminders[reminder.name] !== reminder.dueAt.getTime()) return envelope;
  const cid = `reminder:${reminder.name}:${reminder.dueAt.getTime()}`;
  if (recordedReply(act, envelope, cid)) return envelope;
  const handler = act.behavior.onReminder;
  const fired: FiredReminder = { name: reminder.name, dueAt: reminder.dueAt, payload: reminder.payload };
  const result = handler ? await decideSafely(act, 'onReminder', () => handler.call(act.behavior, envelope.state, fired, context(act))) : { decision: {} };
  if ('error' in result) {
    const retryAfterMs = Math.min(MAX_REMINDER_RETRY_MS, act.reminderPollMs * 2 ** (reminder.attempts + 1));
    await act.reminders.recordFailure({ kind: act.behavior.kind, actorId: act.id, name: reminder.name, dueAt: reminder.dueAt }, retryAfterMs);
    return envelope;
  }
  return turn(act, envelope, result.decision, { cid, persist: true, processed: [], fired });
}

/** Hands each effect whose run was lost back to the behaviour (default: run it again with the same id). */
async function resumeInterrupted(act: Activation, envelope: Envelope): Promise<Envelope> {
  let current = envelope;
  for (const effect of Object.values(envelope.effects)) {
    if (act.effects.isRunning(act.key, effect.id) || current.effects[effect.id]?.attempt !== effect.attempt) continue;
    const handler = act.behavior.onEffectInterrupted;
    const restart: Decision = { effects: { start: [{ id: effect.id, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs }] } };
    const result = handler ? await decideSafely(act, 'onEffectInterrupted', () => handler.call(act.behavior, current.state, effect, context(act))) : { decision: restart };
    if ('error' in result && isRetryable(result.error)) continue;
    const decision = 'decision' in result ? result.decision : {};
    current = await turn(act, current, decision, { cid: `interrupted:${effect.id}:${effect.attempt}`, persist: true, processed: [], ended: [effect.id] });
  }
  return current;
}

/** Recovery: snapshot and journal tail, then the stored commands and the outcomes held in memory, then the effects whose runs were lost. */
async function activate(act: Activation): Promise<Envelope> {
  const { snapshot: snapshotEntry, entries, pending } = await act.journal.readActivation(act.key, act.behavior.kind, act.id, act.fence.shard);
  let envelope = snapshotEntry ? normalize(act.behavior, snapshotEntry.payload) : initialEnvelope(act.behavior, act.id);
  // The tail's events folded in one call where the behaviour offers it; each entry's bookkeeping then takes that state.
  const replayed = entries.length ? act.behavior.evolveAll?.(envelope.state, entries.flatMap((entry) => (entry.payload as EntryPayload).events)) : undefined;
  for (const entry of entries) envelope = fold(act.behavior, envelope, entry.payload as EntryPayload, entry.sequenceNr, replayed);
  envelope = await applyCommands(act, envelope, pending);
  envelope = await applyHeldOutcomes(act, envelope);
  return resumeInterrupted(act, envelope);
}

async function handleBarrier(act: Activation, envelope: Envelope, done: (error?: unknown) => void): Promise<Envelope> {
  try {
    const next = await snapshot(act, envelope);
    done();
    return next;
  } catch (error) {
    done(error);
    return envelope;
  }
}

async function handle(act: Activation, envelope: Envelope, message: EntityMessage): Promise<Envelope> {
  switch (message.type) {
    case 'command':
      return handleCommand(act, envelope, message);
    case 'stored':
      try {
        return message.command ? (await applyStored(act, envelope, message.command)).envelope : await applyPending(act, envelope);
      } finally {
        message.done?.();
      }
    case 'reminder':
      try {
        return await handleReminder(act, envelope, message.reminder);
      } finally {
        message.done();
      }
    case 'wake':
      message.done();
      return envelope;
    case 'barrier':
      return handleBarrier(act, envelope, message.done);
  }
}

/**
 * Answers a message that no turn will handle (its actor or router stopped):
 * an ask gets a retryable "moved" reply, so its caller retries at once and
 * reaches the next activation; pollers and drains are told it is done.
 */
export function abandonMessage(message: EntityMessage, shard: number): void {
  switch (message.type) {
    case 'command':
      message.reply?.({ ok: false, error: new ShardMovedError(shard) });
      return;
    case 'barrier':
      message.done(new Error('actor stopped before its handoff snapshot'));
      return;
    case 'stored':
      message.done?.();
      return;
    default:
      message.done();
  }
}

/** Handles the message alone, or with the groupable messages queued behind it (handleGroup). */
async function handleQueued(act: Activation, envelope: Envelope, message: EntityMessage, self: ActorRef<EntityMessage>): Promise<Envelope> {
  const queued = groupable(message) ? takeQueued(self, groupable, MAX_GROUP - 1) : [];
  if (queued.length === 0) return handle(act, envelope, message);
  runtimeMetrics.mailboxDepth.dec(queued.length);
  return handleGroup(act, envelope, [message, ...queued]);
}

/**
 * The nact function of an entity. Its state is null until the first message
 * recovers it; a failure then (the database is down) answers the message and
 * stops the actor, and the next message activates it again.
 */
export function entityFunction(deps: EntityDeps): ActorFunction<Envelope | null, EntityMessage> {
  const act: Activation = { ...deps, behavior: deps.kind.behavior, applied: new AppliedCommands(deps.retryWindowMs), passivateRequested: false };
  return async (state, message, ctx) => {
    runtimeMetrics.mailboxDepth.dec();
    let envelope = state;
    const activating = envelope === null;
    try {
      // A new actor (its caller just made its id up) has nothing to recover.
      envelope ??= message.type === 'command' && message.newActor ? initialEnvelope(act.behavior, act.id) : await activate(act);
    } catch (error) {
      abandonMessage(message, deps.fence.shard);
      throw error;
    }
    // A notification of stored commands that activated the actor (or a stored effect outcome handed over with it): the activation just applied them.
    const next = activating && message.type === 'stored' && !message.command?.unstored ? (message.done?.(), envelope) : await handleQueued(act, envelope, message, ctx.self);
    if (act.passivateRequested) {
      act.passivateRequested = false;
      // Messages still queued are answered by onUnhandled (asks retry and reach the next activation).
      if (Object.keys(next.effects).length === 0) stopActor(ctx.self);
    }
    return next;
  };
}
