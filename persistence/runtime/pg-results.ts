// Driver helpers for the runtime's repositories: recognises a unique
// violation on one of our named constraints and a broken connection, unwraps
// UPDATE … RETURNING rows.

/** True when `error` is pg's 23505 (unique violation) on `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driver = (error as { driverError?: unknown })?.driverError ?? error;
  const fields = driver as { code?: string; constraint?: string };
  return fields?.code === '23505' && fields.constraint === constraint;
}

const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const CONNECTION_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT']);

/**
 * True when a statement failed because its connection broke or the server
 * ended it (SQLSTATE class 08, 57P01-03, a socket error, pg's "Connection
 * terminated"): the transaction may or may not have committed.
 */
export function isConnectionFailure(error: unknown): boolean {
  const driver = (error as { driverError?: unknown })?.driverError ?? error;
  const fields = driver as { code?: unknown; message?: unknown };
  const code = typeof fields?.code === 'string' ? fields.code : '';
  if (code.startsWith('08') || CONNECTION_SQLSTATES.has(code) || CONNECTION_ERRNOS.has(code)) return true;
  return typeof fields?.message === 'string' && /^Connection terminated/.test(fields.message);
}

/** Rows of an `UPDATE … RETURNING`: TypeORM's postgres driver answers `[rows, affectedCount]` for UPDATE and DELETE. */
export function returnedRows<Row>(result: unknown): Row[] {
  const pair = result as [Row[], number];
  return Array.isArray(pair[0]) ? pair[0] : (result as Row[]);
}
