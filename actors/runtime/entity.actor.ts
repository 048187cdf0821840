// One sharded, event-sourced actor: runs a behaviour's decide/evolve inside a
// nact persistent actor. A turn persists first (journal, outbox, reminders and
// processed commands in one fenced transaction), then replies, then runs the
// side effect. Replay (ctx.recovering) only folds events: no effect runs twice.
import { ApiError, toApiError } from '../../src/errors';
import { newId } from '../../src/ids';
import type { ActorDecision, AnyActorBehavior, FiredReminder } from '../../src/ports/actor-behavior';
import { isRetryable, ShardFencedError, ShardMovedError } from '../../src/sharding/sharding.errors';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import type { ActorJournalRepository, Fence } from '../../persistence/runtime/actor-journal.repository';
import { runtimeMetrics } from '../metrics';
import type { PersistentActorFunction, PersistentContext } from '../nact/nact';
import type { PersistExtra } from './journal-engine';

/** The outcome of a command, as handed back to the asker. */
export type EntityReply = { ok: true; value: unknown } | { ok: false; error: ApiError };

/** Messages an entity accepts. */
export type EntityMessage =
  | { type: 'command'; cid: string; command: unknown; durable: boolean; reply?: (reply: EntityReply) => void }
  | { type: 'reminder'; reminder: FiredReminder; done: () => void }
  | { type: 'pending'; done: () => void }
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
}

/** One journal entry: the events of one turn with the command id and reply. */
export interface EntryPayload {
  cid: string | null;
  events: unknown[];
  reply: unknown;
}

const RECENT_REPLIES = 64;

/** Everything an entity needs, fixed for one activation. */
export interface EntityDeps {
  behavior: AnyActorBehavior;
  id: string;
  key: string;
  fence: Fence;
  journal: ActorJournalRepository;
  commands: ActorCommandRepository;
  snapshotEvery: number;
  /** How long this activation remembers the replies of the commands it applied (a caller's whole retry budget). */
  retryWindowMs: number;
  eventSubject: string;
  onPublished: () => void;
  onError: (message: string, error: unknown) => void;
}

type Ctx = PersistentContext<EntityMessage, PersistExtra>;

/**
 * Replies of the commands this activation applied within the retry window. The
 * envelope's `recent` keeps only 64: under load a caller's retry (sent after
 * its attempt timed out, queued behind many turns) can arrive later than that.
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
  applied: AppliedCommands;
}

/** The envelope of a new actor. */
export function initialEnvelope(behavior: AnyActorBehavior, id: string): Envelope {
  return { state: behavior.initialState(id), seq: 0, snapshotSeq: 0, recent: [] };
}

function fold(deps: EntityDeps, envelope: Envelope, entry: EntryPayload): Envelope {
  const state = entry.events.reduce((current: unknown, event) => deps.behavior.evolve(current, event), envelope.state);
  const recent = entry.cid ? [...envelope.recent, [entry.cid, entry.reply] as [string, unknown]].slice(-RECENT_REPLIES) : envelope.recent;
  return { ...envelope, state, seq: envelope.seq + 1, recent };
}

function context(deps: EntityDeps) {
  return { kind: deps.behavior.kind, id: deps.id, now: new Date() };
}

function outboxRows(deps: EntityDeps, decision: ActorDecision<unknown, unknown>) {
  return (decision.publish ?? []).map((event) => {
    const id = newId('event');
    const payload = { id, type: event.type, kind: deps.behavior.kind, actorId: deps.id, data: event.data, occurredAt: new Date().toISOString() };
    return { id, subject: deps.eventSubject, payload };
  });
}

function persistExtra(deps: EntityDeps, decision: ActorDecision<unknown, unknown>, processed: string[], fired?: FiredReminder): PersistExtra {
  return {
    fence: deps.fence,
    append: {
      kind: deps.behavior.kind,
      actorId: deps.id,
      outbox: outboxRows(deps, decision),
      remindersSet: (decision.reminders?.set ?? []).map((reminder) => ({ name: reminder.name, dueAt: reminder.dueAt, payload: reminder.payload ?? null })),
      remindersCancelled: decision.reminders?.cancel ?? [],
      reminderFired: fired ? { name: fired.name, dueAt: fired.dueAt } : undefined,
      processedCommandIds: processed,
    },
  };
}

/** Persists one turn, or rethrows (after counting fenced writes) so that nact stops the actor. */
async function persistTurn(deps: EntityDeps, ctx: Ctx, entry: EntryPayload, extra: PersistExtra): Promise<void> {
  try {
    await ctx.persist(entry, [], extra);
  } catch (error) {
    if (error instanceof ShardFencedError) runtimeMetrics.fencedWrites.inc();
    throw error;
  }
}

async function snapshot(deps: EntityDeps, envelope: Envelope): Promise<Envelope> {
  if (envelope.seq === envelope.snapshotSeq) return envelope;
  const next = { ...envelope, snapshotSeq: envelope.seq };
  await deps.journal.saveSnapshotFenced({ key: deps.key, sequenceNr: next.seq, payload: next }, deps.fence);
  return next;
}

/** The periodic snapshot is an optimisation: a failure is logged and retried after the next entry. */
async function periodicSnapshot(deps: EntityDeps, envelope: Envelope): Promise<Envelope> {
  if (envelope.seq - envelope.snapshotSeq < deps.snapshotEvery) return envelope;
  try {
    return await snapshot(deps, envelope);
  } catch (error) {
    deps.onError(`snapshot of ${deps.key} failed`, error);
    return envelope;
  }
}

async function runEffect(deps: EntityDeps, decision: ActorDecision<unknown, unknown>): Promise<void> {
  if (!decision.afterCommit) return;
  try {
    await decision.afterCommit();
  } catch (error) {
    runtimeMetrics.effectFailures.inc({ kind: deps.behavior.kind });
    deps.onError(`afterCommit of ${deps.key} failed`, error);
  }
}

