// Our typed facade over nact 7.6.2 (pinned; its d.ts lacks ctx.persist,
// ctx.recovering and the persistence engine base). Nothing outside actors/
// imports nact, and inside actors/ only this file does.
import * as nact from 'nact';

/** An opaque reference to an actor accepting `Msg`. */
export type ActorRef<Msg> = nact.Ref<Msg>;
/** The root of an actor system. */
export type SystemRef = nact.ActorSystemRef;

/** An event as nact hands it to and reads it from a persistence engine. */
export interface NactEvent {
  data: unknown;
  sequenceNumber: number;
  key: string;
  createdAt: number;
  isDeleted: boolean;
  tags: string[];
}

/** A snapshot as nact hands it to and reads it from a persistence engine. */
export interface NactSnapshot {
  data: unknown;
  sequenceNumber: number;
  key: string;
  createdAt: number;
}

/** The result of `events`: nact calls `.reduce` on it synchronously (lib/persistence/persistent-actor.js). */
export interface NactEventStream {
  reduce<U>(reducer: (previous: U, event: NactEvent, index: number) => U, initial: U): Promise<U>;
}

/**
 * The persistence engine contract of nact 7.6.2, typed. `persist` receives the
 * extra arguments given to `ctx.persist(event, tags, ...extra)`.
 */
export interface NactPersistenceEngine<Extra = unknown> {
  events(key: string, offset: number): NactEventStream;
  latestSnapshot(key: string): Promise<NactSnapshot | undefined>;
  takeSnapshot(snapshot: NactSnapshot): Promise<void>;
  persist(event: NactEvent, extra?: Extra): Promise<void>;
}

/** The context of a persistent actor's turn (nact passes more; these are what we use). */
export interface PersistentContext<Msg, Extra> {
  self: ActorRef<Msg>;
  name: string;
  /** True while nact replays journal events through the actor function. */
  recovering?: boolean;
  persist(event: unknown, tags: string[], extra: Extra): Promise<void>;
}

/** The context of a plain actor's turn. */
export interface PlainContext<Msg> {
  self: ActorRef<Msg>;
  name: string;
  /** Live children by name, as of the start of this turn. */
  children: Map<string, ActorRef<unknown>>;
}

export type PersistentActorFunction<State, Msg, Extra> = (state: State, message: Msg, ctx: PersistentContext<Msg, Extra>) => State | Promise<State>;
export type ActorFunction<State, Msg> = (state: State, message: Msg, ctx: PlainContext<Msg>) => State | Promise<State>;

/** Options common to our actors. */
export interface SpawnOptions<State, Msg = unknown> {
  initialState: State;
  /** Idle time after which nact stops the actor (passivation); undefined: never. */
  shutdownAfterMs?: number;
  /** Runs after the actor stopped (passivation, crash or explicit stop). */
  afterStop?: (state: State) => void;
  /** Called with the error when a turn (or recovery) throws; the actor is then stopped. */
  onCrash?: (error: unknown) => void;
  /** Called after the actor stopped with the messages still in its mailbox, which nact drops: answer them. */
  onUnhandled?: (messages: Msg[]) => void;
}

/** Starts an actor system with a persistence engine. */
export function startSystem(engine: NactPersistenceEngine): SystemRef {
  // nact's PersistenceEngine type lacks the extra-argument `persist` and the sync `events` stream.
  return nact.start(nact.configurePersistence(engine as unknown as nact.PersistenceEngine));
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

/** Spawns an event-sourced actor: recovery replays `key`'s snapshot and journal through `f` with `ctx.recovering`. */
export function spawnPersistent<State, Msg, Extra>(
  parent: ActorRef<unknown> | SystemRef,
  f: PersistentActorFunction<State, Msg, Extra>,
  key: string,
  name: string,
  options: SpawnOptions<State, Msg>,
): ActorRef<Msg> {
  // The d.ts types the context without persist/recovering; the runtime passes both.
  const spawnUntyped = nact.spawnPersistent as unknown as (...args: unknown[]) => ActorRef<Msg>;
  return spawnUntyped(parent, f, key, name, nactProps(options));
}

/** Spawns a plain (in-memory) actor. */
export function spawnActor<State, Msg>(parent: ActorRef<unknown> | SystemRef, f: ActorFunction<State, Msg>, name: string, options: SpawnOptions<State, Msg>): ActorRef<Msg> {
  const spawnUntyped = nact.spawn as unknown as (...args: unknown[]) => ActorRef<Msg>;
  return spawnUntyped(parent, f, name, nactProps(options));
}

/** Enqueues a message; silently dropped by nact when the actor has stopped. */
export function dispatch<Msg>(ref: ActorRef<Msg>, message: Msg): void {
  nact.dispatch(ref, message);
}

/** Stops an actor and its children. */
export function stopActor(ref: ActorRef<unknown> | SystemRef): void {
  nact.stop(ref);
}
