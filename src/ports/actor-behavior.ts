// What an actor kind is, seen from the domain. A behaviour is the decision
// side: a reducer that decides on an input (events to persist, a reply,
// events to publish, reminders, effects to start or abort, durable commands
// to other actors, read-model changes) and a pure fold of one persisted
// event. Effects are the side-effect side: named async functions the runtime
// runs outside the actor's turn, whose results come back as inputs. The
// runtime in actors/ persists, replays, publishes, schedules and runs
// effects; the behaviour never touches a database, a bus or the network.

import type { StreamDeclaration } from './event-publisher';

export type { StreamDeclaration } from './event-publisher';

/** An event to publish through the outbox after the decision is persisted. */
export interface OutgoingEvent {
  /** Event type, e.g. `objective.step.completed`. */
  type: string;
  data: unknown;
  /** The message id (JetStream de-duplication). @default a new `evt_…` id */
  id?: string;
  /** The subject; it must fall in a stream the kind declares. @default `<prefix>.events.<kind>.<actorId>` */
  subject?: string;
  /** The JSON payload as published. @default `{id, type, kind, actorId, sequence, data, occurredAt}` */
  payload?: unknown;
  /**
   * The kind's read model stores this payload in the same turn (its
   * projection and its projector write it under the event's id) and gives it
   * back by id (ActorKind.projectedPayloads): the outbox row then keeps no
   * copy. The relay publishes the payload it was handed in memory, or, for a
   * row it reads back (a previous owner's after a crash), the one the read
   * model holds at that time. Ignored for a kind without projectedPayloads.
   */
  payloadProjected?: boolean;
}

/** A durable reminder to set: the runtime calls `onReminder` at `dueAt` (or soon after), at least once. */
export interface ReminderRequest {
  /** Unique per actor; setting an existing name moves it. */
  name: string;
  dueAt: Date;
  payload?: unknown;
}

/** An effect to start after the turn commits. */
export interface EffectRequest {
  /**
   * The effect id: the idempotency key the outside world sees (a tool call id,
   * a webhook id). Unique per actor among its running effects. @default a new id
   */
  id?: string;
  /** The name of an effect handler of the kind. */
  name: string;
  /** JSON input handed to the handler. */
  input: unknown;
  /**
   * More input for this run that the journal does not keep (EffectContext.transientInput):
   * large values the actor's state holds anyway (a webhook's body), which
   * would otherwise be written again with every attempt started. A run
   * started again after a takeover has none: a behaviour that uses it
   * implements onEffectInterrupted and gives it again from its state.
   */
  transientInput?: unknown;
  /** Deadline from the start of each run; past it the signal aborts and the result is DEADLINE_EXCEEDED. */
  timeoutMs: number;
  /**
   * false: the outcome goes straight to the actor's mailbox instead of being
   * stored first as a durable command (one insert and one update fewer per
   * run). A node that dies between the run and the turn applying it loses the
   * outcome, and the effect is handed back as interrupted (by default run
   * again with the same id): right for effects the outside world
   * de-duplicates by that id (a webhook POST). @default true
   */
  durableResult?: boolean;
}

/** A durable command to another actor, written in the sender's turn. */
export interface ActorSend {
  kind: string;
  id: string;
  command: unknown;
  /**
   * The receiver's first command ever: the sender made its id up and nothing
   * else is sent to it before this (a scheduled objective's start). Nothing
   * can wait ahead of it in the receiver's stored commands, so a receiver of
   * this node applies it as handed over, without reading them first.
   */
  first?: boolean;
}

