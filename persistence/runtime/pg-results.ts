// Driver helpers for the runtime's repositories: recognises a unique
// violation on one of our named constraints and a broken database connection,
// unwraps UPDATE … RETURNING rows.
import { BusUnavailableError } from '../../src/ports/bus';
import { PublisherUnavailableError } from '../../src/ports/event-publisher';

/** True when `error` is pg's 23505 (unique violation) on `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driver = (error as { driverError?: unknown })?.driverError ?? error;
  const fields = driver as { code?: string; constraint?: string };
  return fields?.code === '23505' && fields.constraint === constraint;
}

// 57P01-03: the server ends sessions (shutdown, crash, "starting up / shutting down"); 53300: it refuses new
// sessions (too many clients). A retry soon may work for all of them.
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// What pg and pg-pool throw without a code: a connection ended under a query, a pool's connect timing out,
// a client reused after its connection broke.
const CONNECTION_MESSAGES = /^Connection terminated|^timeout exceeded when trying to connect|is not queryable$/;
// The message bus's errors carry socket errors too (nats.js's ConnectionError has the ECONNREFUSED of port 4222
// as its cause): they never mean that the database is away. nats.js's error names (nats-core's errors.ts and
// jetstream's jserrors.ts; test/unit/connection-failures.test.ts checks every one of them), by name because
// persistence/ does not depend on the NATS client.
const NATS_ERROR_NAMES = new Set([
  'ClosedConnectionError', 'DrainingConnectionError', 'ConnectionError', 'ProtocolError', 'RequestError', 'TimeoutError',
  'NoResponders', 'AuthorizationError', 'UserAuthenticationExpiredError', 'PermissionViolationError',
  'JetStreamError', 'JetStreamStatusError', 'JetStreamApiError', 'JetStreamNotEnabled', 'ConsumerNotFoundError', 'StreamNotFoundError',
]);

function isMessageBusError(error: object): boolean {
  if (error instanceof BusUnavailableError || error instanceof PublisherUnavailableError) return true;
  return error instanceof Error && NATS_ERROR_NAMES.has(error.name);
}

/**
 * True when a statement failed because its connection broke or the server
 * ended or refused it (SQLSTATE class 08, 57P01-03, 53300, a socket error,
 * pg's "Connection terminated", a pool connect timeout): the transaction may or
 * may not have committed. Looks through TypeORM's driverError, `cause` chains
 * and the attempts of an AggregateError (a host name with several addresses),
 * but not into the message bus's errors (NATS's outage is not Postgres's).
 */
export function isPostgresConnectionFailure(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > 5 || isMessageBusError(error)) return false;
  const fields = error as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof fields.code === 'string' ? fields.code : '';
  if (code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || CONNECTION_ERRNOS.has(code)) return true;
  if (typeof fields.message === 'string' && CONNECTION_MESSAGES.test(fields.message)) return true;
  if (Array.isArray(fields.errors) && fields.errors.some((inner) => isPostgresConnectionFailure(inner, depth + 1))) return true;
  return isPostgresConnectionFailure(fields.driverError, depth + 1) || isPostgresConnectionFailure(fields.cause, depth + 1);
}

/** Rows of an `UPDATE … RETURNING`: TypeORM's postgres driver answers `[rows, affectedCount]` for UPDATE and DELETE. */
export function returnedRows<Row>(result: unknown): Row[] {
  const pair = result as [Row[], number];
  return Array.isArray(pair[0]) ? pair[0] : (result as Row[]);
}
