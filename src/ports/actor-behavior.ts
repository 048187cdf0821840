// What an actor kind is, seen from the domain: a reducer that decides on a
// command (events to persist, a reply, events to publish, reminders) and a fold
// that applies one persisted event. The runtime in actors/ persists, replays,
// publishes and schedules; the behaviour never touches a database or a bus.

/** An event to publish through the outbox after the decision is persisted. */
export interface OutgoingEvent {
  /** Event type, e.g. `objective.step.completed`. */
  type: string;
  data: unknown;
}

/** A durable reminder to set: the runtime calls `onReminder` at `dueAt` (or soon after), at least once. */
export interface ReminderRequest {
  /** Unique per actor; setting an existing name moves it. */
  name: string;
  dueAt: Date;
  payload?: unknown;
}

/** What a behaviour decides for one input. All of it is written in one transaction. */
export interface ActorDecision<Event, Reply> {
  /** Events to persist in the journal, in order; `evolve` applies them now and on every replay. */
  events?: Event[];
  /** The answer to an `ask`. */
  reply?: Reply;
  /** Events for the outbox, published after commit to the event stream. */
  publish?: OutgoingEvent[];
  /** Reminders to set or cancel (by name). */
  reminders?: { set?: ReminderRequest[]; cancel?: string[] };
  /**
   * A side effect run after the transaction commits, never while recovering.
   * A failure is logged and counted; use a reminder to retry.
   */
  afterCommit?: () => Promise<void>;
}

/** Facts about the running actor given to `decide`. */
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

/**
 * One actor kind. `decide` and `onReminder` see each input once per successful
 * turn, one at a time; `evolve` must be a pure fold (it runs on replay).
 * State and events must be JSON values.
 */
export interface ActorBehavior<State, Command, Event, Reply> {
  readonly kind: string;
  initialState(id: string): State;
  decide(state: State, command: Command, context: ActorContext): ActorDecision<Event, Reply> | Promise<ActorDecision<Event, Reply>>;
  evolve(state: State, event: Event): State;
  onReminder?(state: State, reminder: FiredReminder, context: ActorContext): ActorDecision<Event, Reply> | Promise<ActorDecision<Event, Reply>>;
}

/** A behaviour of any types, as registered with the runtime. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyActorBehavior = ActorBehavior<any, any, any, any>;
