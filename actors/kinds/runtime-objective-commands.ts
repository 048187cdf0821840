// The ObjectiveCommandPort over the actor runtime: one ask per command, with
// the caller's command id so a retried command applies once. Bound after the
// runtime starts (the services it serves are built before the runtime).
import { UnavailableError } from '../../src/errors';
import type { ObjectiveCommandOptions, ObjectiveCommandPort } from '../../src/ports/objective-commands';
import { OBJECTIVE_KIND, type ObjectiveCommand, type ObjectiveReply } from '../../src/objectives/objective.behavior';
import type { ActorRuntime } from '../runtime/actor-runtime';

export class RuntimeObjectiveCommands implements ObjectiveCommandPort {
  private runtime: Pick<ActorRuntime, 'ask' | 'activate'> | null = null;

  bind(runtime: Pick<ActorRuntime, 'ask' | 'activate'>): void {
    this.runtime = runtime;
  }

  warm(objectiveId: string): void {
    this.runtime?.activate(OBJECTIVE_KIND, objectiveId);
  }

  send(objectiveId: string, command: ObjectiveCommand, options: ObjectiveCommandOptions = {}): Promise<ObjectiveReply> {
    if (!this.runtime) return Promise.reject(new UnavailableError('the actor runtime is starting; retry shortly'));
    return this.runtime.ask<ObjectiveReply>(OBJECTIVE_KIND, objectiveId, command, {
      ...(options.commandId ? { commandId: options.commandId } : {}),
      ...(options.newObjective ? { newActor: true } : {}),
    });
  }
}
