// The dependency health port: what the API reads and reports about the node's
// outside dependencies (Postgres, NATS) without knowing the runtime that
// tracks them (actors/runtime/dependency-health.ts implements it). The
// messages clients and operators see about a lost dependency are worded here
// only, so every answer, /readyz and the docs say the same thing.
import { UnavailableError } from '../errors';

export type Dependency = 'postgres' | 'nats';

/** How a dependency is named in messages to clients and operators. */
export const DEPENDENCY_NAMES: Record<Dependency, string> = {
  postgres: 'the database (PostgreSQL)',
  nats: 'the message bus (NATS)',
};

/** What a request that needs the dependency is told while it is down ("the message bus (NATS) is unreachable; retry shortly"). */
export function unavailableMessage(dependency: Dependency): string {
  return `${DEPENDENCY_NAMES[dependency]} is unreachable; retry shortly`;
}

/** The error a request that needs the dependency gets while it is down: UNAVAILABLE, retry after 1 s. */
export function dependencyUnavailableError(dependency: Dependency, cause?: unknown): UnavailableError {
  return new UnavailableError(unavailableMessage(dependency), { retryAfterSeconds: 1, cause });
}

/**
 * Why a node is not ready, naming every dependency given (at least one): "the
 * database (PostgreSQL) and the message bus (NATS) are unreachable".
 */
export function unreachableReason(dependencies: readonly Dependency[]): string {
  const names = dependencies.map((dependency) => DEPENDENCY_NAMES[dependency]);
  return names.length === 1 ? `${names[0]} is unreachable` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are unreachable`;
}

/** The reachability of the node's dependencies, as the API reads and reports it. */
export interface DependencyHealthPort {
  /** True unless the dependency is tracked and down. */
  isUp(dependency: Dependency): boolean;
  /** The tracked dependencies that are down now. */
  unavailable(): Dependency[];
  /** Reports the dependency unreachable (the first report of an outage logs its one warning). */
  down(dependency: Dependency, cause?: unknown): void;
  /** The error a request that needs the dependency gets while it is down. */
  unavailableError(dependency: Dependency): UnavailableError;
  /** Why the node is not ready, naming every unreachable dependency; undefined when all are up. */
  unavailableReason(): string | undefined;
  /** Why the node can never serve again and must be restarted (a NATS connection closed for good); undefined while it can. */
  deadReason(): string | undefined;
}