/** What a behaviour decides for one input. All of it is written in one fenced transaction. */
export interface ActorDecision<Event, Reply, Change = unknown, State = never> {
  /** Events to persist in the journal, in order; `evolve` applies them now and on every replay. */
  events?: Event[];
  /**
   * The state after `events`, when the behaviour already applied them itself
   * while deciding (with what `evolve` does, to the decided-on state): the
   * runtime then takes it instead of applying them a second time. Replay
   * always goes through `evolve`, so the two must agree.
   */
  evolvedState?: State;
  /** The answer to an `ask`. */
  reply?: Reply;
  /** Events for the outbox, published after commit, in this order, after the actor's earlier events. */
  publish?: OutgoingEvent[];
  /** Reminders to set or cancel (by name). */
  reminders?: { set?: ReminderRequest[]; cancel?: string[] };
  /** Effects to start after commit, and running effects to abort (by id). */
  effects?: { start?: EffectRequest[]; abort?: string[] };
  /** Durable commands to other actors: delivered at least once, applied once, in send order per receiver. */
  send?: ActorSend[];
  /** Read-model changes, written by the kind's projector in the same transaction. */
  project?: Change[];
  /**
   * Stop the actor once this turn has committed, when no effect of it runs:
   * it waits for something that may take days (an approval) or for nothing
   * (it finished), and should hold no memory meanwhile. The next message
   * activates it again from its snapshot and journal.
   */
  passivate?: boolean;
  /**
   * Write a snapshot right after this turn, so the journal entries before it
   * can be purged by retention (an erasure must not leave the erased content
   * in the journal for longer than the retention window).
   */
  snapshot?: boolean;
  /**
   * Facts for the node's metrics (an objective finished, a tool call's
   * outcome, a webhook delivered), as plain data so the decision stays pure:
   * handed to the kind's `observe` once this turn has committed; never on
   * replay, nor for a turn whose write failed.
   */
  observations?: unknown[];
}

/** Facts about the running actor given to the behaviour. */
export interface ActorContext {
  kind: string;
  id: string;
  now: Date;
}

/** A fired reminder. */
export interface FiredReminder {
  name: string;
  dueAt: Date;
  payload: unknown;
}

/** An effect as the runtime records it while it runs. */
export interface RunningEffect {
  id: string;
  name: string;
  input: unknown;
  timeoutMs: number;
  /** 1 for the first run; a run again after a crash or takeover counts up. */
  attempt: number;
  /** Present (false) when the outcome is not stored as a durable command (EffectRequest.durableResult). */
  durableResult?: false;
  /** EffectRequest.transientInput, in memory only: never in the journal, nor in the outcome. */
  transientInput?: unknown;
}

/** The error of a failed effect, as it crosses a restart: a Status-like value. */
export interface EffectError {
  /** A status code name: DEADLINE_EXCEEDED for a deadline, CANCELLED for an abort, else the handler's. */
  code: string;
  message: string;
  details?: unknown[];
}

/** The outcome of one effect run, handed to `onEffectResult` once. */
export type EffectOutcome = RunningEffect & ({ ok: true; value: unknown } | { ok: false; error: EffectError });

/**
 * One actor kind's decisions. `decide`, `onReminder`, `onEffectResult` and
 * `onEffectInterrupted` see each input once per successful turn, one at a time;
 * `evolve` must be a pure fold (it runs on replay). Events must be JSON values;
 * so must the state, or it serializes to JSON (toJSON, as a persistent map
 * does) and `fromSnapshot` makes it whole again.
 */
export interface ActorBehavior<State, Command, Event, Reply, Change = unknown> {
  readonly kind: string;
  initialState(id: string): State;
  decide(state: State, command: Command, context: ActorContext): ActorDecision<Event, Reply, Change, State> | Promise<ActorDecision<Event, Reply, Change, State>>;
  evolve(state: State, event: Event): State;
  /**
   * Folds several events at once, as `evolve` one after another would: an
   * activation replays its journal tail through it. For a behaviour whose
   * `evolve` copies its state for every event (to leave the one it got
   * untouched), which then copies once for the whole tail.
   */
  evolveAll?(state: State, events: readonly Event[]): State;
  /**
   * The state a snapshot stored (its JSON, parsed) made the behaviour's own
   * again, before the journal tail is folded onto it: for a state that holds
   * values serialized through toJSON. @default the stored JSON as it is
   */
  fromSnapshot?(stored: unknown): State;
  onReminder?(state: State, reminder: FiredReminder, context: ActorContext): ActorDecision<Event, Reply, Change, State> | Promise<ActorDecision<Event, Reply, Change, State>>;
  /** The result of an effect this actor started (an aborted one never reports). */
  onEffectResult?(state: State, outcome: EffectOutcome, context: ActorContext): ActorDecision<Event, Reply, Change, State> | Promise<ActorDecision<Event, Reply, Change, State>>;
  /**
   * An effect recorded as started whose run was lost (crash, takeover, stop):
   * decide to run it again (start an effect with the same id) or record a
   * failure. @default run it again with the same id, input and deadline
   */
  onEffectInterrupted?(state: State, effect: RunningEffect, context: ActorContext): ActorDecision<Event, Reply, Change, State> | Promise<ActorDecision<Event, Reply, Change, State>>;
  /**
   * The W3C traceparent the actor's turns continue, from its state before a
   * turn and the events the turn decided (the turn that creates the actor
   * carries it in its events): the trace the actor belongs to, which it
   * journaled as an input (an objective's start keeps the one it was
   * created in). undefined: a turn continues the trace of the command that
   * caused it, if any. Read only while tracing is on; never a decision.
   */
  traceparentOf?(state: State, events: readonly Event[]): string | undefined;
}