/** Applies a decision: persist when needed, fold, reply, snapshot, side effect. */
async function applyDecision(
  deps: Activation,
  envelope: Envelope,
  ctx: Ctx,
  decision: ActorDecision<unknown, unknown>,
  input: { cid: string; mustPersist: boolean; processed: string[]; fired?: FiredReminder; reply?: (reply: EntityReply) => void },
): Promise<Envelope> {
  const events = decision.events ?? [];
  const writes = events.length > 0 || (decision.publish?.length ?? 0) > 0 || decision.reminders !== undefined;
  if (!writes && !input.mustPersist) {
    input.reply?.({ ok: true, value: decision.reply });
    return envelope;
  }
  const entry: EntryPayload = { cid: input.cid, events, reply: decision.reply ?? null };
  try {
    await persistTurn(deps, ctx, entry, persistExtra(deps, decision, input.processed, input.fired));
  } catch (error) {
    input.reply?.({ ok: false, error: toApiError(error) });
    throw error;
  }
  const next = fold(deps, envelope, entry);
  deps.applied.add(input.cid, entry.reply);
  input.reply?.({ ok: true, value: decision.reply });
  if (decision.publish?.length) deps.onPublished();
  await runEffect(deps, decision);
  return periodicSnapshot(deps, next);
}

/**
 * A durable command whose decision failed is marked processed (an entry with no
 * events), unless the error says to retry: otherwise it would be re-delivered forever.
 */
async function consumeFailedCommand(deps: Activation, envelope: Envelope, ctx: Ctx, message: Extract<EntityMessage, { type: 'command' }>, error: unknown): Promise<Envelope> {
  if (!message.durable || isRetryable(error)) return envelope;
  deps.onError(`durable command ${message.cid} of ${deps.key} failed and is dropped`, error);
  return applyDecision(deps, envelope, ctx, {}, { cid: message.cid, mustPersist: true, processed: [message.cid] });
}

async function handleCommand(deps: Activation, envelope: Envelope, ctx: Ctx, message: Extract<EntityMessage, { type: 'command' }>): Promise<Envelope> {
  const previous = envelope.recent.find(([cid]) => cid === message.cid) ?? deps.applied.find(message.cid);
  if (previous) {
    message.reply?.({ ok: true, value: Array.isArray(previous) ? previous[1] : previous.reply });
    return envelope;
  }
  let decision: ActorDecision<unknown, unknown>;
  try {
    decision = await deps.behavior.decide(envelope.state, message.command, context(deps));
  } catch (error) {
    message.reply?.({ ok: false, error: toApiError(error) });
    return consumeFailedCommand(deps, envelope, ctx, message, error);
  }
  const processed = message.durable ? [message.cid] : [];
  return applyDecision(deps, envelope, ctx, decision, { cid: message.cid, mustPersist: message.durable, processed, reply: message.reply });
}

async function handleReminder(deps: Activation, envelope: Envelope, ctx: Ctx, reminder: FiredReminder): Promise<Envelope> {
  const cid = `reminder:${reminder.name}:${reminder.dueAt.getTime()}`;
  if (envelope.recent.some(([id]) => id === cid) || deps.applied.find(cid)) return envelope;
  const decide = deps.behavior.onReminder;
  let decision: ActorDecision<unknown, unknown> = {};
  try {
    if (decide) decision = await decide.call(deps.behavior, envelope.state, reminder, context(deps));
  } catch (error) {
    // The reminder stays in Postgres and fires again at the next poll.
    deps.onError(`reminder ${reminder.name} of ${deps.key} failed`, error);
    return envelope;
  }
  return applyDecision(deps, envelope, ctx, decision, { cid, mustPersist: true, processed: [], fired: reminder });
}

async function handlePending(deps: Activation, envelope: Envelope, ctx: Ctx): Promise<Envelope> {
  let current = envelope;
  for (const command of await deps.commands.listPending(deps.behavior.kind, deps.id, deps.fence.shard)) {
    current = await handleCommand(deps, current, ctx, { type: 'command', cid: command.id, command: command.payload, durable: true });
  }
  return current;
}

async function handleBarrier(deps: EntityDeps, envelope: Envelope, done: (error?: unknown) => void): Promise<Envelope> {
  try {
    const next = await snapshot(deps, envelope);
    done();
    return next;
  } catch (error) {
    done(error);
    return envelope;
  }
}

async function handle(deps: Activation, envelope: Envelope, message: EntityMessage, ctx: Ctx): Promise<Envelope> {
  runtimeMetrics.mailboxDepth.dec();
  switch (message.type) {
    case 'command':
      return handleCommand(deps, envelope, ctx, message);
    case 'reminder':
      try {
        return await handleReminder(deps, envelope, ctx, message.reminder);
      } finally {
        message.done();
      }
    case 'pending':
      try {
        return await handlePending(deps, envelope, ctx);
      } finally {
        message.done();
      }
    case 'barrier':
      return handleBarrier(deps, envelope, message.done);
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
    default:
      message.done();
  }
}

/**
 * The nact function of an entity. While recovering, the message is a journal
 * entry and is only folded; otherwise it is an EntityMessage.
 */
export function entityFunction(deps: EntityDeps): PersistentActorFunction<Envelope, EntityMessage, PersistExtra> {
  const activation: Activation = { ...deps, applied: new AppliedCommands(deps.retryWindowMs) };
  return (envelope, message, ctx) => {
    if (ctx.recovering) return fold(deps, envelope, message as unknown as EntryPayload);
    return handle(activation, envelope, message, ctx);
  };
}
