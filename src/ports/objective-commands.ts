// How the API reaches objective actors: one durable command to one objective,
// answered once its turn has committed (so the read model already shows its
// effect). The composition root implements it over the actor runtime; a
// process without a runtime (the CLI) gets one that answers UNAVAILABLE.
import type { ObjectiveCommand, ObjectiveReply } from '../objectives/objective.behavior';

export interface ObjectiveCommandOptions {
  /** Makes a retried command apply once (the runtime's command id). */
  commandId?: string;
  /** The objective's id was made up by this call and nothing was sent to it before (a create's start): its actor has nothing to recover. */
  newObjective?: boolean;
}

export interface ObjectiveCommandPort {
  send(objectiveId: string, command: ObjectiveCommand, options?: ObjectiveCommandOptions): Promise<ObjectiveReply>;
  /** Readies the objective's actor for a command due shortly (a scheduled start). Best effort; absent where nothing can be readied. */
  warm?(objectiveId: string): void;
}
