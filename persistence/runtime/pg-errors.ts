// Postgres failures as Status errors: a statement that failed because the
// database went away answers UNAVAILABLE naming it, with Retry-After, rather
// than INTERNAL. The HTTP error middleware asks it; it writes no response.
import type { UnavailableError } from '../../src/errors';
import { dependencyUnavailableError, type DependencyHealthPort } from '../../src/ports/dependency-health';
import { isPostgresConnectionFailure } from './pg-results';

/**
 * The Status error for a failure a lost database connection caused
 * (isPostgresConnectionFailure): UNAVAILABLE naming the database, a retry
 * soon may work. With `health`, the outage is reported to it first (its probe
 * tells when the database is back) and its wording answers.
 * @returns undefined for any other failure
 */
export function postgresUnavailableError(error: unknown, health?: DependencyHealthPort): UnavailableError | undefined {
  if (!isPostgresConnectionFailure(error)) return undefined;
  health?.down('postgres', error);
  return health?.unavailableError('postgres') ?? dependencyUnavailableError('postgres');
}
