// Translates Postgres driver errors into domain errors by constraint name
// (migrations name every constraint), so no driver text reaches a client.
import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, toApiError, type ApiError } from '../../src/errors';

const UNIQUE_MESSAGES: Record<string, string> = {
  uq_profiles_user_email: 'a user profile with this email already exists in the account',
  uq_workspace_members_profile: 'the profile is already a member of the workspace',
};

/** Messages for unique constraints added by later areas register here. */
export function registerUniqueMessage(constraint: string, message: string): void {
  UNIQUE_MESSAGES[constraint] = message;
}

interface DriverError {
  code?: string;
  constraint?: string;
  driverError?: { code?: string; constraint?: string };
}

/** Maps 23505 (unique) and 23503 (foreign key) to ALREADY_EXISTS / FAILED_PRECONDITION. */
export function translateDriverError(error: unknown): ApiError | unknown {
  const driver = (error as DriverError)?.driverError ?? (error as DriverError);
  if (driver?.code === '23505') {
    const message = (driver.constraint && UNIQUE_MESSAGES[driver.constraint]) ?? 'the resource already exists';
    return new AlreadyExistsError(message, { cause: error });
  }
  // Text Postgres cannot store (a NUL character) that slipped past the edge check.
  if (driver?.code === '22021' || driver?.code === '22P05') {
    return new InvalidArgumentError('a text value contains characters that cannot be stored (NUL)', [], { cause: error });
  }
  if (driver?.code === '23503') {
    return new FailedPreconditionError('the resource is referenced by, or refers to, another resource', { cause: error });
  }
  return error;
}

/** Like translateDriverError, but always an ApiError (INTERNAL for the unknown). */
export function driverErrorToApiError(error: unknown): ApiError {
  return toApiError(translateDriverError(error));
}
