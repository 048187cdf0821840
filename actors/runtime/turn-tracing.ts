// The span of one actor turn (`<kind>.turn`, docs/operations.md "Tracing"):
// from the turn's write to its commit. Its parent is the trace the actor
// belongs to (ActorBehavior.traceparentOf: an objective's is the one it was
// created in), else the trace of the command that caused the turn (a
// traceparent carried by the wire request); a command sent from another
// trace is linked. A turn that belongs to no trace has no span. Its effects
// and the events it publishes continue from this span.
import type { AnyActorBehavior } from '../../src/ports/actor-behavior';
import { traceIdOf } from '../../src/tracing/trace-context';
import { openSpan, type OpenSpan } from '../../src/tracing/tracing';

/** What caused a turn, as the span's `agentrt.turn.cause` says. */
export type TurnCause = 'command' | 'stored_command' | 'effect_result' | 'effect_interrupted' | 'reminder';

export interface TracedTurn {
  behavior: AnyActorBehavior;
  actorId: string;
  nodeId: string;
  shard: number;
  /** The actor's state before the turn and the events the turn decided (a turn that creates the actor carries its trace in them). */
  state: unknown;
  events: readonly unknown[];
  /** The traceparent the command came with. */
  incoming: string | undefined;
  cause: TurnCause;
}

/** Opens the turn's span; undefined when the turn belongs to no trace. Call only while tracing is on. */
export function openTurnSpan(turn: TracedTurn): OpenSpan | undefined {
  const own = turn.behavior.traceparentOf?.(turn.state, turn.events);
  const parent = own ?? turn.incoming;
  if (!parent) return undefined;
  const linked = own !== undefined && turn.incoming !== undefined && traceIdOf(turn.incoming) !== traceIdOf(own);
  return openSpan(`${turn.behavior.kind}.turn`, {
    parent,
    ...(linked ? { links: [turn.incoming] } : {}),
    attributes: {
      'agentrt.actor.kind': turn.behavior.kind,
      'agentrt.actor.id': turn.actorId,
      'agentrt.node.id': turn.nodeId,
      'agentrt.shard': turn.shard,
      'agentrt.turn.cause': turn.cause,
    },
  });
}
