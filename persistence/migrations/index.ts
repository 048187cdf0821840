// Every migration class, in order. Add one line per migration file
// (`<epoch-ms>-<PascalName>.ts`); never edit a migration that has shipped.
import type { MigrationInterface } from 'typeorm';
import { ActorRuntime1763780400000 } from './1763780400000-ActorRuntime';
import { Foundation1763776800000 } from './1763776800000-Foundation';

export const migrations: Array<new () => MigrationInterface> = [
  Foundation1763776800000,
  ActorRuntime1763780400000,
];
