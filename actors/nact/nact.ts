// Our typed facade over nact 7.6.2 (pinned): mailboxes, one message at a
// time, idle stop (passivation), supervision. Nothing outside actors/
// imports nact, and inside actors/ only this file does.
import * as nact from 'nact';

/** An opaque reference to an actor accepting `Msg`. */
export type ActorRef<Msg> = nact.Ref<Msg>;
/** The root of an actor system. */
export type SystemRef = nact.ActorSystemRef;

/** The context of a plain actor's turn. */
export interface PlainContext<Msg> {
  self: ActorRef<Msg>;
  name: string;
  /** Live children by name, as of the start of this turn. */
  children: Map<string, ActorRef<unknown>>;
}

export type ActorFunction<State, Msg> = (state: State, message: Msg, ctx: PlainContext<Msg>) => State | Promise<State>;

/** Options common to our actors. */
export interface SpawnOptions<State, Msg = unknown> {
  initialState: State;
  /** Idle time after which nact stops the actor (passivation); undefined: never. */
  shutdownAfterMs?: number;
  /** Asked when the idle time is up: true keeps the actor for another idle period (work of its own still runs outside its turns). */
  keepAlive?: (state: State) => boolean;
  /** Runs after the actor stopped (passivation, crash or explicit stop). */
  afterStop?: (state: State) => void;
  /** Called with the error when a turn (or recovery) throws; the actor is then stopped. */
  onCrash?: (error: unknown) => void;
  /** Called after the actor stopped with the messages still in its mailbox, which nact drops: answer them. */
  onUnhandled?: (messages: Msg[]) => void;
}

/**
 * Starts an actor system. Persistence is ours (entity.actor.ts recovers and
 * writes through the TurnWriter), so nact's persistence plugin is not used.
 */
export function startSystem(): SystemRef {
  return nact.start();
}

function crashHandler<State, Msg>(options: SpawnOptions<State, Msg>) {
  return (_message: unknown, error: unknown, ctx: { stop: symbol }) => {
    options.onCrash?.(error);
    return ctx.stop;
  };
}

function nactProps<State, Msg>(options: SpawnOptions<State, Msg>): Record<string, unknown> {
  return {
    initialState: options.initialState,
    shutdownAfter: options.shutdownAfterMs,
    // nact passes the mailbox as it was when stop() ran (lib/actor.js createContextWithMailbox).
    afterStop: (state: State, ctx?: { mailbox?: Array<{ message: Msg }> }) => {
      options.afterStop?.(state);
      const left = (ctx?.mailbox ?? []).map((entry) => entry.message);
      if (left.length) options.onUnhandled?.(left);
    },
    onCrash: crashHandler(options),
  };
}

/** Spawns a plain (in-memory) actor. */
export function spawnActor<State, Msg>(parent: ActorRef<unknown> | SystemRef, f: ActorFunction<State, Msg>, name: string, options: SpawnOptions<State, Msg>): ActorRef<Msg> {
  const spawnUntyped = nact.spawn as unknown as (...args: unknown[]) => ActorRef<Msg>;
  const ref = spawnUntyped(parent, f, name, nactProps(options));
  if (options.shutdownAfterMs && options.keepAlive) keepIdleActorWhile(ref, options.keepAlive);
  return ref;
}

/** The idle-stop parts of nact's concrete actor (lib/actor.js of the pinned 7.6.2). */
interface IdleStoppingActor<State> {
  state: State;
  shutdownPeriod: number;
  timeout: NodeJS.Timeout | undefined;
  setTimeout(): void;
  clearTimeout(): void;
  stop(): void;
}

/**
 * nact stops an actor once it was idle for `shutdownAfter`, whatever else it
 * waits for. Its idle timer (armed by `setTimeout`, cleared by each dispatch)
 * is replaced by one that asks `keepAlive` first and re-arms while it says so.
 */
function keepIdleActorWhile<State>(ref: ActorRef<unknown>, keepAlive: (state: State) => boolean): void {
  const actor = concreteOf(ref) as unknown as IdleStoppingActor<State> | undefined;
  if (!actor) return;
  actor.setTimeout = function (this: IdleStoppingActor<State>) {
    this.timeout = setTimeout(() => (keepAlive(this.state) ? this.setTimeout() : this.stop()), this.shutdownPeriod);
  };
  // The timer the constructor armed is nact's own: replaced by one of the above.
  actor.clearTimeout();
  actor.setTimeout();
}

/** Enqueues a message; silently dropped by nact when the actor has stopped. */
export function dispatch<Msg>(ref: ActorRef<Msg>, message: Msg): void {
  nact.dispatch(ref, message);
}

/** The parts of nact's concrete actors (and system) that stopping a tree and taking queued messages need. */
interface ConcreteActor {
  children: Map<string, ConcreteActor>;
  stop(): void;
  /** A denque of the messages not handled yet (lib/actor.js). */
  mailbox?: { length: number; peekFront(): { message: unknown } | undefined; shift(): { message: unknown } | undefined };
}

// nact's registry of systems, which finds the concrete actor (or system) of a reference (lib/system-map.js of the pinned 7.6.2).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const systems = require('nact/lib/system-map') as { find(systemName: string, reference: unknown): ConcreteActor | undefined };

/** The concrete actor (or system) of a reference; undefined once it stopped. */
function concreteOf(ref: unknown): ConcreteActor | undefined {
  return systems.find((ref as { system: { name: string } }).system.name, ref);
}

/** Stops the actor's children (theirs first), then the actor. */
function stopTree(actor: ConcreteActor): void {
  for (const child of [...actor.children.values()]) stopTree(child);
  actor.stop();
}

/**
 * Stops an actor (or a whole system) and every actor under it. nact 7.6.2
 * stops the children of a stopping actor by looking each one up with a
 * reference-only lookup that never finds a concrete actor: the children lived
 * on, with their state and their idle timers (an entity of a handed-off shard
 * until it passivated; every actor after the system stopped). So the tree is
 * stopped here, leaves first.
 */
export function stopActor(ref: ActorRef<unknown> | SystemRef): void {
  // Not found: already stopped (nact.stop would find nothing either).
  const concrete = concreteOf(ref);
  if (concrete) stopTree(concrete);
}

/**
 * Takes messages out of the front of an actor's mailbox, in order, while
 * `accept` takes them and fewer than `max` are taken; the first refused
 * message stays, and so does everything behind it. For an actor handling
 * several queued messages in one turn (entity.actor.ts). Called from the
 * actor's own turn: nothing else takes from its mailbox meanwhile.
 */
export function takeQueued<Msg>(ref: ActorRef<Msg>, accept: (message: Msg) => boolean, max: number): Msg[] {
  const mailbox = concreteOf(ref)?.mailbox;
  const taken: Msg[] = [];
  while (mailbox && taken.length < max && mailbox.length > 0 && accept(mailbox.peekFront()!.message as Msg)) taken.push(mailbox.shift()!.message as Msg);
  return taken;
}
