// Every migration class, in order. Add one line per migration file
// (`<epoch-ms>-<PascalName>.ts`); never edit a migration that has shipped.
import type { MigrationInterface } from 'typeorm';

export const migrations: Array<new () => MigrationInterface> = [];