/** What an effect handler gets besides its input. */
export interface EffectContext {
  /** Aborted on the deadline, when the actor aborts the effect, and when the node stops or loses the shard. */
  signal: AbortSignal;
  /** The run's deadline. */
  deadline: Date;
  /** The effect id: send it as the idempotency key. */
  effectId: string;
  /** EffectRequest.transientInput of the run's start (absent for a run started again without it). */
  transientInput?: unknown;
  attempt: number;
  actorId: string;
}

/** A side effect: async, given a signal and a deadline; its value must be JSON. A thrown ApiError keeps its code. */
export type EffectHandler = (input: never, context: EffectContext) => Promise<unknown>;

/** Runs SQL in the turn's transaction. */
export interface SqlRunner {
  query<Row = unknown>(sql: string, parameters?: unknown[]): Promise<Row[]>;
}

/** Writes a kind's read-model changes inside the fenced transaction of a batch of turns (each change names its actor). */
export type Projector<Change = unknown> = (sql: SqlRunner, changes: Array<{ actorId: string; change: Change }>) => Promise<void>;

/**
 * A kind's read-model changes as data-modifying statements that join the
 * batch's single statement (fence, journal, outbox, reminders, commands and
 * every kind's projection in one round trip). Each statement is the body of a
 * CTE (`INSERT …`, `UPDATE …`): they run on one snapshot, must not depend on
 * each other's effects (a foreign key is checked at the end of the statement),
 * and number their parameters from $1 within `parameters`. They may read the
 * outbox rows the batch writes as `turn_outbox(id, payload)`, each with the
 * payload it was given (also when the table keeps none:
 * OutgoingEvent.payloadProjected), so a projection can store an event's
 * payload without it being sent twice.
 */
export interface ProjectionStatement {
  statements: string[];
  parameters: unknown[];
}

/**
 * Reads back, by event id, the payloads a kind's read model stores for its
 * outbox rows (OutgoingEvent.payloadProjected), on the runtime's connection:
 * one entry per id it still holds.
 */
export type ProjectedPayloadReader = (sql: SqlRunner, ids: string[]) => Promise<Array<{ id: string; payload: unknown }>>;

/**
 * Builds a kind's ProjectionStatement for a batch's changes; null when these
 * changes need the projector's own round trips (a rare change, an erasure).
 */
export type ProjectionBuilder<Change = unknown> = (changes: Array<{ actorId: string; change: Change }>) => ProjectionStatement | null;


/** A behaviour of any types, as registered with the runtime. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyActorBehavior = ActorBehavior<any, any, any, any, any>;

/** An actor kind as registered with the runtime: its decisions, its effects, its projector and its streams. */
export interface ActorKind {
  behavior: AnyActorBehavior;
  /** Effect handlers by name. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  effects?: Record<string, (input: any, context: EffectContext) => Promise<unknown>>;
  projector?: Projector;
  /**
   * The projector in statement form: with it, a batch of turns is written as
   * one statement instead of a transaction of several. Must write what
   * `projector` writes.
   */
  projection?: ProjectionBuilder;
  /** Streams its published events go to (besides the runtime's default stream). */
  streams?: StreamDeclaration[];
  /**
   * Where the relay finds the payloads of this kind's outbox rows that keep
   * none (OutgoingEvent.payloadProjected). Without it every row keeps its
   * payload.
   */
  projectedPayloads?: ProjectedPayloadReader;
  /** Counts the ActorDecision.observations of a committed turn into the node's metrics. */
  observe?: (observations: readonly unknown[]) => void;
}
