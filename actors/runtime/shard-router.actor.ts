// The per-shard router: a nact actor that owns the shard's entities as
// children. It spawns an entity on its first message (activation) and after
// passivation, and drains every child on handoff. Its turns are synchronous, so
// "is this child alive" never races with a child's idle stop.
import { toApiError } from '../../src/errors';
import type { ActorFunction, ActorRef, PlainContext } from '../nact/nact';
import { dispatch } from '../nact/nact';
import { runtimeMetrics } from '../metrics';
import { abandonMessage, type EntityMessage } from './entity.actor';

/** Messages the router accepts. */
export type RouterMessage =
  | { type: 'deliver'; kind: string; id: string; message: EntityMessage }
  | { type: 'drain'; done: (errors: unknown[]) => void };

/** Spawns the entity `(kind, id)` under the router and returns its ref. */
export type EntitySpawner = (router: ActorRef<RouterMessage>, kind: string, id: string, name: string) => ActorRef<EntityMessage>;

/** The child name of an entity: nact names allow no `:`, which ids may hold and kinds may not contain `!`. */
export function entityName(kind: string, id: string): string {
  return `${kind}.${id.replaceAll(':', '!')}`;
}

/** Enqueues a message for an entity, counting it in the mailbox depth until it is handled. */
export function sendToEntity(child: ActorRef<EntityMessage>, message: EntityMessage): void {
  runtimeMetrics.mailboxDepth.inc();
  dispatch(child, message);
}

function drain(children: Array<ActorRef<unknown>>, done: (errors: unknown[]) => void): void {
  const errors: unknown[] = [];
  let waiting = children.length;
  if (waiting === 0) return done(errors);
  for (const child of children) {
    sendToEntity(child as ActorRef<EntityMessage>, {
      type: 'barrier',
      done: (error) => {
        if (error) errors.push(error);
        if (--waiting === 0) done(errors);
      },
    });
  }
}

function route(spawn: EntitySpawner, message: Extract<RouterMessage, { type: 'deliver' }>, ctx: PlainContext<RouterMessage>): void {
  // The entity recovers on its first message, whatever it is.
  const name = entityName(message.kind, message.id);
  const existing = ctx.children.get(name) as ActorRef<EntityMessage> | undefined;
  sendToEntity(existing ?? spawn(ctx.self, message.kind, message.id, name), message.message);
}

/** Answers a message left in a stopped router's mailbox (see abandonMessage). */
export function abandonRouterMessage(message: RouterMessage, shard: number): void {
  if (message.type === 'drain') message.done([new Error(`router of shard ${shard} stopped before the drain`)]);
  else abandonMessage(message.message, shard);
}

/**
 * The router's function; `spawn` activates entities. A failed activation is
 * answered (to an ask) and reported, never allowed to crash the router, which
 * would silence the whole shard.
 */
export function routerFunction(spawn: EntitySpawner, onError: (error: unknown) => void): ActorFunction<null, RouterMessage> {
  return (state, message, ctx) => {
    if (message.type === 'drain') {
      drain([...ctx.children.values()], message.done);
      return state;
    }
    try {
      route(spawn, message, ctx);
    } catch (error) {
      onError(error);
      if (message.message.type === 'command') message.message.reply?.({ ok: false, error: toApiError(error) });
    }
    return state;
  };
}
