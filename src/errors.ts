// The one error hierarchy of agentrt. Domain code throws these; the HTTP edge maps
// `code` to a status (http/middleware/errors.ts). Nothing here knows about HTTP.

/** gRPC status code names used by the Status body, with their numeric values. */
export const StatusCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type StatusCode = keyof typeof StatusCode;

/** One field problem, reported in a google.rpc.BadRequest detail. */
export interface FieldViolation {
  field: string;
  description: string;
}

export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

export interface ApiErrorOptions {
  cause?: unknown;
  details?: Array<Record<string, unknown>>;
  /** Seconds a client should wait before retrying (RESOURCE_EXHAUSTED, UNAVAILABLE). */
  retryAfterSeconds?: number;
}

/** An error whose message is safe to show to the client. */
export class ApiError extends Error {
  readonly code: StatusCode;
  readonly details: Array<Record<string, unknown>>;
  readonly retryAfterSeconds?: number;

  constructor(code: StatusCode, message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.details = options.details ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The Status body of the contract: `{code, message, details}`. */
  toStatus(): { code: number; message: string; details: Array<Record<string, unknown>> } {
    return { code: StatusCode[this.code], message: this.message, details: this.details };
  }
}

function badRequestDetails(violations: FieldViolation[]): Array<Record<string, unknown>> {
  return violations.length ? [{ '@type': BAD_REQUEST_TYPE, fieldViolations: violations }] : [];
}

/** Bad input. Name the field whenever there is one. */
export class InvalidArgumentError extends ApiError {
  readonly fieldViolations: FieldViolation[];
  constructor(message: string, violations: FieldViolation[] = [], options: ApiErrorOptions = {}) {
    super('INVALID_ARGUMENT', message, { ...options, details: badRequestDetails(violations) });
    this.name = 'InvalidArgumentError';
    this.fieldViolations = violations;
  }

  /** The common case: one field, one description; the message names the field. */
  static forField(field: string, description: string): InvalidArgumentError {
    return new InvalidArgumentError(`${field}: ${description}`, [{ field, description }]);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('NOT_FOUND', message, options);
    this.name = 'NotFoundError';
  }

  /** "agent agent_01H... not found": the standard wording for a missing resource. */
  static resource(kind: string, id: string): NotFoundError {
    return new NotFoundError(`${kind} ${id} not found`);
  }
}

export class AlreadyExistsError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('ALREADY_EXISTS', message, options);
    this.name = 'AlreadyExistsError';
  }
}

export class FailedPreconditionError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('FAILED_PRECONDITION', message, options);
    this.name = 'FailedPreconditionError';
  }
}

export class AbortedError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('ABORTED', message, options);
    this.name = 'AbortedError';
  }
}

export class ResourceExhaustedError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('RESOURCE_EXHAUSTED', message, options);
    this.name = 'ResourceExhaustedError';
  }
}

export class UnauthenticatedError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('UNAUTHENTICATED', message, options);
    this.name = 'UnauthenticatedError';
  }
}

export class PermissionDeniedError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('PERMISSION_DENIED', message, options);
    this.name = 'PermissionDeniedError';
  }
}

export class UnavailableError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('UNAVAILABLE', message, options);
    this.name = 'UnavailableError';
  }
}

export class DeadlineExceededError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('DEADLINE_EXCEEDED', message, options);
    this.name = 'DeadlineExceededError';
  }
}

/** The operation exists in no form the request can reach (at the HTTP edge: a method a known path does not serve). */
export class UnimplementedError extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super('UNIMPLEMENTED', message, options);
    this.name = 'UnimplementedError';
  }
}

export class InternalError extends ApiError {
  constructor(message = 'internal error', options: ApiErrorOptions = {}) {
    super('INTERNAL', message, options);
    this.name = 'InternalError';
  }
}

/**
 * Normalises anything thrown into an ApiError at a boundary (HTTP, actor mailbox,
 * bus handler). Unknown errors become INTERNAL with a generic message, so no
 * driver text (which may hold data) ever reaches a client.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new InternalError('internal error', { cause: error });
}
